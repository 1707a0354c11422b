"""Sections injected by the oracle strategies (DocScope's cumulative oracle study).

``oracle_regions`` adds a description of every gold box; ``oracle_facts`` adds the gold atomic
facts as well. The reader prompt itself is unchanged, as the study requires.
"""

from __future__ import annotations

from scanrag.agents.prompts.base import Prompt, module_hash

REGIONS_SECTION = Prompt(
    name="oracle.regions",
    system="",
    user="""Known evidence locations. These regions of the pages above hold the evidence; cite
them with the page and box given here:
$items

""",
)

FACTS_SECTION = Prompt(
    name="oracle.facts",
    system="",
    user="""Known facts. These statements were read from the evidence regions:
$items

""",
)

PROMPT_HASH = module_hash(REGIONS_SECTION, FACTS_SECTION)
