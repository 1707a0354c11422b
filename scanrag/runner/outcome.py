"""How a run went: why a session stopped early, the items that failed, the exit code.

A session that stops before the run is done says why with a :class:`Stop`: its kind
(:class:`StopKind`) sets the exit code, its message is what ``summary.json`` and the log
record. Exit codes of a stopped session: ``3`` the budget is spent, ``4`` the disk is full,
``130`` Ctrl-C; an incomplete run without a stop (pairs left unscored) exits ``1``.

Every item whose status is not ``ok`` counts as failed here (model, input, retriever and
internal errors, unparsed or truncated replies, budget stops). At the end of ``scanrag run``
the report lists them by status, with the first message of each status, so a dead endpoint
never passes for a weak model. Exit codes of a complete run:

- ``5`` (:data:`ALL_FAILED_EXIT`): every item of at least one grid cell failed, or every item
  a scorer judged in a cell failed (a judge that cannot answer, a scorer that raises on
  everything: :func:`judge_failures`; ``scanrag score`` exits 5 on the same condition);
- ``6`` (:data:`THRESHOLD_EXIT`): more than ``runner.fail_threshold`` of the run's items failed.

Judge failures are read from the summary (``summary.json``'s ``scoring.groups.<cell>.
judge_errors``: per scorer, the items judged, failed, and failed by cause — ``parse``,
``length``, ``transport``, ``not_sent``, ``render``, ``scorer``) and listed on stderr by
:func:`judge_failure_lines`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

ALL_FAILED_EXIT = 5
THRESHOLD_EXIT = 6
INCOMPLETE_EXIT = 1
MESSAGE_CHARS = 300


class StopKind(StrEnum):
    """Why a session stopped before the run was done."""

    BUDGET = "budget"
    DISK_FULL = "disk_full"
    INTERRUPTED = "interrupted"

    @property
    def exit_code(self) -> int:
        return _STOP_EXITS[self]


_STOP_EXITS = {StopKind.BUDGET: 3, StopKind.DISK_FULL: 4, StopKind.INTERRUPTED: 130}


@dataclass(frozen=True)
class Stop:
    """A stop: its kind and the message recorded for it."""

    kind: StopKind
    message: str

    def __str__(self) -> str:
        return self.message


def exit_code(complete: bool, stop: Stop | None, failure_code: int) -> int:
    """A complete run's ``failure_code`` (:meth:`Outcome.exit_code`), else its stop's code,
    else :data:`INCOMPLETE_EXIT`."""
    if complete:
        return failure_code
    return stop.kind.exit_code if stop is not None else INCOMPLETE_EXIT


@dataclass
class Outcome:
    """Counts of the run's items by status, and what they imply for the exit code."""

    total: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    first_message: dict[str, str] = field(default_factory=dict)
    all_failed_cells: list[str] = field(default_factory=list)
    threshold: float | None = None
    judge_failed: list[str] = field(default_factory=list)  # "cell: scorer", all judged failed

    @property
    def n_failed(self) -> int:
        return sum(self.failed.values())

    @property
    def failed_share(self) -> float:
        return self.n_failed / self.total if self.total else 0.0

    @property
    def over_threshold(self) -> bool:
        return self.threshold is not None and self.failed_share > self.threshold

    def exit_code(self) -> int:
        """0, :data:`ALL_FAILED_EXIT` or :data:`THRESHOLD_EXIT` (the first that applies)."""
        if self.all_failed_cells or self.judge_failed:
            return ALL_FAILED_EXIT
        return THRESHOLD_EXIT if self.over_threshold else 0

    def lines(self) -> list[str]:
        """The stderr report; empty when every item is ok and judged."""
        out = self._item_lines()
        if self.judge_failed:
            where = "; ".join(self.judge_failed)
            out.append(f"every judged item failed in: {where} (exit code {ALL_FAILED_EXIT})")
        return out

    def _item_lines(self) -> list[str]:
        if not self.n_failed:
            return []
        out = [f"not ok: {self.n_failed} of {self.total} item(s)"]
        for status, count in sorted(self.failed.items(), key=lambda kv: (-kv[1], kv[0])):
            message = self.first_message.get(status)
            out.append(f"  {status}: {count}" + (f"; first: {message}" if message else ""))
        if self.all_failed_cells:
            cells = ", ".join(self.all_failed_cells)
            out.append(f"every item failed in: {cells} (exit code {ALL_FAILED_EXIT})")
        elif self.over_threshold:
            out.append(
                f"{self.failed_share:.0%} of the items failed, above runner.fail_threshold="
                f"{self.threshold:g} (exit code {THRESHOLD_EXIT})"
            )
        return out


def judge_failures(summary: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(cell, scorer, counts)`` for every scorer with failed rows in a cell, from a
    summary's ``scoring`` detail (``counts``: ``judged``, ``failed``, ``causes``,
    ``all_failed``)."""
    groups = (summary.get("scoring") or {}).get("groups") or {}
    out = []
    for cell, group in groups.items():
        for scorer, counts in ((group or {}).get("judge_errors") or {}).items():
            if isinstance(counts, Mapping) and counts.get("failed"):
                out.append((str(cell), str(scorer), counts))
    return out


def judge_failure_lines(summary: Mapping[str, Any]) -> list[str]:
    """One stderr line per (cell, scorer) with failed judge or scorer rows: how many of the
    items it judged failed, by cause."""
    lines = []
    for cell, scorer, counts in judge_failures(summary):
        causes = ", ".join(f"{k} {v}" for k, v in (counts.get("causes") or {}).items())
        failed, judged = counts.get("failed"), counts.get("judged")
        share = (
            f"every judged item failed ({failed} of {judged})"
            if counts.get("all_failed")
            else f"{failed} of {judged} judged items failed"
        )
        lines.append(f"judge errors in {cell}, {scorer}: {share}: {causes}")
    return lines


def all_judged_failed(summary: Mapping[str, Any]) -> list[str]:
    """``cell: scorer`` for every scorer every judged item of which failed in that cell."""
    return [f"{c}: {s}" for c, s, counts in judge_failures(summary) if counts.get("all_failed")]


def _message(row: Mapping[str, Any]) -> str:
    errors = row.get("errors") or []
    text = str(errors[0]) if errors else ""
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def run_outcome(
    rows: Iterable[Mapping[str, Any]], run_keys: Sequence[str], threshold: float | None = None
) -> Outcome:
    """The outcome of trajectory ``rows`` (the last row per item wins) for the cells
    ``run_keys``; rows of other cells are ignored."""
    wanted = set(run_keys)
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in rows:
        key = (str(row.get("run_key")), str(row.get("sample_id")))
        if key[0] in wanted:
            latest[key] = row
    outcome = Outcome(total=len(latest), threshold=threshold)
    per_cell: dict[str, list[bool]] = {}
    for (run_key, _), row in latest.items():
        status = str(row.get("status") or "ok")
        ok = status == "ok"
        per_cell.setdefault(run_key, []).append(ok)
        if ok:
            continue
        outcome.failed[status] += 1
        if status not in outcome.first_message and (message := _message(row)):
            outcome.first_message[status] = message
    outcome.all_failed_cells = [
        key for key in run_keys if per_cell.get(key) and not any(per_cell[key])
    ]
    return outcome


__all__ = [
    "ALL_FAILED_EXIT",
    "INCOMPLETE_EXIT",
    "THRESHOLD_EXIT",
    "Outcome",
    "Stop",
    "StopKind",
    "all_judged_failed",
    "exit_code",
    "judge_failure_lines",
    "judge_failures",
    "run_outcome",
]
