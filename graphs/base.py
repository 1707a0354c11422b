"""Shared wiring of the strategy graphs and the ``Strategy`` wrapper around them.

``GraphStrategy.run`` never raises for a per-item failure: a missing document, a retriever
error or a model error ends as a trajectory status; anything unexpected becomes
``internal_error`` with its message. Node logic lives in ``agents``; this package only wires.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar, TypedDict

from langgraph.graph import END, START, StateGraph

from agents import routing
from agents.common import new_trajectory
from agents.context import PageRef
from agents.prompts.reader import PROMPT_HASH as READER_PROMPTS
from agents.prompts.reader import reader_prompt
from agents.scope import ReaderParams, Scope
from scanrag.llm.types import ModelError
from scanrag.protocols import StrategyContext
from scanrag.schemas import Sample, Status, Trajectory

# Node callables are typed loosely: LangGraph's add_node overloads want its own protocols.
Node = Any


class LinearState(TypedDict, total=False):
    stop: bool
    refs: list[PageRef]
    priority: list[int]
    extra: str


class GraphStrategy:
    """Base of every strategy: reader parameters, ``describe`` and a failure-proof ``run``."""

    name: ClassVar[str] = "graph"

    def __init__(
        self,
        *,
        output: str = "citations",
        modality: str = "text",
        page_cap: int | None = None,
        max_images: int | None = None,
        max_chars_per_page: int | None = None,
        max_tokens: int = 1024,
        context_tokens: int | None = None,
        block_boxes: bool = True,
        temperature: float = 0.0,
    ) -> None:
        self.reader = ReaderParams(
            output=output,
            modality=modality,
            page_cap=page_cap,
            max_images=max_images,
            max_chars_per_page=max_chars_per_page,
            max_tokens=max_tokens,
            context_tokens=context_tokens,
            block_boxes=block_boxes,
            temperature=temperature,
        )

    # -- description -------------------------------------------------------------------------

    def params(self) -> dict[str, Any]:
        return self.reader.as_dict()

    def prompt_hashes(self) -> dict[str, str]:
        return {
            "reader": reader_prompt(self.reader.output, "qa").hash,
            "reader_prompts": READER_PROMPTS,
        }

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "params": self.params(), "prompt_hashes": self.prompt_hashes()}

    # -- running -----------------------------------------------------------------------------

    async def run(self, sample: Sample, ctx: StrategyContext) -> Trajectory:
        trajectory = new_trajectory(self.name, sample)
        scope = Scope(sample=sample, ctx=ctx, trajectory=trajectory, params=self.reader)
        started = time.perf_counter()
        try:
            trajectory = await self.execute(scope)
        except ModelError as exc:
            scope.trajectory.fail(Status.MODEL_ERROR, str(exc))
            trajectory = scope.trajectory
        except Exception as exc:  # never let one item take the run down
            scope.trajectory.fail(Status.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            trajectory = scope.trajectory
        trajectory.timings["total"] = round(time.perf_counter() - started, 4)
        return trajectory

    async def execute(self, scope: Scope) -> Trajectory:
        graph = self.build(scope)
        await graph.ainvoke({"stop": False})
        return scope.trajectory

    def build(self, scope: Scope) -> Any:
        raise NotImplementedError


def prepare_node(scope: Scope) -> Node:
    async def prepare(state: LinearState) -> dict[str, Any]:
        return {"stop": not scope.prepare()}

    return prepare


def linear_graph(scope: Scope, steps: Sequence[tuple[str, Node]]) -> Any:
    """``prepare`` then ``steps`` in order; any step that sets ``stop`` ends the run."""
    graph = StateGraph(LinearState)
    names = ["prepare", *(name for name, _ in steps)]
    graph.add_node("prepare", prepare_node(scope))
    for name, node in steps:
        graph.add_node(name, node)
    graph.add_edge(START, "prepare")
    for current, following in zip(names, [*names[1:], END], strict=True):
        if following is END:
            graph.add_edge(current, END)
            continue
        graph.add_conditional_edges(
            current,
            _stop_router,
            {routing.PROCEED: following, routing.FINISH: END},
        )
    return graph.compile()


def _stop_router(state: LinearState) -> str:
    return routing.after_prepare(bool(state.get("stop")))
