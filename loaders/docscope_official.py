"""DocScope rows read as the released evaluation code reads them (``profile: official``).

DocScope's released scorers (``code/eval/eval_common.py``) keep every row with an ``id`` and
read its gold as written: an evidence page that is a number is truncated to an integer
(``4.0`` is page 4), an evidence page past the end of the PDF stays a gold page (its region
judgment fails to render), a box reaching past the page edge is drawn as it is, a fact naming
no known evidence is context for every page, and a later row with the same id replaces an
earlier one. With ``profile: official`` the loader keeps those rows too:

* the row itself goes to ``metadata["docscope_row"]`` (the official scorers read it, see
  :mod:`scanrag.evaluation.docscope.gold`), with each evidence's box on its page, normalized and
  clipped to the page, in ``metadata["evidence_boxes"]`` (``None`` where it cannot be placed:
  no PDF to measure pixel boxes, a page past the end, a page that is no number);
* the sample's own gold (``gold_pages``, ``gold_regions``, ``gold_facts``) holds what can be
  placed, so the paper profile can still score it; nothing of the row is dropped for a
  page or box problem;
* ``metadata["scoring_profile"] = "official"``: the DocScope scorers use the official profile
  for the sample unless told otherwise.
"""

from __future__ import annotations

import copy
from typing import Any

from scanrag.datasets.sources import RowError, as_text, file_name, new_sample
from scanrag.loaders.docscope_boxes import NORMALIZED, POINTS, PageBoxes, pixels_label
from scanrag.schemas import BBox, Fact, Region, Sample

PROFILE = "official"
_UNIT_LABELS = {"normalized": NORMALIZED, "points": POINTS}
_OWN = frozenset(
    {"id", "split", "pdf", "question", "answer", "evidences", "facts", "extract_class"}
)


def row_id(row: dict[str, Any]) -> str | None:
    """The row's id as the released code keys it (``id``, else ``question_id``)."""
    ident = row.get("id") or row.get("question_id")
    return str(ident) if ident else None


def _page(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _doc(row: dict[str, Any]) -> str:
    pdf = row.get("pdf")
    ref = pdf.get("doc_id_str", "") if isinstance(pdf, dict) else pdf
    if ref is None or not as_text(ref).strip():
        raise RowError("missing field 'pdf.doc_id_str'")
    return file_name(as_text(ref))


def _place(evidence: dict[str, Any], page: int | None, boxes: PageBoxes, where: str) -> BBox | None:
    """The evidence's box on its page, normalized and clipped to it; ``None`` unless the page
    exists in the PDF."""
    if page is None or page < 1:
        return None
    try:
        boxes.size(page, where)  # raises unless the PDF has this page
        return boxes.box(evidence.get("bbox"), page, where, clip=True)
    except RowError:
        return None


def _answer(row: dict[str, Any]) -> tuple[str | None, bool]:
    block = row.get("answer") or {}
    if not isinstance(block, dict):
        return as_text(block), True
    text = block.get("answer_text")
    return (None if text is None else as_text(text)), bool(block.get("is_answerable", True))


def official_sample(row: dict[str, Any], boxes: PageBoxes) -> Sample:
    """One ``benchmark.json`` row as a sample for the official profile (see the module
    docstring); raises :class:`RowError` only for a row the released code cannot read either
    (no id) or one without a document."""
    ident = row_id(row)
    if ident is None:
        raise RowError("missing field 'id'")
    listed_evidences = row.get("evidences")
    evidences: list[Any] = listed_evidences if isinstance(listed_evidences, list) else []
    placed: list[list[float] | None] = []
    regions: list[Region] = []
    region_of: dict[str, int] = {}
    for i, evidence in enumerate(evidences):
        if not isinstance(evidence, dict):
            placed.append(None)
            continue
        page = _page(evidence.get("page"))
        box = _place(evidence, page, boxes, f"evidences[{i}]")
        placed.append(box.as_list() if box is not None else None)
        if box is None or page is None:
            continue
        kind = as_text(evidence.get("element_type") or "text")
        regions.append(Region(page=page, bbox=box, element_type=kind))
        if evidence.get("local_id"):
            region_of[as_text(evidence["local_id"])] = len(regions) - 1
    facts: list[Fact] = []
    fact_ids: list[str] = []
    listed = row.get("facts")
    for j, fact in enumerate(listed if isinstance(listed, list) else []):
        ref = as_text(fact.get("evidence_local_id")) if isinstance(fact, dict) else None
        text = fact.get("text_description") if isinstance(fact, dict) else None
        if ref not in region_of or not isinstance(text, str) or not text.strip():
            continue  # context only: the row keeps it
        region = regions[region_of[ref]]
        fact_ids.append(as_text(fact.get("local_id") or f"f{j + 1}"))
        facts.append(
            Fact(page=region.page, text=text, bbox=region.bbox, region_index=region_of[ref])
        )
    answer, answerable = _answer(row)
    metadata = {k: v for k, v in row.items() if k not in _OWN}
    metadata |= {
        "bbox_units": _UNIT_LABELS.get(boxes.units) or pixels_label(72.0 / boxes.scale),
        "docscope_row": copy.deepcopy(row),
        "evidence_boxes": placed,
        "scoring_profile": PROFILE,
    }
    if row.get("split") is not None:
        metadata["split"] = row["split"]
    if facts:
        metadata["fact_ids"] = fact_ids
    question = row.get("question", "")
    question = question if isinstance(question, str) else as_text(question)
    return new_sample(
        id=ident,
        doc_ids=[_doc(row)],
        # the scorers read the row's own question; a sample needs one to be written
        question=question if question.strip() else "(no question in the benchmark row)",
        answer=answer,
        answerable=answerable,
        gold_pages=sorted({r.page for r in regions}),
        gold_regions=regions,
        gold_facts=facts,
        category=row.get("extract_class"),
        metadata=metadata,
    )


def last_rows(
    records: list[tuple[int, dict[str, Any]]],
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, str]]]:
    """The rows the released index keeps (the last of each id) and the earlier ones."""
    last: dict[str, int] = {}
    for index, row in records:
        ident = row_id(row)
        if ident is not None:
            last[ident] = index
    kept, replaced = [], []
    for index, row in records:
        ident = row_id(row)
        if ident is not None and last[ident] != index:
            replaced.append((index, ident))
        else:
            kept.append((index, row))
    return kept, replaced
