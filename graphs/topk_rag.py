"""``topk_rag``: retrieve the top-k pages of the primary document, then read them once.

Pages go to the reader in rank order or re-sorted into page order (``order``), recorded in the
trajectory's metadata and retrieve step. Cited documents of cross-paper items are added whole.
A retriever failure ends the item with ``retriever_error``; a prompt too long for the model
drops the worst-ranked pages first.
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from scanrag.agents import baseline
from scanrag.agents.scope import AtLeastOne, ReaderParams
from scanrag.graphs.base import Builder, GraphStrategy, linear_graph
from scanrag.protocols import RunSettings


class TopKParams(ReaderParams):
    """How many pages to retrieve and in which order to read them (then the reader's
    parameters)."""

    k: AtLeastOne = 5
    order: baseline.Order = "rank"


class TopKRagStrategy(GraphStrategy):
    """Retrieves ``k`` pages for the question and reads them in ``order`` (rank or page)."""

    name: ClassVar[str] = "topk_rag"
    params_class: ClassVar[type[ReaderParams]] = TopKParams
    parameters: TopKParams
    promise: ClassVar[str] = "the k best-ranked pages, whole"

    def caps(self, settings: RunSettings) -> dict[str, int]:
        """The page cap counts when it is below ``k``."""
        out = super().caps(settings)
        p = self.parameters
        cap = p.page_cap if p.page_cap is not None else settings.max_pages
        if cap and cap < p.k:
            out = {"pages": cap, **out}
        return out

    def build(self) -> Builder:
        """prepare → retrieve → read."""
        p = self.parameters
        retrieve = partial(baseline.retrieve_topk, k=p.k, order=p.order)
        return linear_graph(p, [("retrieve", retrieve), ("read", baseline.read_ranked)])
