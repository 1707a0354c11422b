"""Scoring profiles of the DocScope scorers, as data: ``paper`` (the default) and ``official``.

A :class:`Profile` lists what differs between two ways of scoring the same items; each
DocScope scorer is one class per metric that reads its profile's fields (never its name):

* ``paper`` follows the paper's definitions (spec §2): stage metrics on answerable items,
  inference errors scored as wrong, shortcuts decided without a judge (the region validity
  gate, a fact page with nothing cited, the answer rules), tolerant judge replies with one
  corrective retry, de-duplicated valid boxes and strict/lenient capped-precision F1. It is
  the lenient one of the two, and its summaries and reports say ``paper``.
* ``official`` reproduces DocScope's released evaluation code (``code/eval/score_*.py``,
  ``scripts/summarize_eval.py``): its populations, the reply as its parser reads it, exact
  judge replies with no second call, 2048-token judge calls and the summary blocks
  ``summarize_eval.py`` prints; see ``docs/docscope-scoring.md`` for every difference.

The judge scorers (``region``, ``fact``, ``answer`` and their ``_official`` twins) also take
``call_shape`` for the official profile: ``json`` (the default: ``response_format`` with the
open schema ``AnyReply`` and the configured seed and temperature) or ``official`` (the request
as the released scripts send it: no ``response_format``, no seed, ``max_completion_tokens``
2048, temperature 0 for the text judges and none for the region judge; a prose reply is the
``judge_parse_error`` the released code records).

A scorer takes ``profile`` as a parameter (``scoring.params: {pages: {profile: official}}``);
without one it scores each sample with its dataset's profile (``metadata["scoring_profile"]``,
set by a loader given ``profile: official``), else ``paper``. The names ``<scorer>_official``
are registry factories binding the official profile (see
:mod:`scanrag.evaluation.docscope.profiled`), so both profiles can be scored side by side in one
run. Each row says which profile made it (``details["profile"]``) and each aggregate says which
profile it summarizes (table ``profile``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scanrag.evaluation.base import RowGroup
from scanrag.evaluation.schemas import ScoreRow

PAPER_NAME = "paper"
OFFICIAL_NAME = "official"
OFFICIAL_SUFFIX = "_official"
CALL_SHAPES: tuple[str, ...] = ("json", "official")  # how an official-profile judge is called
SAMPLE_KEY = "scoring_profile"  # a sample's dataset profile (set by the loaders)
REPEAT_KEY = "repeat_of"  # a repeated infer record: the question id it repeats


@dataclass(frozen=True)
class Profile:
    """What one way of scoring DocScope items decides (each field is one difference)."""

    name: str
    label: str
    # -- population
    answerable_only: bool  # stage metrics (pages, regions, facts) on answerable items only
    skips_failed_inference: bool  # an item whose model call failed is left out (not wrong)
    scores_repeats: bool  # a repeated infer record of the same question is scored again
    scores_without_gold_pages: bool  # pages: an item without gold pages is scored (P=0, R=1)
    # -- what is read
    reads_reply: bool  # predictions as the released parser reads the reply, not our fields
    gold_as_released: bool  # gold from the benchmark row as the released scorers read it
    # -- judges
    shortcuts: bool  # validity gate, no-citation pages and answer rules decided without a call
    exact_replies: bool  # exact ids, labels and booleans, per box / fact; no second call
    judge_max_tokens: int | None  # None: the judge configuration's
    unanswerable_gold: str | None  # the gold the answer judge sees when unanswerable
    fact_reads: Literal["cited_units", "whole_reply"]
    # -- summaries
    page_edges: Literal["undefined", "released"]  # empty sets: None, or the released values
    region_headline: Literal["capped_f1", "label_rates"]
    summary_blocks: bool  # tables ``official_summary`` as ``summarize_eval.py`` prints them
    # -- the judge request (scorer parameter ``call_shape``; see official/view.py)
    call_shape: Literal["json", "official"] = "json"


PAPER = Profile(
    name=PAPER_NAME,
    label="paper (the paper's definitions, lenient judges)",
    answerable_only=True,
    skips_failed_inference=False,
    scores_repeats=False,
    scores_without_gold_pages=False,
    reads_reply=False,
    gold_as_released=False,
    shortcuts=True,
    exact_replies=False,
    judge_max_tokens=None,
    unanswerable_gold=None,
    fact_reads="cited_units",
    page_edges="undefined",
    region_headline="capped_f1",
    summary_blocks=False,
)

OFFICIAL = Profile(
    name=OFFICIAL_NAME,
    label="official (DocScope's released evaluation code)",
    answerable_only=False,
    skips_failed_inference=True,
    scores_repeats=True,
    scores_without_gold_pages=True,
    reads_reply=True,
    gold_as_released=True,
    shortcuts=False,
    exact_replies=True,
    judge_max_tokens=2048,  # every released judge call asks for at most 2048 tokens
    unanswerable_gold="Unanswerable",
    fact_reads="whole_reply",
    page_edges="released",
    region_headline="label_rates",
    summary_blocks=True,
)

PROFILES: dict[str, Profile] = {PAPER.name: PAPER, OFFICIAL.name: OFFICIAL}
ALIASES = {"lenient": PAPER_NAME}


def get_profile(value: object) -> Profile:
    """The profile named ``value`` (``lenient`` is the paper profile); ``ValueError`` lists
    the known names."""
    if isinstance(value, Profile):
        return value
    name = ALIASES.get(str(value), str(value)) if isinstance(value, str) else None
    if name in PROFILES:
        return PROFILES[name]
    known = ", ".join([*PROFILES, *ALIASES])
    raise ValueError(f"unknown scoring profile {value!r}; known profiles: {known}")


def sample_profile(metadata: dict[str, Any]) -> Profile | None:
    """The profile a sample's dataset asks for, if any (an unknown name counts as none)."""
    value = metadata.get(SAMPLE_KEY)
    try:
        return None if value is None else get_profile(value)
    except ValueError:
        return None


def row_profile(row: ScoreRow) -> str:
    """The profile a row was scored with (rows written before profiles existed: paper)."""
    return str(row.details.get("profile", PAPER_NAME))


def rows_of_profile(
    rows: Sequence[ScoreRow], wanted: str | None
) -> tuple[str, list[ScoreRow], int]:
    """The profile to summarize and its rows, plus how many rows of another profile were left
    out. Rows of a single profile are summarized as they are, whatever ``wanted`` says (the
    summary may build the scorer without the parameters it was scored with); a mixture keeps
    only ``wanted`` (``paper`` when the scorer names none)."""
    found = {row_profile(r) for r in rows}
    if len(found) <= 1:
        profile = found.pop() if found else (wanted or PAPER_NAME)
        return profile, list(rows), 0
    keep = wanted or PAPER_NAME
    kept = [r for r in rows if row_profile(r) == keep]
    return keep, kept, len(rows) - len(kept)


def stage_rows(group: RowGroup, stage: str, profile: str) -> dict[str, ScoreRow]:
    """Rows of ``stage`` made with ``profile``, from ``<stage>`` or ``<stage>_official``."""
    out: dict[str, ScoreRow] = {}
    for name in (stage, stage + OFFICIAL_SUFFIX):
        for sample_id, row in group.rows(name).items():
            if row_profile(row) == profile:
                out.setdefault(sample_id, row)
    return out
