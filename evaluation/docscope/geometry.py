"""Exact box geometry: the area of a union of boxes, and gold-box scores against a union.

The union area uses coordinate compression: the distinct x and y edges of all boxes cut the
plane into cells; a cell is inside the union when its center lies in some box, and the union
area is the sum of those cells' areas. It is exact (no rasterisation) and O(n³) for n boxes,
which is nothing for the handful of boxes a page holds.

For a gold box G and the union U of the valid predicted boxes on its page:
IoU = |G∩U| / |G∪U|, IoM = |G∩U| / min(|G|, |U|), GT-recall = |G∩U| / |G|.
With no valid predicted box (|U| = 0) all three are 0. A gold box of zero area has no
defined score (``None``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from scanrag.schemas import BBox

Rect = tuple[float, float, float, float]


def _rect(box: BBox | Sequence[float]) -> Rect:
    if isinstance(box, BBox):
        return (box.x1, box.y1, box.x2, box.y2)
    x1, y1, x2, y2 = (float(v) for v in box)
    return (x1, y1, x2, y2)


def union_area(boxes: Sequence[BBox | Sequence[float]]) -> float:
    """Exact area of the union of axis-aligned boxes (empty boxes contribute nothing)."""
    rects = [r for r in (_rect(b) for b in boxes) if r[2] > r[0] and r[3] > r[1]]
    if not rects:
        return 0.0
    xs = sorted({v for r in rects for v in (r[0], r[2])})
    ys = sorted({v for r in rects for v in (r[1], r[3])})
    area = 0.0
    for i in range(len(xs) - 1):
        cx = (xs[i] + xs[i + 1]) / 2
        column = [r for r in rects if r[0] <= cx <= r[2]]
        if not column:
            continue
        for j in range(len(ys) - 1):
            cy = (ys[j] + ys[j + 1]) / 2
            if any(r[1] <= cy <= r[3] for r in column):
                area += (xs[i + 1] - xs[i]) * (ys[j + 1] - ys[j])
    return area


def clip(box: BBox | Sequence[float], to: BBox | Sequence[float]) -> Rect | None:
    """The part of ``box`` inside ``to``, or ``None`` when they do not overlap."""
    a, b = _rect(box), _rect(to)
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


class GoldGeometry(BaseModel):
    """Scores of one gold box against the union of predicted boxes on its page."""

    iou: float | None
    iom: float | None
    gt_recall: float | None
    intersection: float
    gold_area: float
    union_pred_area: float


def gold_vs_union(gold: BBox, predicted: Sequence[BBox]) -> GoldGeometry:
    """IoU, IoM and GT-recall of ``gold`` against the union of ``predicted``."""
    g_area = gold.area
    u_area = union_area(predicted)
    clipped = [c for c in (clip(p, gold) for p in predicted) if c is not None]
    inter = union_area(clipped)
    if g_area <= 0:
        return GoldGeometry(
            iou=None,
            iom=None,
            gt_recall=None,
            intersection=inter,
            gold_area=g_area,
            union_pred_area=u_area,
        )
    union = g_area + u_area - inter
    smaller = min(g_area, u_area)
    return GoldGeometry(
        iou=inter / union if union > 0 else 0.0,
        iom=inter / smaller if smaller > 0 else 0.0,
        gt_recall=inter / g_area,
        intersection=inter,
        gold_area=g_area,
        union_pred_area=u_area,
    )
