"""DocScope's cumulative oracle study: gold pages; + gold region descriptions; + gold facts.

All three read with the same reader prompt as the other strategies; the region and fact levels
add a section before the question (its template hash is recorded as ``oracle_regions`` /
``oracle_facts``). Graph: prepare → select → read.
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from scanrag.agents import baseline
from scanrag.agents.prompts.oracle import FACTS_SECTION, REGIONS_SECTION
from scanrag.graphs.base import Builder, GraphStrategy, linear_graph


class OraclePagesStrategy(GraphStrategy):
    """Reads the gold pages (the retrieval upper bound)."""

    name: ClassVar[str] = "oracle_pages"
    level: ClassVar[baseline.OracleLevel] = "pages"
    promise: ClassVar[str] = "the gold evidence pages, whole (and the injected gold evidence)"

    def prompt_hashes(self) -> dict[str, str]:
        """The reader's hashes plus the oracle sections this level injects."""
        hashes = super().prompt_hashes()
        if self.level in ("regions", "facts"):
            hashes["oracle_regions"] = REGIONS_SECTION.hash
        if self.level == "facts":
            hashes["oracle_facts"] = FACTS_SECTION.hash
        return hashes

    def build(self) -> Builder:
        """prepare → select → read."""
        select = partial(baseline.select_oracle, level=self.level)
        read = baseline.read_truncated
        return linear_graph(self.parameters, [("select", select), ("read", read)])


class OracleRegionsStrategy(OraclePagesStrategy):
    """Reads the gold pages with the gold regions described before the question."""

    name: ClassVar[str] = "oracle_regions"
    level: ClassVar[baseline.OracleLevel] = "regions"


class OracleFactsStrategy(OraclePagesStrategy):
    """Reads the gold pages with the gold regions and the gold facts before the question."""

    name: ClassVar[str] = "oracle_facts"
    level: ClassVar[baseline.OracleLevel] = "facts"
