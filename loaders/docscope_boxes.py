"""DocScope evidence boxes: units, conversion to normalized boxes, and the area check.

The official ``benchmark.json`` stores each evidence box as ``[x1, y1, x2, y2]`` in **pixels of
a 144-DPI render**, origin top-left (DocScope ``code/README.md``, "Benchmark Format"; its
``code/eval/render_eval_page.py`` draws them unscaled on a 144-DPI page image). A pixel box is
turned into PDF points by ``72 / dpi`` and then divided by the page's displayed size, so a
letter page (612 x 792 points) spans 1224 x 1584 pixels.

Units (``bbox_units``): ``"pixels"`` (the default, at ``bbox_dpi`` = 144), ``"points"`` (PDF
points), ``"normalized"`` (already 0..1) and ``"auto"`` (normalized when every coordinate of
the file lies in [0, 1], else pixels at ``bbox_dpi``).

The DocScope paper (Table 2) reports a mean evidence area of 9.79% of the page (maximum 83.09%)
over the 1,124 questions. :func:`area_note` compares the mean area of the boxes just loaded
with it: reading the official pixels as points makes every box four times larger (and many
reach beyond the page), so a mean several times off the paper's figure means the units are
wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from scanrag.datasets.base import DatasetError
from scanrag.datasets.sources import RowError, page_sizes
from scanrag.schemas import BBox

BBoxUnits = Literal["pixels", "points", "normalized", "auto"]
BBoxFormat = Literal["xyxy", "xywh"]
UNITS: tuple[str, ...] = ("pixels", "points", "normalized", "auto")
OFFICIAL_DPI = 144.0
POINTS_PER_INCH = 72.0
TOLERANCE = 0.02  # a box may end this far (fraction of the page) beyond the page edge
PAPER_MEAN_AREA = 0.0979  # DocScope paper, Table 2: average evidence relative area
AREA_FACTOR = 2.5  # a loaded mean this many times off the paper's is reported
MIN_BOXES_FOR_CHECK = 30  # fewer boxes say too little about the units

NORMALIZED = "normalized (all coordinates within [0, 1] in the source)"
POINTS = "PDF points, divided by the page size read from the PDF"


def pixels_label(dpi: float) -> str:
    """The ``metadata["bbox_units"]`` text for pixel boxes at ``dpi``."""
    return f"pixels at {dpi:g} DPI (the official benchmark.json unit), scaled by 72/{dpi:g}"


def numbers(value: Any, where: str, fmt: BBoxFormat) -> list[float] | None:
    """``[x1, y1, x2, y2]`` from a raw box (``xywh`` is converted); ``None`` for no box."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise RowError(f"{where}: bbox must be four numbers, got {value!r}")
    try:
        x1, y1, a, b = (float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise RowError(f"{where}: bbox must be four numbers, got {value!r}") from exc
    return [x1, y1, x1 + a, y1 + b] if fmt == "xywh" else [x1, y1, a, b]


def detect_units(records: Sequence[dict[str, Any] | None], fmt: BBoxFormat = "xyxy") -> str:
    """``"normalized"`` when every readable box of the file lies in [0, 1], else ``"pixels"``."""
    for record in records:
        if record is None or not isinstance(record.get("evidences"), list):
            continue
        for evidence in record["evidences"]:
            if not isinstance(evidence, dict):
                continue
            try:
                found = numbers(evidence.get("bbox"), "", fmt)
            except RowError:
                continue
            if found and any(not 0.0 <= v <= 1.0 for v in found):
                return "pixels"
    return "normalized"


class PageBoxes:
    """Turns the raw boxes of one document into normalized :class:`BBox` objects."""

    def __init__(self, units: str, pdf: Path | None, fmt: BBoxFormat, dpi: float) -> None:
        self.units = units
        self.pdf = pdf
        self.fmt = fmt
        self.scale = POINTS_PER_INCH / dpi if units == "pixels" else 1.0
        self.unit_name = "pixels" if units == "pixels" else "points"
        self._sizes: list[tuple[float, float]] | None = None
        self._problem: str | None = None

    def refuse(self, problem: str) -> None:
        """The PDF cannot be used (e.g. its path leaves the PDF folder): every box fails."""
        self._problem = problem

    def size(self, page: int, where: str) -> tuple[float, float]:
        """The displayed size of ``page`` in the box unit (points, or pixels at the dpi)."""
        if self._sizes is None:
            if self._problem is not None or self.pdf is None:
                raise RowError(f"boxes in page {self.unit_name} need the PDF: {self._problem}")
            try:
                self._sizes = page_sizes(self.pdf)
            except DatasetError as exc:
                raise RowError(f"boxes in page {self.unit_name} need the PDF: {exc}") from exc
        if not 1 <= page <= len(self._sizes):
            raise RowError(f"{where}: page {page} outside 1..{len(self._sizes)} of the PDF")
        width, height = self._sizes[page - 1]
        return width / self.scale, height / self.scale

    def box(self, value: Any, page: int, where: str, *, clip: bool = False) -> BBox:
        """The normalized box of ``value`` on ``page`` (a missing box covers the page).

        Without ``clip`` a box with corners out of order, or ending more than
        :data:`TOLERANCE` past the page, raises :class:`RowError`; with it the corners are
        ordered and the box clipped to the page (as the released scorers draw it)."""
        found = numbers(value, where, self.fmt)
        if found is None:
            return BBox(x1=0.0, y1=0.0, x2=1.0, y2=1.0)
        if clip:
            return self._clipped(found, page, where)
        x1, y1, x2, y2 = found
        if x1 > x2 or y1 > y2:
            raise RowError(f"{where}: bbox corners out of order: {value!r}")
        if self.units == "normalized":
            try:
                return BBox.from_list(found)
            except (ValidationError, ValueError) as exc:
                raise RowError(f"{where}: bbox {value!r} is not normalized: {exc}") from exc
        width, height = self.size(page, where)
        if x2 > width * (1 + TOLERANCE) or y2 > height * (1 + TOLERANCE) or min(x1, y1) < 0:
            raise RowError(
                f"{where}: bbox {value!r} exceeds the page ({width:.0f}x{height:.0f} "
                f"{self.unit_name}); are the boxes in another unit? (bbox_units)"
            )
        return BBox.from_points(found, width, height)

    def _clipped(self, found: list[float], page: int, where: str) -> BBox:
        if self.units == "normalized":
            width = height = 1.0
        else:
            width, height = self.size(page, where)
        box = BBox.from_points(found, width, height)  # orders the corners, clamps to the page
        if box.x2 <= box.x1 or box.y2 <= box.y1:
            raise RowError(f"{where}: bbox {found!r} lies outside the page")
        return box


def mean_area(boxes: Iterable[BBox]) -> tuple[float, int]:
    """Mean relative area of ``boxes`` and how many there were."""
    areas = [(b.x2 - b.x1) * (b.y2 - b.y1) for b in boxes]
    return (sum(areas) / len(areas) if areas else 0.0), len(areas)


def area_note(boxes: Iterable[BBox], units: str) -> str | None:
    """A line comparing the mean area of ``boxes`` with the paper's 9.79%, flagged when it is
    more than :data:`AREA_FACTOR` times off with at least :data:`MIN_BOXES_FOR_CHECK` boxes."""
    mean, count = mean_area(boxes)
    if count == 0:
        return None
    line = (
        f"mean evidence area {mean:.2%} of the page over {count} boxes read as {units} "
        f"(DocScope paper: {PAPER_MEAN_AREA:.2%})"
    )
    off = mean > PAPER_MEAN_AREA * AREA_FACTOR or mean < PAPER_MEAN_AREA / AREA_FACTOR
    if off and count >= MIN_BOXES_FOR_CHECK:
        return f"warning: {line}; the boxes may be in another unit (bbox_units)"
    return line
