"""Accuracy broken down by what the items are: document type, evidence source, answer format,
number of evidence pages — each bin with its n and a 95% interval.

Accuracy here is the share of correct items over every scored item of the bin, errors and
unanswered items counted as wrong (the benchmarks' convention); items whose correctness is
unknown (no answer row, or its judge failed) are left out. An item with several evidence
sources counts in each of their bins (MMLongBench-Doc reports per-source accuracy that way).
Intervals are Wilson score intervals: exact enough for a proportion and defined for the
one-item bins a small run has, where they rightly span most of [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from scanrag.evaluation.outcomes import Outcome
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.measures import outcomes
from scanrag.schemas import Sample

UNKNOWN = "unknown"
Z95 = 1.959964


class Bin(BaseModel):
    """One bin of one grid cell: n scored items, k correct, the accuracy and its interval."""

    label: str
    n: int = 0
    correct: int = 0
    accuracy: float | None = None
    low: float | None = None
    high: float | None = None


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """The Wilson score interval of ``correct`` successes in ``n`` trials."""
    if n <= 0:
        return None, None
    p = correct / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, center - half), min(1.0, center + half)


def breakdown_fields(sample: Sample) -> dict[str, Any]:
    """``doc_type``, ``evidence_sources`` (list), ``answer_format`` and ``evidence_pages`` of a
    sample, as every loader gives them (:func:`scanrag.datasets.breakdown`)."""
    from scanrag.datasets import breakdown

    fields: dict[str, Any] = breakdown(sample)
    return fields


def _page_bin(count: int) -> list[str]:
    return ["0 (none)" if count == 0 else str(count) if count < 3 else "3+"]


DIMENSIONS: dict[str, tuple[str, Callable[[dict[str, Any]], list[str]]]] = {
    "doc_type": ("document type", lambda f: [f["doc_type"] or UNKNOWN]),
    "evidence_sources": ("evidence source", lambda f: f["evidence_sources"] or [UNKNOWN]),
    "answer_format": ("answer format", lambda f: [f["answer_format"] or UNKNOWN]),
    "evidence_pages": ("evidence pages", lambda f: _page_bin(int(f["evidence_pages"]))),
}


def group_breakdown(group: Group) -> dict[str, list[Bin]]:
    """``{dimension: [bins in label order]}`` for one grid cell."""
    by_item = outcomes(group)
    tallies: dict[str, dict[str, list[int]]] = {name: {} for name in DIMENSIONS}
    for sid, outcome in by_item.items():
        sample = group.run.samples.get(sid)
        if sample is None or outcome is Outcome.UNSCORED:
            continue
        fields = breakdown_fields(sample)
        for name, (_, labels) in DIMENSIONS.items():
            for label in dict.fromkeys(labels(fields)):
                tally = tallies[name].setdefault(label, [0, 0])
                tally[0] += 1
                tally[1] += int(outcome is Outcome.CORRECT)
    out: dict[str, list[Bin]] = {}
    for name, bins in tallies.items():
        out[name] = [_bin(label, n, k) for label, (n, k) in sorted(bins.items(), key=_order)]
    return out


def _order(item: tuple[str, list[int]]) -> tuple[int, str]:
    label = item[0]
    return (1 if label == UNKNOWN else 0, label)


def _bin(label: str, n: int, correct: int) -> Bin:
    low, high = wilson(correct, n)
    return Bin(label=label, n=n, correct=correct, accuracy=correct / n, low=low, high=high)


def breakdowns(groups: Sequence[Group]) -> dict[str, dict[str, list[Bin]]]:
    """``{dimension: {cell label: bins}}``, keeping only dimensions with something known:
    at least one bin other than ``unknown``."""
    per_group = {g.label: group_breakdown(g) for g in groups}
    out: dict[str, dict[str, list[Bin]]] = {}
    for name in DIMENSIONS:
        cells = {label: data[name] for label, data in per_group.items() if data[name]}
        if any(b.label != UNKNOWN for bins in cells.values() for b in bins):
            out[name] = cells
    return out
