"""``scan``: map over every window of the primary document, then reduce into the answer.

Graph: prepare → select windows → map (one LangGraph ``Send`` per window, run concurrently up
to ``concurrency``) → reduce. The strategy for target-free error detection (ScholScan) and for
long-range aggregation; node logic is in ``agents.scan``.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, ClassVar, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agents import routing, scan
from agents.prompts.scan import map_prompt
from agents.scope import Scope
from graphs.base import GraphStrategy
from scanrag.schemas import Trajectory


class ScanState(TypedDict, total=False):
    stop: bool
    windows: list[list[int]]
    results: Annotated[list[dict[str, Any]], operator.add]


class WindowTask(TypedDict):
    index: int
    pages: list[int]


class ScanStrategy(GraphStrategy):
    name: ClassVar[str] = "scan"

    def __init__(
        self,
        *,
        window: int = 2,
        stride: int | None = None,
        max_windows: int | None = None,
        cited_docs_in: str = "map",
        map_max_tokens: int = 512,
        concurrency: int = 4,
        **reader: Any,
    ) -> None:
        super().__init__(**reader)
        self.scan = scan.ScanParams(
            window=window,
            stride=stride,
            max_windows=max_windows,
            cited_docs_in=cited_docs_in,
            map_max_tokens=map_max_tokens,
            concurrency=concurrency,
        )

    def params(self) -> dict[str, Any]:
        return {**self.scan.as_dict(), **super().params()}

    def prompt_hashes(self) -> dict[str, str]:
        return {**super().prompt_hashes(), "map": map_prompt(self.reader.output, "qa").hash}

    def build(self, scope: Scope) -> Any:
        p = self.scan

        async def prepare(state: ScanState) -> dict[str, Any]:
            if not scope.prepare():
                return {"stop": True}
            return {"windows": scan.plan_windows(scope, p)}

        def fan_out(state: ScanState) -> list[Send] | str:
            if routing.after_prepare(bool(state.get("stop"))) == routing.FINISH:
                return END
            return [
                Send("map", WindowTask(index=i, pages=pages))
                for i, pages in enumerate(state["windows"])
            ]

        async def map_node(task: WindowTask) -> dict[str, Any]:
            return {"results": [await scan.map_window(scope, task["index"], task["pages"], p)]}

        async def reduce_node(state: ScanState) -> dict[str, Any]:
            scan.order_map_steps(scope)
            await scan.reduce(scope, state.get("results", []), p)
            return {}

        graph = StateGraph(ScanState)
        graph.add_node("prepare", prepare)
        graph.add_node("map", map_node)  # type: ignore[arg-type]
        graph.add_node("reduce", reduce_node)
        graph.add_edge(START, "prepare")
        graph.add_conditional_edges("prepare", fan_out, ["map", END])
        graph.add_edge("map", "reduce")
        graph.add_edge("reduce", END)
        return graph.compile()

    async def execute(self, scope: Scope) -> Trajectory:
        graph = self.build(scope)
        await graph.ainvoke({"stop": False}, {"max_concurrency": self.scan.concurrency})
        return scope.trajectory
