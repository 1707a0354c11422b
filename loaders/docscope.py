"""DocScope ``benchmark.json``: a JSON array of questions with region and fact annotations.

Layout (from the reference loader ``code/infer/benchmark_io.py`` of MiliLab/DocScope):
``{id, split ("test"|"dev"), pdf: {doc_id_str}, question, answer: {answer_text,
is_answerable}, evidences: [{local_id, page, bbox, element_type}], facts: [{local_id,
evidence_local_id, text_description}], extract_class}``. Pages are 1-based physical pages.

Mapping: the document is ``<doc_id_str>.pdf``; every evidence becomes a gold region (in file
order) and its page a gold page; every fact becomes a gold fact on its evidence's page, with
that evidence's box and ``region_index``; ``extract_class`` becomes the category and
``split`` stays in the metadata. An evidence without a bbox covers its whole page.

**Box units.** The annotations store boxes as the annotation tool wrote them, and the units are
not documented. With ``bbox_units="auto"`` (the default) the loader looks at every box of the
file: if every coordinate lies in [0, 1] the boxes are taken as normalized already; otherwise
they are taken as PDF points and divided by each page's displayed size from the PDF (so the
PDF must be present, even with ``validate=False``). Boxes are read as ``[x1, y1, x2, y2]``
unless ``bbox_format="xywh"``. The assumption made is recorded in every sample's
``metadata["bbox_units"]``. A box that ends more than 2% beyond its page is dropped with its
row rather than clamped, since that means the units guess is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from scanrag.datasets.base import Dataset, DatasetError, describe_validation_error
from scanrag.datasets.generic import NOT_ANSWERABLE, RowError
from scanrag.datasets.sources import (
    LoadState,
    as_text,
    default_pdf_dir,
    file_name,
    finish_load,
    page_sizes,
    read_records,
    resolve_file,
)
from scanrag.schemas import BBox, Fact, Region, Sample

BBoxUnits = Literal["auto", "normalized", "points"]
BBoxFormat = Literal["xyxy", "xywh"]
DEFAULT_FILES = ("benchmark.json",)
NORMALIZED = "normalized (all coordinates within [0, 1] in the source)"
POINTS = "PDF points, divided by the page size read from the PDF"
TOLERANCE = 0.02
_OWN = frozenset(
    {"id", "split", "pdf", "question", "answer", "evidences", "facts", "extract_class"}
)


def _numbers(value: Any, where: str, fmt: BBoxFormat) -> list[float] | None:
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
    """``"normalized"`` when every readable box of the file lies in [0, 1], else ``"points"``."""
    for record in records:
        if record is None or not isinstance(record.get("evidences"), list):
            continue
        for evidence in record["evidences"]:
            if not isinstance(evidence, dict):
                continue
            try:
                numbers = _numbers(evidence.get("bbox"), "", fmt)
            except RowError:
                continue
            if numbers and any(not 0.0 <= v <= 1.0 for v in numbers):
                return "points"
    return "normalized"


class _Boxes:
    """Turns raw boxes of one document into normalized :class:`BBox` objects."""

    def __init__(self, units: str, pdf: Path, fmt: BBoxFormat) -> None:
        self.units = units
        self.pdf = pdf
        self.fmt = fmt
        self._sizes: list[tuple[float, float]] | None = None

    def size(self, page: int, where: str) -> tuple[float, float]:
        if self._sizes is None:
            try:
                self._sizes = page_sizes(self.pdf)
            except DatasetError as exc:
                raise RowError(f"boxes are in page points and need the PDF: {exc}") from exc
        if not 1 <= page <= len(self._sizes):
            raise RowError(f"{where}: page {page} outside 1..{len(self._sizes)} of the PDF")
        return self._sizes[page - 1]

    def box(self, value: Any, page: int, where: str) -> BBox:
        numbers = _numbers(value, where, self.fmt)
        if numbers is None:
            return BBox(x1=0.0, y1=0.0, x2=1.0, y2=1.0)
        x1, y1, x2, y2 = numbers
        if x1 > x2 or y1 > y2:
            raise RowError(f"{where}: bbox corners out of order: {value!r}")
        if self.units == "normalized":
            try:
                return BBox.from_list(numbers)
            except (ValidationError, ValueError) as exc:
                raise RowError(f"{where}: bbox {value!r} is not normalized: {exc}") from exc
        width, height = self.size(page, where)
        if x2 > width * (1 + TOLERANCE) or y2 > height * (1 + TOLERANCE) or min(x1, y1) < 0:
            raise RowError(
                f"{where}: bbox {value!r} exceeds the page ({width:.0f}x{height:.0f} points); "
                "are the boxes in another unit?"
            )
        return BBox.from_points(numbers, width, height)


def _page(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise RowError(f"{where}: page must be a 1-based integer, got {value!r}")
    if int(value) < 1:
        raise RowError(f"{where}: pages are 1-based; got {value}")
    return int(value)


def _list(row: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = row.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RowError(f"{key} must be a list of objects")
    return value


def _doc(row: dict[str, Any]) -> str:
    pdf = row.get("pdf")
    ref = pdf.get("doc_id_str") if isinstance(pdf, dict) else pdf
    if ref is None or not as_text(ref).strip():
        raise RowError("missing field 'pdf.doc_id_str'")
    return file_name(as_text(ref))


def sample_from_docscope(row: dict[str, Any], boxes: _Boxes) -> Sample:
    """One ``benchmark.json`` item as a :class:`Sample`; raises :class:`RowError`."""
    ident = row.get("id")
    if ident is None or isinstance(ident, (dict, list, bool)) or not str(ident).strip():
        raise RowError("missing field 'id'")
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RowError("missing field 'question'")
    answer = row.get("answer")
    answer = answer if isinstance(answer, dict) else {"answer_text": answer}
    text = None if answer.get("answer_text") is None else as_text(answer["answer_text"])
    answerable = answer.get("is_answerable", True)
    if not isinstance(answerable, bool):
        raise RowError(f"answer.is_answerable must be true or false, got {answerable!r}")
    if text is not None and text.strip().lower() in NOT_ANSWERABLE:
        answerable = False
    regions: list[Region] = []
    index_of: dict[str, int] = {}
    whole_page: list[int] = []
    for i, evidence in enumerate(_list(row, "evidences")):
        where = f"evidences[{i}]"
        page = _page(evidence.get("page"), where)
        if evidence.get("bbox") is None:
            whole_page.append(i)
        bbox = boxes.box(evidence.get("bbox"), page, where)
        regions.append(
            Region(page=page, bbox=bbox, element_type=evidence.get("element_type") or "text")
        )
        index_of[as_text(evidence.get("local_id", i))] = i
    facts: list[Fact] = []
    for j, fact in enumerate(_list(row, "facts")):
        ref = as_text(fact.get("evidence_local_id"))
        if ref not in index_of:
            raise RowError(f"facts[{j}] names unknown evidence {ref!r}")
        description = fact.get("text_description")
        if not isinstance(description, str) or not description.strip():
            raise RowError(f"facts[{j}] has no text_description")
        region = regions[index_of[ref]]
        facts.append(
            Fact(
                page=region.page,
                text=description,
                bbox=region.bbox,
                region_index=index_of[ref],
            )
        )
    metadata = {k: v for k, v in row.items() if k not in _OWN}
    metadata["bbox_units"] = NORMALIZED if boxes.units == "normalized" else POINTS
    if row.get("split") is not None:
        metadata["split"] = row["split"]
    if whole_page:
        metadata["whole_page_regions"] = whole_page
    metadata["evidence_ids"] = list(index_of)
    try:
        return Sample(
            id=as_text(ident).strip(),
            doc_ids=[boxes.pdf.name],
            question=question,
            answer=text,
            answerable=answerable,
            gold_pages=[r.page for r in regions],
            gold_regions=regions,
            gold_facts=facts,
            category=row.get("extract_class"),
            metadata=metadata,
        )
    except ValidationError as exc:
        raise RowError(describe_validation_error(exc)) from exc


def load_docscope(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    *,
    validate: bool = True,
    name: str | None = None,
    split: str | None = None,
    bbox_units: BBoxUnits = "auto",
    bbox_format: BBoxFormat = "xyxy",
) -> Dataset:
    """Load DocScope ``benchmark.json`` (or a folder holding it).

    ``split`` keeps one split (``"test"`` or ``"dev"``); items of other splits are reported
    as dropped with that reason. See the module docstring for ``bbox_units``.
    """
    if bbox_units not in ("auto", "normalized", "points"):
        raise DatasetError(f"bbox_units must be auto, normalized or points, got {bbox_units!r}")
    if bbox_format not in ("xyxy", "xywh"):
        raise DatasetError(f"bbox_format must be xyxy or xywh, got {bbox_format!r}")
    source = resolve_file(path, DEFAULT_FILES)
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(source)
    records = read_records(source)
    units = detect_units([r for _, r, _ in records], bbox_format)
    units = units if bbox_units == "auto" else bbox_units
    state = LoadState()
    boxes: dict[str, _Boxes] = {}
    for index, row in state.read(records):
        if split is not None and row.get("split") != split:
            state.drop(index, row.get("id"), f"split {row.get('split')!r} not selected")
            continue
        try:
            doc = _doc(row)
            handler = boxes.setdefault(doc, _Boxes(units, folder / doc, bbox_format))
            state.parsed.append((index, sample_from_docscope(row, handler)))
        except RowError as exc:
            state.drop(index, row.get("id"), str(exc))
    return finish_load(
        state,
        name=name or (f"docscope-{split}" if split else "docscope"),
        source=source,
        pdf_dir=folder,
        loader="docscope",
        validate=validate,
    )
