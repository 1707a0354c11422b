"""Why a score row holds no value, and how many rows of a scorer failed, by cause.

A failed row (``judge_error``, ``judge_parse_error``, ``render_failed``, ``scorer_error``) is
left out of every metric and counted as excluded. Its cause (one of
:data:`~scanrag.evaluation.schemas.FAILURE_CAUSES`) is the cause of its first failed judge
record, which the judge call sets when it fails (:mod:`scanrag.evaluation.judging`); rows
written before causes were recorded get theirs from their status and error text. A row that
failed while its judge calls succeeded (the official profile reads each gold item's label
from one reply: a reply without them fails the items) failed on ``parse``, or on ``length``
when that reply hit its token cap.

:func:`failure_counts` counts a scorer's rows in one grid cell: the items it judged, those
that failed, and the failed ones by cause — what summaries, the report, exports and the
commands' stderr show, and what ``scanrag score`` / ``scanrag run`` exit 5 on (every item a
scorer judged failed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from scanrag.evaluation.schemas import (
    FAILURE_CAUSES,
    FailureCause,
    FailureCounts,
    JudgeRecord,
    ScoreRow,
)

NOT_SENT = "not sent"  # the prefix of a record's error when the request was refused unsent
CAUSE_WORDS: dict[str, str] = {
    "parse": "reply not readable",
    "length": "reply cut at its token cap",
    "transport": "call failed",
    "not_sent": "not sent (prompt too long for the judge's context)",
    "render": "page image not rendered",
    "scorer": "scorer raised",
}


def record_cause(record: JudgeRecord) -> FailureCause | None:
    """Why ``record`` failed (``None`` when it did not)."""
    if not record.failed:
        return None
    if record.cause is not None:
        return record.cause
    if record.status == "render_failed":
        return "render"
    if record.status == "judge_parse_error":
        return "length" if record.finish_reason == "length" else "parse"
    return "not_sent" if (record.error or "").startswith(NOT_SENT) else "transport"


def row_cause(row: ScoreRow) -> FailureCause | None:
    """Why ``row`` failed (``None`` for a row that did not fail)."""
    if not row.failed:
        return None
    if row.status == "scorer_error":
        return "scorer"
    if row.status == "render_failed":
        return "render"
    for record in row.judges:
        cause = record_cause(record)
        if cause is not None:
            return cause
    if any(r.finish_reason == "length" for r in row.judges):
        return "length"
    return "parse" if row.status == "judge_parse_error" else "transport"


def judged(row: ScoreRow, has_judges: bool) -> bool:
    """Whether the scorer tried to judge (or, without judges, compute) ``row``'s item."""
    if row.failed:
        return True
    if not has_judges:
        return row.status != "skipped"
    return any(r.status != "skipped" for r in row.judges)


def failure_counts(rows: Iterable[ScoreRow], has_judges: bool) -> FailureCounts:
    """The items of one scorer (one grid cell's rows) it judged, failed, and why."""
    rows = list(rows)
    causes: Counter[str] = Counter(c for r in rows if (c := row_cause(r)) is not None)
    return FailureCounts(
        judged=sum(1 for r in rows if judged(r, has_judges)),
        failed=sum(causes.values()),
        causes={c: causes[c] for c in FAILURE_CAUSES if causes[c]},
    )


def causes_text(causes: Mapping[str, int]) -> str:
    """``parse 2, length 1`` (in the order of :data:`FAILURE_CAUSES`)."""
    return ", ".join(f"{c} {causes[c]}" for c in FAILURE_CAUSES if causes.get(c))


__all__ = [
    "CAUSE_WORDS",
    "causes_text",
    "failure_counts",
    "judged",
    "record_cause",
    "row_cause",
]
