"""``full_doc``: the non-RAG baseline — the whole document (up to the page cap) in one read.

Graph: prepare → select → read. A prompt too long for the model falls back to truncating
every page (recorded as ``fallback`` steps).
"""

from __future__ import annotations

from typing import ClassVar

from scanrag.agents import baseline
from scanrag.graphs.base import Builder, GraphStrategy, linear_graph


class FullDocStrategy(GraphStrategy):
    """Reads every page of the primary document (up to ``page_cap``) and the cited ones."""

    name: ClassVar[str] = "full_doc"
    promise: ClassVar[str] = "every page of the document (and of the cited ones), whole"
    page_capped: ClassVar[bool] = True

    def build(self) -> Builder:
        """prepare → select → read."""
        return linear_graph(
            self.parameters,
            [("select", baseline.select_full_doc), ("read", baseline.read_truncated)],
        )
