"""Evidence-layout difficulty factors of the gold pages, and answer accuracy per bin.

Per answerable item with gold pages p_1 < ... < p_k in a document of N pages:

* ``count`` = k;
* ``span`` = p_k − p_1 (0 for one page);
* ``max_gap`` = max (p_{i+1} − p_i), the largest jump between consecutive evidence pages
  (0 for one page, 1 for adjacent pages);
* ``mean_pairwise`` = mean |p_i − p_j| over all pairs i < j (0 for one page);
* ``clusters`` = number of runs of consecutive pages ([3, 4, 9] has 2);
* ``position`` = mean(p) / N, in (0, 1] (``None`` when N is unknown: N comes from the
  sample's ``num_pages`` metadata, else from the PDF).

Accuracy per bin joins these rows with answer correctness (the ``answer`` judge where usable,
else ``answer_rules``). A value v falls in the first bin whose upper bound it does not exceed;
the bins are :data:`BINS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations, pairwise
from typing import Any

from scanrag.evaluation.base import PureScorer, RowGroup, StatsOptions, mean_metric, split_rows
from scanrag.evaluation.docscope.completeness import answer_correct
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory

INF = math.inf
FACTORS = ("count", "span", "max_gap", "mean_pairwise", "clusters", "position")
BINS: dict[str, list[tuple[float, str]]] = {
    "count": [(1, "1"), (2, "2"), (3, "3"), (5, "4-5"), (INF, "6+")],
    "span": [(0, "0"), (2, "1-2"), (5, "3-5"), (10, "6-10"), (20, "11-20"), (INF, "21+")],
    "max_gap": [(0, "0"), (1, "1"), (3, "2-3"), (7, "4-7"), (15, "8-15"), (INF, "16+")],
    "mean_pairwise": [
        (0, "0"),
        (2, "(0,2]"),
        (5, "(2,5]"),
        (10, "(5,10]"),
        (20, "(10,20]"),
        (INF, ">20"),
    ],
    "clusters": [(1, "1"), (2, "2"), (3, "3"), (INF, "4+")],
    "position": [
        (0.2, "(0,0.2]"),
        (0.4, "(0.2,0.4]"),
        (0.6, "(0.4,0.6]"),
        (0.8, "(0.6,0.8]"),
        (INF, "(0.8,1]"),
    ],
}


def layout_factors(pages: Sequence[int], num_pages: int | None = None) -> dict[str, float | None]:
    """The six factors of a non-empty set of gold pages."""
    ordered = sorted(set(pages))
    if not ordered:
        raise ValueError("layout factors need at least one gold page")
    gaps = [b - a for a, b in pairwise(ordered)]
    pairs = list(combinations(ordered, 2))
    return {
        "count": float(len(ordered)),
        "span": float(ordered[-1] - ordered[0]),
        "max_gap": float(max(gaps, default=0)),
        "mean_pairwise": sum(b - a for a, b in pairs) / len(pairs) if pairs else 0.0,
        "clusters": float(1 + sum(1 for g in gaps if g > 1)),
        "position": sum(ordered) / len(ordered) / num_pages if num_pages else None,
    }


def bin_label(factor: str, value: float) -> str:
    for upper, label in BINS[factor]:
        if value <= upper + 1e-12:
            return label
    return BINS[factor][-1][1]


def _num_pages(sample: Sample, ctx: JudgeContext | None) -> int | None:
    value = sample.metadata.get("num_pages")
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    if ctx is not None and ctx.documents is not None:
        try:
            return int(ctx.documents.num_pages(sample.primary_doc))
        except (OSError, ValueError):
            return None
    return None


class LayoutScorer(PureScorer):
    name = "layout"

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if not sample.answerable:
            return self.skip(trajectory, sample, "unanswerable question: no gold pages")
        if not sample.gold_pages:
            return self.skip(trajectory, sample, "no gold pages")
        num_pages = _num_pages(sample, judge)
        factors = layout_factors(sample.gold_pages, num_pages)
        return self.new_row(
            trajectory,
            sample,
            metrics=factors,
            details={"gold_pages": list(sample.gold_pages), "num_pages": num_pages},
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        correct = answer_correct(group)
        result = AggregateResult()
        tables: dict[str, Any] = {}
        for factor in FACTORS:
            values = [v for r in usable if (v := r.metrics.get(factor)) is not None]
            result.metrics[f"mean_{factor}"] = mean_metric(values, stats, skipped=skipped)
            bins: dict[str, dict[str, Any]] = {
                label: {"n": 0, "answered": 0, "correct": 0} for _, label in BINS[factor]
            }
            for row in usable:
                value = row.metrics.get(factor)
                if value is None:
                    continue
                cell = bins[bin_label(factor, value)]
                cell["n"] += 1
                if row.sample_id in correct:
                    cell["answered"] += 1
                    cell["correct"] += int(correct[row.sample_id])
            for cell in bins.values():
                cell["accuracy"] = cell["correct"] / cell["answered"] if cell["answered"] else None
            tables[factor] = bins
        result.tables["bins"] = tables
        result.tables["excluded"] = failed
        return result
