"""Geometric region metrics, no judge: every gold box on P̂ against the union of valid
predicted boxes on its page (IoU, IoM, GT-recall; see :mod:`evaluation.docscope.geometry`).

Same items and pages as the region judge (answerable, gold regions, p ∈ P̂ with gold
regions). Aggregates are means over gold boxes, pooled across items. ``covered_rate`` is
the share of gold boxes with GT-recall ≥ ``covered_threshold`` (default 0.9, the share of
gold content at which the region judge prefers "covered"); evidence-chain completeness uses
it as its judge-free region check. ``profile: official`` measures the boxes the official
region judge sees instead (inference-error items left out, unanswerable items in, every
four-number box within [-0.01, 1.5] clipped to the page; see
:mod:`evaluation.docscope.official_region`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evaluation.base import (
    PureScorer,
    RowGroup,
    StatsOptions,
    count_column,
    ratio_metric,
    safe_ratio,
    split_rows,
)
from evaluation.docscope.common import (
    correct_pages,
    doc_scope,
    gold_regions_by_page,
    predicted_boxes,
)
from evaluation.docscope.geometry import gold_vs_union
from evaluation.docscope.profiles import (
    OFFICIAL,
    PAPER,
    Profile,
    aggregate_by_profile,
    apply_profile,
    official_twin,
)
from evaluation.judging import JudgeContext
from evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import BBox, Region, Sample, Trajectory

GEOMETRIC = ("iou", "iom", "gt_recall")


def measure_boxes(
    pages: Iterable[tuple[int, Sequence[BBox]]],
    gold: Mapping[int, Sequence[Region]],
    threshold: float,
) -> tuple[dict[str, float | None], dict[str, float], list[dict[str, Any]]]:
    """Per-item metrics, additive counts and per-box units of the gold boxes of ``pages``
    (each with the predicted boxes whose union they are measured against)."""
    sums = dict.fromkeys(GEOMETRIC, 0.0)
    n_gold = covered = degenerate = 0
    units: list[dict[str, Any]] = []
    for page, valid in pages:
        for index, region in enumerate(gold.get(page, [])):
            geo = gold_vs_union(region.bbox, valid)
            if geo.gt_recall is None or geo.iou is None or geo.iom is None:
                degenerate += 1
                continue
            n_gold += 1
            sums["iou"] += geo.iou
            sums["iom"] += geo.iom
            sums["gt_recall"] += geo.gt_recall
            covered += geo.gt_recall >= threshold - 1e-12
            units.append(
                {"unit": f"page{page}/gold{index}", "page": page, "index": index}
                | {name: getattr(geo, name) for name in GEOMETRIC}
            )
    counts = {
        "gold": n_gold,
        "covered_geo": covered,
        "degenerate": degenerate,
        "gold_all": sum(len(v) for v in gold.values()),
        **{f"sum_{name}": sums[name] for name in GEOMETRIC},
    }
    return {name: safe_ratio(sums[name], n_gold) for name in GEOMETRIC}, counts, units


class RegionGeometryScorer(PureScorer):
    name = "region_geometry"

    profile: Profile = PAPER

    def __init__(self, covered_threshold: float = 0.9, profile: Profile = PAPER) -> None:
        if not 0.0 < covered_threshold <= 1.0:
            raise ValueError(f"covered_threshold must lie in (0, 1], got {covered_threshold}")
        self.covered_threshold = covered_threshold
        apply_profile(self, profile)

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if self.profile == OFFICIAL:
            from evaluation.docscope.official_region import score_geometry

            return score_geometry(self, trajectory, sample, self.covered_threshold)
        if not sample.answerable:
            return self.skip(trajectory, sample, "unanswerable question: no region metric")
        scope = doc_scope(trajectory, sample, judge)
        gold_by_page = gold_regions_by_page(sample, scope)
        if not gold_by_page:
            return self.skip(trajectory, sample, "no gold regions")
        pages = [
            (page, predicted_boxes(trajectory, page, scope).valid)
            for page in correct_pages(trajectory, sample)
        ]
        metrics, counts, units = measure_boxes(pages, gold_by_page, self.covered_threshold)
        return self.new_row(
            trajectory,
            sample,
            metrics=metrics,
            counts=counts,
            details={
                "profile": PAPER,
                "units": units,
                "covered_threshold": self.covered_threshold,
            },
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        def summary(kept: Sequence[ScoreRow]) -> AggregateResult:
            return geometry_summary(kept, stats)

        return aggregate_by_profile(rows, self.profile, summary, summary)


def geometry_summary(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
    """Means over gold boxes pooled across items (both profiles write the same counts)."""
    usable, failed, skipped = split_rows(rows)
    gold = count_column(usable, "gold")
    metrics = {
        name: ratio_metric(
            count_column(usable, f"sum_{name}"),
            gold,
            stats,
            headline=True,
            excluded=failed,
            skipped=skipped,
        )
        for name in GEOMETRIC
    }
    metrics["covered_rate"] = ratio_metric(
        count_column(usable, "covered_geo"), gold, stats, excluded=failed, skipped=skipped
    )
    return AggregateResult(
        metrics=metrics,
        tables={
            "gold_boxes": int(gold.sum()),
            "degenerate": int(count_column(usable, "degenerate").sum()),
        },
    )


RegionGeometryOfficialScorer = official_twin(RegionGeometryScorer, "region_geometry_official")
