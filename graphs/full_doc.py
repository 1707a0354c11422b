"""``full_doc``: the non-RAG baseline — the whole document (up to the page cap) in one read.

Graph: prepare → select → read. A prompt too long for the model falls back to truncating
every page (recorded as ``fallback`` steps).
"""

from __future__ import annotations

from typing import Any, ClassVar

from agents import baseline
from agents.scope import Scope
from graphs.base import GraphStrategy, LinearState, linear_graph


class FullDocStrategy(GraphStrategy):
    name: ClassVar[str] = "full_doc"

    def build(self, scope: Scope) -> Any:
        async def select(state: LinearState) -> dict[str, Any]:
            return {"refs": baseline.full_doc_pages(scope)}

        async def read(state: LinearState) -> dict[str, Any]:
            await scope.read(state["refs"], fallback="truncate")
            return {}

        return linear_graph(scope, [("select", select), ("read", read)])
