"""Degraded items: gold pages their reductions left out, ``runner.on_degraded``, and how a
run reports them (``summary.json`` counts per cell, the lines at the end of ``scanrag run``).

An item is *degraded* when a reduction took its input below what its strategy promises
(:mod:`scanrag.schemas.reduction`). With ``on_degraded: record`` (the default) it keeps its
status and is counted and flagged everywhere; with ``fail`` it is an error of status
``degraded``. Either way, an item whose reductions left out one of its gold evidence pages
(a page the model never saw in any call) records them in ``gold_pages_dropped``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanrag.protocols import OnDegraded
from scanrag.schemas import Reduction, Sample, Status, Trajectory
from scanrag.schemas.reduction import degraded_message

READ_STEPS = frozenset({"read", "map", "reduce", "answer"})
LISTED_ITEMS = 5


def pages_shown(trajectory: Trajectory) -> set[int]:
    """Pages some model call of the item was given (its read-like steps)."""
    return {
        int(page)
        for step in trajectory.steps
        if step.kind in READ_STEPS
        for page in step.data.get("pages") or []
        if isinstance(page, int)
    }


def gold_pages_dropped(trajectory: Trajectory, sample: Sample) -> list[int]:
    """Gold pages of the primary document that a reduction left out and no call showed."""
    gold = set(sample.gold_pages)
    if not gold:
        return []
    dropped = {p for r in trajectory.reductions if r.doc_id is None for p in r.pages_dropped}
    return sorted((gold & dropped) - pages_shown(trajectory))


def settle(
    trajectory: Trajectory, sample: Sample, on_degraded: OnDegraded = "record"
) -> Trajectory:
    """Stamp ``gold_pages_dropped``; under ``on_degraded: fail`` a degraded item still ``ok``
    becomes an error of status ``degraded``."""
    trajectory.degraded = trajectory.degraded or any(r.degrading for r in trajectory.reductions)
    trajectory.gold_pages_dropped = gold_pages_dropped(trajectory, sample)
    if on_degraded == "fail" and trajectory.degraded and trajectory.status == Status.OK:
        trajectory.fail(Status.DEGRADED, degraded_message(trajectory.reductions))
    return trajectory


# --------------------------------------------------------------------------- counting


def _reductions(row: Mapping[str, Any]) -> list[Reduction]:
    out = []
    for value in row.get("reductions") or []:
        try:
            out.append(Reduction.model_validate(value))
        except ValueError:  # a row from a newer version: skip what cannot be read
            continue
    return out


def is_degraded(row: Mapping[str, Any]) -> bool:
    """Whether a trajectory row (dict) is degraded (flagged, or failed as ``degraded``)."""
    return bool(row.get("degraded")) or row.get("status") == Status.DEGRADED


@dataclass
class CellDegradation:
    """One grid cell's degraded items: how many, how many lost gold pages, by kind."""

    items: int = 0
    degraded: list[str] = field(default_factory=list)
    gold_lost: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    first: str | None = None

    def add(self, row: Mapping[str, Any]) -> None:
        self.items += 1
        if not is_degraded(row):
            return
        sample = str(row.get("sample_id"))
        self.degraded.append(sample)
        if row.get("gold_pages_dropped"):
            self.gold_lost.append(sample)
        reductions = [r for r in _reductions(row) if r.degrading]
        self.kinds.update({r.kind for r in reductions})
        if self.first is None and reductions:
            self.first = f"{sample}: {reductions[0].summary()}"

    def to_json(self) -> dict[str, Any]:
        return {
            "degraded": len(self.degraded),
            "gold_pages_dropped": len(self.gold_lost),
            "by_kind": dict(sorted(self.kinds.items())),
        }


def by_cell(rows: Iterable[Mapping[str, Any]]) -> dict[str, CellDegradation]:
    """Degradation per cell of trajectory rows (the last row per item wins)."""
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in rows:
        latest[(str(row.get("run_key")), str(row.get("sample_id")))] = row
    cells: dict[str, CellDegradation] = {}
    for (key, _), row in latest.items():
        cells.setdefault(key, CellDegradation()).add(row)
    return cells


def report_lines(cells: Mapping[str, CellDegradation], on_degraded: str) -> list[str]:
    """What ``scanrag run`` prints on stderr about degraded items (nothing when none)."""
    total = sum(len(c.degraded) for c in cells.values())
    if not total:
        return []
    items = sum(c.items for c in cells.values())
    lost = sum(len(c.gold_lost) for c in cells.values())
    fate = "errors (runner.on_degraded: fail)" if on_degraded == "fail" else "kept, flagged"
    out = [
        f"degraded: {total} of {items} item(s) saw less input than their strategy promises "
        f"({fate}); {lost} lost gold evidence pages"
    ]
    for key, cell in cells.items():
        if not cell.degraded:
            continue
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(cell.kinds.items()))
        ids = ", ".join(cell.degraded[:LISTED_ITEMS])
        more = f" (+{len(cell.degraded) - LISTED_ITEMS} more)" if len(cell.degraded) > 5 else ""
        line = f"  {key}: {len(cell.degraded)} of {cell.items} ({kinds}); "
        line += f"{len(cell.gold_lost)} lost gold pages; items {ids}{more}"
        out.append(line)
        if cell.first:
            out.append(f"    first: {cell.first}")
    return out


__all__ = [
    "CellDegradation",
    "by_cell",
    "gold_pages_dropped",
    "is_degraded",
    "pages_shown",
    "report_lines",
    "settle",
]
