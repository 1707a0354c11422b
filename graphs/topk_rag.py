"""``topk_rag``: retrieve the top-k pages of the primary document, then read them once.

Pages go to the reader in rank order or re-sorted into page order (``order``), recorded in the
trajectory's metadata and retrieve step. Cited documents of cross-paper items are added whole.
A retriever failure ends the item with ``retriever_error``; a prompt too long for the model
drops the worst-ranked pages first.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agents import baseline
from agents.common import add_step
from agents.scope import Scope
from graphs.base import GraphStrategy, LinearState, linear_graph


class TopKRagStrategy(GraphStrategy):
    name: ClassVar[str] = "topk_rag"

    def __init__(self, *, k: int = 5, order: str = "rank", **reader: Any) -> None:
        super().__init__(**reader)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if order not in baseline.ORDERS:
            raise ValueError(f"order must be one of {baseline.ORDERS}, got {order!r}")
        self.k = k
        self.order: baseline.Order = order  # type: ignore[assignment]

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "order": self.order, **super().params()}

    def build(self, scope: Scope) -> Any:
        k = min(self.k, scope.page_cap) if scope.page_cap else self.k

        async def retrieve(state: LinearState) -> dict[str, Any]:
            hits = baseline.retrieve(scope, scope.sample.question, k)
            if hits is None:
                return {"stop": True}
            refs = baseline.topk_pages(scope, hits, self.order)
            ranks = {h.page: h.rank for h in hits}
            add_step(
                scope.trajectory,
                "retrieve",
                {
                    "query": scope.sample.question,
                    "k": k,
                    "order": self.order,
                    "hits": baseline.hit_record(hits),
                    "read_order": [r.number for r in refs],
                },
            )
            cited = scope.cited_refs()
            priority = [ranks[r.number] for r in refs] + [0] * len(cited)
            return {"refs": refs + cited, "priority": priority}

        async def read(state: LinearState) -> dict[str, Any]:
            await scope.read(state["refs"], fallback="drop", priority=state["priority"])
            return {}

        return linear_graph(scope, [("retrieve", retrieve), ("read", read)])
