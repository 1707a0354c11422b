"""Item outcomes — correct, wrong, unanswered, error (by kind) — from one table of statuses.

Every consumer (score rows, summaries, the report's tables, viewer and exports) classifies an
item the same way:

* **error** — the trajectory ended in a status other than ``ok`` (:data:`STATUS_KINDS` says
  what each means; a status this table does not know, one a newer strategy records, is an
  error of its own kind);
* **unanswered** — the item ran to the end but gave no output for its task (no answer, verdict,
  issue or evidence chain);
* **correct** / **wrong** — the item's correctness score said so;
* **unscored** — none of the above is known (no correctness row, or its judge failed).

Errors keep their outputs (usually none) and are scored like any item, so in every metric over
all items they count as wrong — the benchmarks' convention; summaries show their number beside
each metric (``MetricSummary.errors``) so a low score made of failures is never mistaken for
wrong answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    CORRECT = "correct"
    WRONG = "wrong"
    UNANSWERED = "unanswered"
    ERROR = "error"
    UNSCORED = "unscored"


@dataclass(frozen=True)
class StatusKind:
    """What a trajectory status means for reporting."""

    status: str
    error: bool
    short: str  # a few letters for crowded tables
    meaning: str


STATUS_KINDS: dict[str, StatusKind] = {
    kind.status: kind
    for kind in (
        StatusKind("ok", False, "ok", "ran to the end"),
        StatusKind("unparsed", True, "parse", "the reply could not be read"),
        StatusKind("truncated", True, "trunc", "the reply hit the token limit before an answer"),
        StatusKind("model_error", True, "model", "the model call failed after its retries"),
        StatusKind("input_error", True, "input", "bad sample or document"),
        StatusKind("retriever_error", True, "retr", "the retriever failed"),
        StatusKind("budget_exhausted", True, "budget", "not run: the budget was spent"),
        StatusKind("internal_error", True, "internal", "a bug or crash in the pipeline"),
        StatusKind(
            "degraded",
            True,
            "degr",
            "input reduced below the strategy's promise (runner.on_degraded: fail)",
        ),
    )
}


def status_kind(status: str | None) -> StatusKind:
    """The table's entry for ``status``; an unknown status is an error of its own kind."""
    name = str(status or "ok")
    found = STATUS_KINDS.get(name)
    if found is not None:
        return found
    return StatusKind(name, True, name[:8], f"status {name!r} (recorded by a newer component)")


def is_error(status: str | None) -> bool:
    return status_kind(status).error


def error_counts(statuses: Iterable[str | None]) -> dict[str, int]:
    """Error statuses among ``statuses``, counted by kind (most frequent first)."""
    counts = Counter(str(s) for s in statuses if is_error(s))
    return dict(counts.most_common())


def gave_output(trajectory: Any) -> bool:
    """True when a trajectory holds its task's output: an answer, a verdict, reported issues
    or an evidence chain."""
    answer = getattr(trajectory, "answer", None)
    return bool(
        (answer or "").strip()
        or getattr(trajectory, "verdict", None) is not None
        or getattr(trajectory, "issues", None)
        or getattr(trajectory, "evidence_chain", None)
    )


def item_outcome(status: str | None, answered: bool | None, correct: bool | None) -> Outcome:
    """The outcome of one item from its status, whether it answered, and its correctness."""
    if is_error(status):
        return Outcome.ERROR
    if answered is False:
        return Outcome.UNANSWERED
    if correct is None:
        return Outcome.UNSCORED
    return Outcome.CORRECT if correct else Outcome.WRONG
