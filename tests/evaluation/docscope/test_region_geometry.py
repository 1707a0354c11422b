"""Geometric region metrics per gold box, pooled over items; edge cases by hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.region_geometry import RegionGeometryScorer
from scanrag.schemas import BBox, Citation, Region

NO_CI = StatsOptions(n_resamples=0)


def reg(page: int, *v: float) -> Region:
    return Region(page=page, bbox=BBox.from_list(v))


def box(*v: float) -> BBox:
    return BBox.from_list(v)


def test_per_gold_box_scores_and_pooled_means(make_sample, make_traj) -> None:
    scorer = RegionGeometryScorer()
    sample = make_sample(
        gold_pages=[1, 2, 3],
        gold_regions=[
            reg(1, 0, 0, 0.4, 0.4),
            reg(1, 0.6, 0.6, 0.8, 0.8),
            reg(2, 0.1, 0.1, 0.2, 0.2),
            reg(3, 0, 0, 0.5, 0.5),
        ],
    )
    traj = make_traj(
        pages=[1, 2],  # page 3 missed: its gold box is outside P̂ and not scored
        regions=[reg(1, 0.2, 0, 0.6, 0.4), reg(1, 0, 0.2, 0.4, 0.6), reg(2, 0.1, 0.1, 0.2, 0.2)],
    )
    row = scorer.compute(traj, sample)
    units = {u["unit"]: u for u in row.details["units"]}
    assert set(units) == {"page1/gold0", "page1/gold1", "page2/gold0"}
    g0 = units["page1/gold0"]  # G∩U 0.12, U 0.28, G 0.16 (see test_geometry)
    assert (g0["iou"], g0["iom"], g0["gt_recall"]) == pytest.approx((0.375, 0.75, 0.75))
    assert (units["page1/gold1"]["iou"], units["page1/gold1"]["gt_recall"]) == (0.0, 0.0)
    assert units["page2/gold0"]["iou"] == pytest.approx(1.0)
    assert row.counts["gold"] == 3 and row.counts["gold_all"] == 4
    assert row.counts["covered_geo"] == 1  # only the exact box reaches GT-recall 0.9
    assert row.metrics["gt_recall"] == pytest.approx((0.75 + 0 + 1) / 3)

    other = scorer.compute(
        make_traj(sample_id="q2", pages=[1]),  # right page, no predicted box at all
        make_sample(id="q2", gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)]),
    )
    assert other.metrics == {"iou": 0.0, "iom": 0.0, "gt_recall": 0.0}
    out = scorer.aggregate([row, other], RowGroup("c", "s"), NO_CI).metrics
    assert out["gt_recall"].value == pytest.approx((0.75 + 0 + 1 + 0) / 4)  # pooled over boxes
    assert out["iom"].value == pytest.approx((0.75 + 0 + 1 + 0) / 4)
    assert out["covered_rate"].value == pytest.approx(1 / 4)


def test_invalid_boxes_are_not_in_the_union(make_sample, make_traj) -> None:
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    traj = make_traj(
        pages=[1], citations=[Citation(sentence="x", page=1, bbox=[-0.5, 0, 2, 2], valid=False)]
    )
    row = RegionGeometryScorer().compute(traj, sample)
    assert row.metrics["gt_recall"] == 0.0


def test_citation_boxes_are_used_when_a_trajectory_has_no_regions(make_sample, make_traj) -> None:
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    traj = make_traj(
        pages=[1], citations=[Citation(sentence="x", page=1, bbox=[0.1, 0.1, 0.3, 0.3])]
    )
    assert RegionGeometryScorer().compute(traj, sample).metrics["iou"] == pytest.approx(1.0)


def test_no_correct_page_and_skips(make_sample, make_traj) -> None:
    scorer = RegionGeometryScorer()
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    row = scorer.compute(make_traj(pages=[2], regions=[reg(2, 0, 0, 1, 1)]), sample)
    assert row.status == "ok" and row.counts["gold"] == 0 and row.metrics["iou"] is None
    assert scorer.compute(make_traj(), make_sample()).status == "skipped"
    with pytest.raises(ValueError):
        RegionGeometryScorer(covered_threshold=0)


def test_measure_boxes_counts_degenerate_boxes_and_keys_units() -> None:
    from scanrag.evaluation.docscope.region_geometry import measure_boxes

    gold = {
        1: [box(0.1, 0.1, 0.1, 0.3), box(0.1, 0.1, 0.4, 0.4)],  # a zero-width box first
        2: [box(0, 0, 1, 1), None],  # page 2 is not among the measured pages
    }
    # GT-recall of the second box: 0.27 * 0.3 / 0.09, a hair under 0.9 in floating point; the
    # tolerance still counts it as covered at threshold 0.9.
    metrics, counts, units = measure_boxes(
        [(1, [BBox.from_list([0.1, 0.1, 0.37, 0.4])])], gold, 0.9
    )
    assert counts["degenerate"] == 1 and counts["gold"] == 1 and counts["gold_all"] == 4
    assert counts["covered_geo"] == 1
    assert units == [
        {
            "unit": "page1/gold1",
            "page": 1,
            "index": 1,
            "iou": pytest.approx(0.9),
            "iom": pytest.approx(1.0),
            "gt_recall": pytest.approx(0.9),
        }
    ]
    assert counts["sum_gt_recall"] == pytest.approx(0.9)
    assert metrics["iom"] == pytest.approx(1.0)
    # Only degenerate boxes: nothing measured, every mean undefined.
    metrics, counts, units = measure_boxes([(1, [])], {1: [box(0.2, 0.2, 0.2, 0.2), None]}, 0.9)
    assert metrics == {"iou": None, "iom": None, "gt_recall": None} and units == []
    assert counts["degenerate"] == 2 and counts["gold"] == 0  # a box without a place too


def test_covered_threshold_is_inclusive() -> None:
    from scanrag.evaluation.docscope.region_geometry import measure_boxes

    gold = {1: [box(0, 0, 0.5, 0.5)]}
    half = [(1, [BBox.from_list([0, 0, 0.25, 0.5])])]  # GT-recall exactly 0.5
    assert measure_boxes(half, gold, 0.5)[1]["covered_geo"] == 1
    assert measure_boxes(half, gold, 0.6)[1]["covered_geo"] == 0
    # The rounding tolerance is inclusive too: 0.5 reaches a threshold of 0.5 + 1e-12.
    assert measure_boxes(half, gold, 0.5 + 1e-12)[1]["covered_geo"] == 1


def test_scorer_parameters_and_rows(make_sample, make_traj) -> None:
    from scanrag.evaluation.docscope.region_geometry import region_geometry_official

    assert RegionGeometryScorer.name == "region_geometry"
    bound = region_geometry_official(covered_threshold=0.8)
    assert bound.name == "region_geometry_official" and bound.covered_threshold == 0.8
    assert RegionGeometryScorer(covered_threshold=1.0).covered_threshold == 1.0
    for bad in (0.0, 1.01, 2.0, -0.5):
        with pytest.raises(ValueError, match="covered_threshold must lie in"):
            RegionGeometryScorer(covered_threshold=bad)
    scorer = RegionGeometryScorer(covered_threshold=0.5)
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0, 0, 0.5, 0.5)])
    row = scorer.compute(make_traj(pages=[1], regions=[reg(1, 0, 0, 0.25, 0.5)]), sample)
    assert row.details["profile"] == "paper" and row.details["covered_threshold"] == 0.5
    assert row.counts["covered_geo"] == 1
    unanswerable = scorer.compute(make_traj(), make_sample(answerable=False, answer=None))
    assert unanswerable.reason == "unanswerable question: no region metric"
    assert scorer.compute(make_traj(), make_sample()).reason == "no gold regions"


def test_official_profile_row(make_sample, make_traj) -> None:
    scorer = RegionGeometryScorer(profile="official")
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0, 0, 0.5, 0.5)])
    # The official view reads the cited boxes.
    cite = Citation(sentence="x", page=1, bbox=[0, 0, 0.5, 0.5])
    traj = make_traj(pages=[1], citations=[cite], metadata={"parser": "json"})
    row = scorer.compute(traj, sample)
    assert row.status == "ok" and row.details["profile"] == "official"
    assert row.metrics["iou"] == pytest.approx(1.0)


def test_summary_tables_and_headlines(make_sample, make_traj) -> None:
    scorer = RegionGeometryScorer()
    sample = make_sample(
        gold_pages=[1], gold_regions=[reg(1, 0, 0, 0.5, 0.5), reg(1, 0.3, 0.3, 0.3, 0.6)]
    )
    row = scorer.compute(make_traj(pages=[1], regions=[reg(1, 0, 0, 0.5, 0.5)]), sample)
    skipped = scorer.compute(make_traj(), make_sample(answerable=False, answer=None))
    result = scorer.aggregate([row, skipped], RowGroup("c", "s"), NO_CI)
    assert result.tables.pop("profile_label").startswith("paper")
    assert result.tables == {"gold_boxes": 1, "degenerate": 1, "profile": "paper"}
    heads = {k for k, v in result.metrics.items() if v.headline}
    assert heads == {"iou", "iom", "gt_recall"}
    assert result.metrics["covered_rate"].value == 1.0
    assert result.metrics["iou"].skipped == 1 and result.metrics["iou"].n == 1
