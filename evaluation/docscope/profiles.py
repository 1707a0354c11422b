"""Scoring profiles of the DocScope scorers: ``paper`` (the default) and ``official``.

* ``paper`` follows the paper's definitions (spec §2): stage metrics on answerable items,
  inference errors scored as wrong, a validity gate before the region judge, citation-scoped
  evidence units for the fact judge, rule shortcuts before the answer judge, de-duplicated
  predicted boxes and strict/lenient capped-precision F1.
* ``official`` reproduces the populations and policies of DocScope's released scorers
  (``code/eval/score_*.py``, ``scripts/summarize_eval.py``); see ``docs/docscope-scoring.md``
  for every difference.

A scorer takes ``profile`` as a parameter (``scoring.params: {pages: {profile: official}}``),
and every DocScope scorer is also registered a second time as ``<name>_official`` with the
official profile fixed, so both profiles can be scored side by side in one run. Each row
says which profile made it (``details["profile"]``) and each aggregate says which profile
it summarises (table ``profile``). The profile attribute is stored on a scorer only when it
differs from the class default, so adding profiles left the rows' bases (and so existing
score files) unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from evaluation.base import RowGroup, Scorer
from evaluation.schemas import AggregateResult, ScoreRow

S = TypeVar("S", bound=type[Scorer])

Profile = Literal["paper", "official"]
PAPER: Profile = "paper"
OFFICIAL: Profile = "official"
PROFILES: tuple[str, ...] = (PAPER, OFFICIAL)
OFFICIAL_SUFFIX = "_official"


def check_profile(value: object) -> Profile:
    if value == PAPER:
        return PAPER
    if value == OFFICIAL:
        return OFFICIAL
    raise ValueError(f"unknown scoring profile {value!r}; known profiles: {', '.join(PROFILES)}")


def apply_profile(scorer: Any, profile: object) -> None:
    """Set ``scorer.profile`` (only when it differs from its class's, see the module doc).

    A class that fixes its profile (``<name>_official``) refuses another one.
    """
    chosen = check_profile(profile)
    fixed: Profile = type(scorer).profile
    if getattr(type(scorer), "fixed_profile", False) and chosen != fixed:
        base = scorer.name.removesuffix(OFFICIAL_SUFFIX)
        raise ValueError(
            f"scorer {scorer.name!r} always uses the {fixed} profile; "
            f"use {base!r} with profile: {chosen} instead"
        )
    if chosen != fixed:
        scorer.profile = chosen


def row_profile(row: ScoreRow) -> str:
    """The profile a row was scored with (rows written before profiles existed: paper)."""
    return str(row.details.get("profile", PAPER))


def rows_of_profile(rows: Sequence[ScoreRow], wanted: str) -> tuple[str, list[ScoreRow], int]:
    """The profile to summarise and its rows, plus how many rows of another profile were left
    out. Rows of a single profile are summarised as they are, whatever ``wanted`` says (the
    summary may build the scorer without the parameters it was scored with); a mixture keeps
    only ``wanted``."""
    found = {row_profile(r) for r in rows}
    if len(found) == 1:
        profile = found.pop()
        return profile, list(rows), 0
    kept = [r for r in rows if row_profile(r) == wanted]
    return wanted, kept, len(rows) - len(kept)


def stage_rows(group: RowGroup, stage: str, profile: str) -> dict[str, ScoreRow]:
    """Rows of ``stage`` made with ``profile``, from ``<stage>`` or ``<stage>_official``."""
    out: dict[str, ScoreRow] = {}
    for name in (stage, stage + OFFICIAL_SUFFIX):
        for sample_id, row in group.rows(name).items():
            if row_profile(row) == profile:
                out.setdefault(sample_id, row)
    return out


def aggregate_by_profile(
    rows: Sequence[ScoreRow],
    wanted: str,
    paper: Callable[[Sequence[ScoreRow]], AggregateResult],
    official: Callable[[Sequence[ScoreRow]], AggregateResult],
) -> AggregateResult:
    """Aggregate rows with the function of their profile (:func:`rows_of_profile`); the
    result's tables say which profile (``profile``) and how many rows were left out."""
    profile, kept, other = rows_of_profile(rows, wanted)
    result = official(kept) if profile == OFFICIAL else paper(kept)
    result.tables["profile"] = profile
    if other:
        result.tables["rows_of_other_profile"] = other
    return result


def official_twin(base: S, name: str) -> S:
    """``base`` with the official profile fixed, opt-in, registered as ``name``."""

    def init(self: Any, *args: Any, profile: Profile = OFFICIAL, **kwargs: Any) -> None:
        base.__init__(self, *args, profile=profile, **kwargs)  # type: ignore[call-arg]

    attributes = {
        "__doc__": f"``{base.name}`` with the official profile, under its own name.",
        "__module__": base.__module__,
        "__qualname__": name,
        "__init__": init,
        "name": name,
        "profile": OFFICIAL,
        "fixed_profile": True,
        "opt_in": True,
    }
    return type(name, (base,), attributes)  # type: ignore[return-value]
