"""``topk_rag``: retrieve the top-k pages of the primary document, then read them once.

Pages go to the reader in rank order or re-sorted into page order (``order``), recorded in the
trajectory's metadata and retrieve step. Cited documents of cross-paper items are added whole.
A retriever failure ends the item with ``retriever_error``; a prompt too long for the model
drops the worst-ranked pages first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from scanrag.agents import baseline
from scanrag.agents.scope import ReaderParams
from scanrag.graphs.base import Builder, GraphStrategy, linear_graph
from scanrag.protocols import RunSettings


@dataclass(frozen=True)
class TopKParams:
    """How many pages to retrieve and in which order to read them."""

    k: int = 5
    order: str = "rank"

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")
        if self.order not in baseline.ORDERS:
            raise ValueError(f"order must be one of {baseline.ORDERS}, got {self.order!r}")


class TopKRagStrategy(GraphStrategy):
    """Retrieves ``k`` pages for the question and reads them in ``order`` (rank or page)."""

    name: ClassVar[str] = "topk_rag"
    param_classes: ClassVar[tuple[Callable[..., Any], ...]] = (ReaderParams, TopKParams)
    promise: ClassVar[str] = "the k best-ranked pages, whole"

    def __init__(self, *, k: int = 5, order: str = "rank", **reader: Any) -> None:
        super().__init__(**reader)
        checked = TopKParams(k=k, order=order)
        self.k = checked.k
        self.order: baseline.Order = checked.order  # type: ignore[assignment]

    def params(self) -> dict[str, Any]:
        """``k``, ``order`` and the reader parameters."""
        return {"k": self.k, "order": self.order, **super().params()}

    def caps(self, settings: RunSettings) -> dict[str, int]:
        """The page cap counts when it is below ``k``."""
        out = super().caps(settings)
        cap = self.reader.page_cap if self.reader.page_cap is not None else settings.max_pages
        if cap and int(cap) < self.k:
            out = {"pages": int(cap), **out}
        return out

    def build(self) -> Builder:
        """prepare → retrieve → read."""
        retrieve = partial(baseline.retrieve_topk, k=self.k, order=self.order)
        return linear_graph(self.reader, [("retrieve", retrieve), ("read", baseline.read_ranked)])
