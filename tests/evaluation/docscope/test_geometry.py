"""Exact union areas and gold-vs-union scores, golden vectors computed by hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.docscope.geometry import clip, gold_vs_union, union_area
from scanrag.schemas import BBox


def b(*v: float) -> BBox:
    return BBox.from_list(v)


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        ([], 0.0),
        ([b(0, 0, 0.5, 0.5)], 0.25),
        # two squares overlapping in a 0.25 x 0.25 corner: 0.25 + 0.25 - 0.0625
        ([b(0, 0, 0.5, 0.5), b(0.25, 0.25, 0.75, 0.75)], 0.4375),
        # a box inside another adds nothing
        ([b(0, 0, 1, 1), b(0.2, 0.2, 0.4, 0.4)], 1.0),
        # A∩B = 0.01, C disjoint: 0.04 + 0.04 - 0.01 + 0.01
        ([b(0, 0, 0.2, 0.2), b(0.1, 0.1, 0.3, 0.3), b(0.5, 0.5, 0.6, 0.6)], 0.08),
        # triple overlap by inclusion-exclusion: 0.48 - (0.08 + 0.06 + 0.06) + 0.04
        ([b(0, 0, 0.4, 0.4), b(0.2, 0, 0.6, 0.4), b(0.1, 0.2, 0.5, 0.6)], 0.32),
        # a zero-area box contributes nothing; a duplicate box counts once
        ([b(0.1, 0.1, 0.1, 0.9), b(0, 0, 0.5, 0.2), b(0, 0, 0.5, 0.2)], 0.1),
        # edge-touching boxes: areas add exactly
        ([b(0, 0, 0.5, 1), b(0.5, 0, 1, 1)], 1.0),
    ],
)
def test_union_area(boxes: list[BBox], expected: float) -> None:
    assert union_area(boxes) == pytest.approx(expected, abs=1e-12)


def test_clip() -> None:
    assert clip(b(0, 0, 0.5, 0.5), b(0.25, 0.25, 1, 1)) == pytest.approx((0.25, 0.25, 0.5, 0.5))
    assert clip(b(0, 0, 0.2, 0.2), b(0.5, 0.5, 1, 1)) is None
    assert clip(b(0, 0, 0.5, 0.5), b(0.5, 0, 1, 1)) is None  # touching edges share no area


def test_gold_against_a_union_of_two_boxes() -> None:
    # G = 0.16; U = 0.16 + 0.16 - 0.04 = 0.28; G∩U = 0.08 + 0.08 - 0.04 = 0.12
    geo = gold_vs_union(b(0, 0, 0.4, 0.4), [b(0.2, 0, 0.6, 0.4), b(0, 0.2, 0.4, 0.6)])
    assert geo.intersection == pytest.approx(0.12)
    assert geo.union_pred_area == pytest.approx(0.28)
    assert geo.iou == pytest.approx(0.12 / 0.32)
    assert geo.iom == pytest.approx(0.75)
    assert geo.gt_recall == pytest.approx(0.75)


def test_large_prediction_has_full_recall_and_iom_but_small_iou() -> None:
    geo = gold_vs_union(b(0.1, 0.1, 0.2, 0.2), [b(0, 0, 1, 1)])
    assert geo.gt_recall == pytest.approx(1.0)
    assert geo.iom == pytest.approx(1.0)
    assert geo.iou == pytest.approx(0.01)


def test_identical_box_scores_one() -> None:
    geo = gold_vs_union(b(0.1, 0.2, 0.5, 0.6), [b(0.1, 0.2, 0.5, 0.6)])
    assert (geo.iou, geo.iom, geo.gt_recall) == pytest.approx((1.0, 1.0, 1.0))


def test_no_prediction_scores_zero_and_degenerate_gold_is_undefined() -> None:
    geo = gold_vs_union(b(0.1, 0.1, 0.3, 0.3), [])
    assert (geo.iou, geo.iom, geo.gt_recall) == (0.0, 0.0, 0.0)
    flat = gold_vs_union(b(0.1, 0.1, 0.1, 0.5), [b(0, 0, 1, 1)])
    assert flat.iou is None and flat.iom is None and flat.gt_recall is None


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        # Boxes away from the diagonal (x2 <= y1, or y2 <= x1) are ordinary boxes.
        ([b(0, 0.5, 0.4, 0.9)], 0.16),
        ([b(0.5, 0, 0.9, 0.4)], 0.16),
        ([[0.6, 0.1, 0.7, 0.3]], 0.02),  # plain four-number lists too
    ],
)
def test_union_area_off_the_diagonal(boxes: list, expected: float) -> None:
    assert union_area(boxes) == pytest.approx(expected, abs=1e-12)


def test_clip_keeps_each_coordinate() -> None:
    # Every coordinate of the result comes from a different input coordinate.
    assert clip([0, 0, 1, 1], [0.1, 0.2, 0.5, 0.7]) == pytest.approx((0.1, 0.2, 0.5, 0.7))
    assert clip([0.1, 0.2, 0.5, 0.7], [0, 0, 1, 1]) == pytest.approx((0.1, 0.2, 0.5, 0.7))
    assert clip([0.3, 0.1, 0.9, 0.6], [0.1, 0.4, 0.6, 0.95]) == pytest.approx((0.3, 0.4, 0.6, 0.6))
    # Boxes that touch along a horizontal edge share no area either.
    assert clip([0, 0, 1, 0.5], [0, 0.5, 1, 1]) is None
