"""DocScope's cumulative oracle study: gold pages; + gold region descriptions; + gold facts.

All three read with the same reader prompt as the other strategies; the region and fact levels
add a section before the question (its template hash is recorded as ``oracle_regions`` /
``oracle_facts``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from agents import baseline
from agents.prompts.oracle import FACTS_SECTION, REGIONS_SECTION
from agents.scope import Scope
from graphs.base import GraphStrategy, LinearState, linear_graph


class OraclePagesStrategy(GraphStrategy):
    name: ClassVar[str] = "oracle_pages"
    level: ClassVar[baseline.OracleLevel] = "pages"

    def prompt_hashes(self) -> dict[str, str]:
        hashes = super().prompt_hashes()
        if self.level in ("regions", "facts"):
            hashes["oracle_regions"] = REGIONS_SECTION.hash
        if self.level == "facts":
            hashes["oracle_facts"] = FACTS_SECTION.hash
        return hashes

    def build(self, scope: Scope) -> Any:
        async def select(state: LinearState) -> dict[str, Any]:
            refs = baseline.oracle_pages(scope)
            return {"refs": refs, "extra": baseline.oracle_extra(scope, self.level)}

        async def read(state: LinearState) -> dict[str, Any]:
            await scope.read(state["refs"], fallback="truncate", extra=state.get("extra", ""))
            return {}

        return linear_graph(scope, [("select", select), ("read", read)])


class OracleRegionsStrategy(OraclePagesStrategy):
    name: ClassVar[str] = "oracle_regions"
    level: ClassVar[baseline.OracleLevel] = "regions"


class OracleFactsStrategy(OraclePagesStrategy):
    name: ClassVar[str] = "oracle_facts"
    level: ClassVar[baseline.OracleLevel] = "facts"
