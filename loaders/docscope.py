"""DocScope ``benchmark.json``: a JSON array of questions with region and fact annotations.

Layout (DocScope ``code/README.md``, "Benchmark Format", and ``code/infer/benchmark_io.py``):
``{id, split ("test"|"dev"), pdf: {doc_id_str}, question, answer: {answer_text,
is_answerable}, evidences: [{local_id, page, bbox, element_type}], facts: [{local_id,
evidence_local_id, text_description}], extract_class}``. Pages are 1-based physical pages;
``bbox`` is ``[x1, y1, x2, y2]`` in pixels of a 144-DPI render, origin top-left.

Mapping: the document is ``<doc_id_str>.pdf``; every evidence becomes a gold region (in file
order) and its page a gold page; every fact becomes a gold fact on its evidence's page, with
that evidence's box and ``region_index``; ``extract_class`` becomes the category, the evidence
element types ``metadata["evidence_sources"]``, and ``split`` stays in the metadata. An
evidence without a bbox covers its whole page.

**Box units** (:mod:`scanrag.loaders.docscope_boxes`): 144-DPI pixels by default (``bbox_units=
"pixels"``, ``bbox_dpi=144``), divided by each page's displayed size read from the PDF (so the
PDF must be present, even with ``validate=False``); ``"points"`` and ``"normalized"`` read
other files, ``"auto"`` takes a file whose coordinates all lie in [0, 1] as normalized and any
other as pixels. Boxes are ``[x1, y1, x2, y2]`` unless ``bbox_format="xywh"``. The unit used
is recorded in every sample's ``metadata["bbox_units"]``; a box that ends more than 2% beyond
its page drops its row rather than being clamped, since the unit must be wrong then. The load
report's notes give the mean box area next to the paper's 9.79%.

**Profiles.** ``profile="paper"`` (the default) reads rows by the rules above. With
``profile="official"`` every row DocScope's released evaluation code scores is kept, read as
it reads them (float pages, pages past the PDF, boxes past the edge, the last of a repeated
id), and the samples ask the DocScope scorers for the official profile
(:mod:`scanrag.loaders.docscope_official`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanrag.datasets.base import Dataset, DatasetError
from scanrag.datasets.errors import DocumentPathError
from scanrag.datasets.paths import resolve_document
from scanrag.datasets.sources import (
    NOT_ANSWERABLE,
    LoadState,
    RowError,
    as_text,
    default_pdf_dir,
    file_name,
    finish_load,
    new_sample,
    read_records,
    resolve_file,
)
from scanrag.loaders.docscope_boxes import (
    NORMALIZED,
    OFFICIAL_DPI,
    POINTS,
    UNITS,
    BBoxFormat,
    BBoxUnits,
    PageBoxes,
    area_note,
    detect_units,
    pixels_label,
)
from scanrag.loaders.docscope_official import last_rows, official_sample
from scanrag.schemas import BBox, Fact, Region, Sample

__all__ = ["load_docscope", "sample_from_docscope"]

DEFAULT_FILES = ("benchmark.json",)
PROFILES = ("paper", "official")
_UNIT_LABELS = {"normalized": NORMALIZED, "points": POINTS}
_UNIT_NAMES = {"points": "PDF points", "normalized": "normalized boxes"}
_OWN = frozenset(
    {"id", "split", "pdf", "question", "answer", "evidences", "facts", "extract_class"}
)


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


def sample_from_docscope(row: dict[str, Any], boxes: PageBoxes) -> Sample:
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
            Region(
                page=page, bbox=bbox, element_type=as_text(evidence.get("element_type") or "text")
            )
        )
        index_of[as_text(evidence.get("local_id", i))] = i
    facts: list[Fact] = []
    fact_ids: list[str] = []
    for j, fact in enumerate(_list(row, "facts")):
        ref = as_text(fact.get("evidence_local_id"))
        if ref not in index_of:
            raise RowError(f"facts[{j}] names unknown evidence {ref!r}")
        description = fact.get("text_description")
        if not isinstance(description, str) or not description.strip():
            raise RowError(f"facts[{j}] has no text_description")
        region = regions[index_of[ref]]
        fact_ids.append(as_text(fact.get("local_id", f"f{j + 1}")))
        facts.append(
            Fact(
                page=region.page,
                text=description,
                bbox=region.bbox,
                region_index=index_of[ref],
            )
        )
    metadata = {k: v for k, v in row.items() if k not in _OWN}
    metadata["bbox_units"] = _UNIT_LABELS.get(boxes.units) or pixels_label(72.0 / boxes.scale)
    types = sorted({r.element_type for r in regions})
    if types:
        metadata["evidence_sources"] = types
    if row.get("split") is not None:
        metadata["split"] = row["split"]
    if whole_page:
        metadata["whole_page_regions"] = whole_page
    metadata["evidence_ids"] = list(index_of)
    if facts:
        metadata["fact_ids"] = fact_ids  # the benchmark's ids, which its fact judge reports
    return new_sample(
        id=as_text(ident).strip(),
        doc_ids=[_doc(row)],
        question=question,
        answer=text,
        answerable=answerable,
        gold_pages=[r.page for r in regions],
        gold_regions=regions,
        gold_facts=facts,
        category=row.get("extract_class"),
        metadata=metadata,
    )


def load_docscope(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    *,
    validate: bool = True,
    name: str | None = None,
    split: str | None = None,
    bbox_units: BBoxUnits = "pixels",
    bbox_dpi: float = OFFICIAL_DPI,
    bbox_format: BBoxFormat = "xyxy",
    allow_outside_pdf_dir: bool = False,
    profile: str = "paper",
) -> Dataset:
    """Load DocScope ``benchmark.json`` (or a folder holding it).

    ``split`` keeps one split (``"test"`` or ``"dev"``); items of other splits are reported
    as dropped with that reason. See the module docstring for ``bbox_units``, ``bbox_dpi``
    and ``profile``.
    """
    if profile not in PROFILES:
        raise DatasetError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    if bbox_units not in UNITS:
        raise DatasetError(f"bbox_units must be one of {', '.join(UNITS)}, got {bbox_units!r}")
    if bbox_format not in ("xyxy", "xywh"):
        raise DatasetError(f"bbox_format must be xyxy or xywh, got {bbox_format!r}")
    if isinstance(bbox_dpi, bool) or not isinstance(bbox_dpi, (int, float)) or bbox_dpi <= 0:
        raise DatasetError(f"bbox_dpi must be a positive number, got {bbox_dpi!r}")
    source = resolve_file(path, DEFAULT_FILES)
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(source)
    records = read_records(source)
    units: str = bbox_units
    if units == "auto":
        units = detect_units([r for _, r, _ in records], bbox_format)
    state = LoadState()
    boxes: dict[str, PageBoxes] = {}
    rows = list(state.read(records))
    build = sample_from_docscope
    if profile == "official":
        build = official_sample
        rows, replaced = last_rows(rows)
        for index, ident in replaced:
            state.drop(index, ident, "a later row has the same id (the released code keeps it)")
    for index, row in rows:
        if split is not None and row.get("split") != split:
            state.drop(index, row.get("id"), f"split {row.get('split')!r} not selected")
            continue
        try:
            doc = _doc(row)
            if doc not in boxes:
                boxes[doc] = _page_boxes(
                    folder, doc, units, bbox_format, float(bbox_dpi), allow_outside_pdf_dir
                )
            state.parsed.append((index, build(row, boxes[doc])))
        except RowError as exc:
            state.drop(index, row.get("id"), str(exc))
    dataset = finish_load(
        state,
        name=name or (f"docscope-{split}" if split else "docscope"),
        source=source,
        pdf_dir=folder,
        loader="docscope",
        validate=validate,
        allow_outside=allow_outside_pdf_dir,
    )
    unit_name = _UNIT_NAMES.get(units) or f"pixels at {float(bbox_dpi):g} DPI"
    note = area_note(_drawn_boxes(dataset.samples), unit_name)
    if note is not None:
        dataset.report.notes.append(note)
    return dataset


def _page_boxes(
    folder: Path, doc: str, units: str, fmt: BBoxFormat, dpi: float, allow_outside: bool = False
) -> PageBoxes:
    try:
        pdf = resolve_document(folder, doc, allow_outside=allow_outside)
    except DocumentPathError as exc:
        boxes = PageBoxes(units, None, fmt, dpi)
        boxes.refuse(str(exc))
        return boxes
    return PageBoxes(units, pdf, fmt, dpi)


def _drawn_boxes(samples: Sequence[Sample]) -> list[BBox]:
    """The gold boxes the annotators drew (whole-page evidences left out)."""
    out = []
    for sample in samples:
        whole = set(sample.metadata.get("whole_page_regions", []))
        out += [r.bbox for i, r in enumerate(sample.gold_regions) if i not in whole]
    return out
