"""Geometric region metrics, no judge: every gold box on P̂ against the union of the
predicted boxes drawn on its page (IoU, IoM, GT-recall; see
:mod:`scanrag.evaluation.docscope.geometry`).

Same items and pages as the region judge of the same profile (paper: answerable items, valid
de-duplicated boxes; official: every item whose inference succeeded, every box flagged
normalized clipped to the page; see :mod:`scanrag.evaluation.docscope.region`). Aggregates are means
over gold boxes, pooled across items. ``covered_rate`` is the share of gold boxes with
GT-recall ≥ ``covered_threshold`` (default 0.9, the share of gold content at which the region
judge prefers "covered"); evidence-chain completeness uses it as its judge-free region check.
A gold box that cannot be placed on its page is counted as degenerate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scanrag.evaluation.base import (
    PureScorer,
    StatsOptions,
    count_column,
    ratio_metric,
    safe_ratio,
    split_rows,
)
from scanrag.evaluation.docscope.geometry import gold_vs_union
from scanrag.evaluation.docscope.profiled import ProfileBinding, ProfiledScorer
from scanrag.evaluation.docscope.profiles import OFFICIAL, Profile
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import BBox, Sample, Trajectory

GEOMETRIC = ("iou", "iom", "gt_recall")


def measure_boxes(
    pages: Iterable[tuple[int, Sequence[BBox]]],
    gold: Mapping[int, Sequence[BBox | None]],
    threshold: float,
) -> tuple[dict[str, float | None], dict[str, float], list[dict[str, Any]]]:
    """Per-item metrics, additive counts and per-box units of the gold boxes of ``pages``
    (each with the predicted boxes whose union they are measured against); a gold box that
    cannot be placed (``None``) or has no area is degenerate."""
    sums = dict.fromkeys(GEOMETRIC, 0.0)
    n_gold = covered = degenerate = 0
    units: list[dict[str, Any]] = []
    for page, valid in pages:
        for index, box in enumerate(gold.get(page, [])):
            geo = gold_vs_union(box, valid) if box is not None else None
            if geo is None or geo.gt_recall is None or geo.iou is None or geo.iom is None:
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


class RegionGeometryScorer(ProfiledScorer, PureScorer):
    name = "region_geometry"
    stage = "region"

    def __init__(self, covered_threshold: float = 0.9, profile: str | None = None) -> None:
        if not 0.0 < covered_threshold <= 1.0:
            raise ValueError(f"covered_threshold must lie in (0, 1], got {covered_threshold}")
        self.covered_threshold = covered_threshold
        super().__init__(profile)

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        opening = self.open_item(trajectory, sample, judge, has_gold=lambda g: g.n_boxes > 0)
        if isinstance(opening, ScoreRow):
            return opening
        pages = [(p, opening.view.boxes(p).shapes) for p in opening.p_hat()]
        gold = {p: [g.box for g in found] for p, found in opening.gold.boxes.items()}
        metrics, counts, units = measure_boxes(pages, gold, self.covered_threshold)
        return self.new_row(
            trajectory,
            sample,
            metrics=metrics,
            counts=counts,
            details=opening.details | {"units": units, "covered_threshold": self.covered_threshold},
        )

    def summarize(
        self, rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
    ) -> AggregateResult:
        return geometry_summary(rows, stats)


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


region_geometry_official = ProfileBinding(
    RegionGeometryScorer, OFFICIAL, "region_geometry_official"
)
