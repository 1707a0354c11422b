"""``scan``: map over every window of the primary document, then reduce into the answer.

Graph: prepare → map (one LangGraph ``Send`` per window, run concurrently up to
``concurrency``) → reduce. The strategy for target-free error detection (ScholScan) and for
long-range aggregation; node logic is in ``scanrag.agents.scan``. Each map node writes on a
trajectory of its own and returns it with its result (``results`` accumulates them); the
reduce node folds them into the item's trajectory in window order.
"""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from scanrag.agents import routing, scan
from scanrag.agents.common import new_trajectory
from scanrag.agents.prompts.scan import map_prompt
from scanrag.agents.scan import MapReduceState, WindowTask
from scanrag.agents.scope import ItemContext, ReaderParams, Scope
from scanrag.graphs.base import (
    Builder,
    GraphStrategy,
    Node,
    NodeFailedError,
    edge,
    node,
    open_scope,
)
from scanrag.protocols import RunSettings
from scanrag.tasks import DEFAULT_TASK, task_spec


def fan_out(state: MapReduceState) -> list[Send] | str:
    """One ``map`` task per window (each with the trajectory so far), or the end when the
    item stopped in ``prepare``."""
    if routing.after_prepare(bool(state.get("stop"))) == routing.FINISH:
        return END
    return [
        Send("map", {"window": WindowTask(index=i, pages=pages), "trajectory": state["trajectory"]})
        for i, pages in enumerate(state["windows"])
    ]


def map_node(p: scan.ScanParams) -> Node:
    """The map node: one window on a fresh trajectory of its own (``scanrag.agents.scan.map_task``).
    A failure carries the trajectory so far with what the window had recorded."""

    async def map_window(state: MapReduceState, runtime: Runtime[ItemContext]) -> dict[str, Any]:
        base = open_scope(state, runtime, p)
        own = Scope(base.item, new_trajectory(base.trajectory.strategy, base.sample), p)
        try:
            return await scan.map_task(own, state, p)
        except Exception as exc:
            scan.merge_records(base.trajectory, [own.trajectory])
            raise NodeFailedError("map", base.trajectory) from exc

    return map_window


class ScanStrategy(GraphStrategy):
    """Reads the document window by window (map), then answers from the notes (reduce)."""

    name: ClassVar[str] = "scan"
    params_class: ClassVar[type[ReaderParams]] = scan.ScanParams
    parameters: scan.ScanParams
    promise: ClassVar[str] = "every window of the document, each whole, and all their notes"

    def prompt_hashes(self) -> dict[str, str]:
        """The reader's hashes plus the map prompt's."""
        return {
            **super().prompt_hashes(),
            "map": map_prompt(self.parameters.output, task_spec(DEFAULT_TASK)).hash,
        }

    def caps(self, settings: RunSettings) -> dict[str, int]:
        """The reader's caps and ``max_windows``."""
        out = super().caps(settings)
        if self.parameters.max_windows is not None:
            out["windows"] = self.parameters.max_windows
        return out

    def build(self) -> Builder:
        """prepare → map × windows → reduce."""
        p = self.parameters
        graph: Builder = StateGraph(MapReduceState, context_schema=ItemContext)
        graph.add_node("prepare", node("prepare", p, partial(scan.prepare, p=p)))
        graph.add_node("map", map_node(p))
        graph.add_node("reduce", node("reduce", p, partial(scan.reduce_windows, p=p)))
        graph.add_edge(START, "prepare")
        graph.add_conditional_edges("prepare", edge(fan_out), ["map", END])
        graph.add_edge("map", "reduce")
        graph.add_edge("reduce", END)
        return graph

    def run_config(self) -> RunnableConfig:
        """Map windows run ``concurrency`` at a time."""
        return {"max_concurrency": self.parameters.concurrency}
