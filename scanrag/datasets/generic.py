"""The generic ScanRAG dataset format: one JSON object per line (JSONL).

It is the format of ``shared/data/mmlb-dev/questions.jsonl`` (MMLongBench-Doc rows), extended
with optional gold evidence. A dataset is a JSONL file plus a folder of PDFs (by default the
``pdfs/`` folder next to the file, else one folder up). ``docs/dataset-format.md`` holds the
same description.

Required fields
    ``id``        unique string (integers are turned into strings).
    ``doc``       PDF file name inside the PDF folder, **or** ``docs``: a list of them; the first
                  is the primary document, the one gold pages/regions/facts refer to. A name
                  must resolve inside the PDF folder (symlinks included) unless the dataset
                  opts in with ``allow_outside_pdf_dir``.
    ``question``  non-empty string.

Optional fields (MMLongBench-Doc)
    ``answer``          gold answer text (numbers and lists are stored as text).
    ``answer_format``   ``Str``, ``Int``, ``Float``, ``List`` or ``None``.
    ``answerable``      boolean, default true. A row whose answer is ``"Not answerable"`` or
                        ``"Unanswerable"`` (any case) is unanswerable whatever this says; the
                        answer text is kept as given.
    ``evidence_pages``  gold pages: global **1-based physical** page numbers of the primary
                        document (page 1 is the first page of the file, not the printed label).

Optional fields (ScanRAG extensions)
    ``cited_docs``        extra documents passed whole (cross-paper items).
    ``gold_regions``      ``[{"page", "bbox": [x1, y1, x2, y2], "element_type", "text", "doc"}]``
                          with ``bbox`` normalized to the page (0..1, top-left origin);
                          ``element_type`` (default ``"text"``), ``text`` and ``doc`` (a document
                          other than the primary one) are optional.
    ``gold_facts``        ``[{"page", "text", "bbox", "region_index", "doc"}]``: atomic facts;
                          ``bbox`` and ``region_index`` (into ``gold_regions``) are optional.
    ``gold_chain``        ``[{"anchor", "text", "page"}]``: SIN-Bench style evidence chain.
    ``gold_errors``       ``[{"family", "description", "pages", "locations", "reasoning_steps"}]``:
                          ScholScan style errors; ``locations`` are region objects as above.
    ``gold_explanation``  free-text explanation of the gold errors.
    ``task``              a task type of the task table (:mod:`scanrag.tasks`): ``qa``
                          (default), ``error_detection``, ``find``, ``verify``, ``chain_qa``,
                          ``summary`` or a plugin's.
    ``category``          free label (question type, error family...).

Any other field (``evidence_sources``, ``doc_type``, ``num_pages``...) is kept in
``Sample.metadata``; a ``metadata`` object, if present, is merged into it as well.
``evidence_sources`` is stored as a list of strings (``"['Chart']"`` is decoded) and
``doc_type`` as a string, as every loader does (:mod:`scanrag.datasets.fields`).

Loading never fails on one bad row: a line that is not JSON, lacks a required field, carries a
malformed value, repeats an id, names a missing PDF or a page outside the PDF is dropped and
listed in ``Dataset.report.dropped`` with the reason. A missing file, or a file that is not JSONL
at all, raises :class:`~scanrag.datasets.base.DatasetError`.
:func:`~scanrag.datasets.generic_write.write_generic` writes samples back so that loading the
file gives equal :class:`~scanrag.schemas.Sample` objects.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scanrag.datasets.base import Dataset, describe_validation_error
from scanrag.datasets.sources import (
    NOT_ANSWERABLE,
    LoadState,
    RowError,
    as_text,
    default_pdf_dir,
    finish_load,
    new_sample,
    read_records,
    resolve_file,
)
from scanrag.schemas import BBox, EvidencePair, Fact, GoldError, Region, Sample
from scanrag.tasks import check_task

__all__ = [
    "load_generic",
    "sample_from_row",
]

DEFAULT_FILES = ("questions.jsonl", "samples.jsonl")

# Row keys with a meaning of their own; everything else lands in Sample.metadata.
RESERVED = frozenset(
    {
        "id",
        "doc",
        "docs",
        "question",
        "answer",
        "answer_format",
        "answerable",
        "evidence_pages",
        "cited_docs",
        "gold_regions",
        "gold_facts",
        "gold_chain",
        "gold_errors",
        "gold_explanation",
        "task",
        "category",
        "metadata",
    }
)


# --------------------------------------------------------------------------- reading rows


def _page_list(value: Any, field: str) -> list[int]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    pages: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str, float)):
            raise RowError(f"{field} must hold 1-based page integers, got {item!r}")
        try:
            number = int(item)
        except ValueError as exc:
            raise RowError(f"{field} must hold 1-based page integers, got {item!r}") from exc
        if number != item and str(number) != str(item).strip():
            raise RowError(f"{field} must hold 1-based page integers, got {item!r}")
        if number < 1:
            raise RowError(f"{field} are 1-based; got {number}")
        pages.append(number)
    return pages


def _objects(row: dict[str, Any], field: str) -> list[dict[str, Any]]:
    value = row.get(field)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RowError(f"{field} must be a list of objects")
    return value


def _bbox(value: Any, where: str) -> BBox | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise RowError(f"{where}: bbox must be [x1, y1, x2, y2], got {value!r}")
    try:
        return BBox.from_list(value)
    except ValidationError as exc:
        raise RowError(f"{where}: bbox {describe_validation_error(exc)}") from exc
    except (ValueError, TypeError) as exc:
        raise RowError(f"{where}: {exc}") from exc


def _region(obj: dict[str, Any], where: str) -> Region:
    if "page" not in obj or "bbox" not in obj:
        raise RowError(f"{where} needs 'page' and 'bbox'")
    bbox = _bbox(obj["bbox"], where)
    if bbox is None:
        raise RowError(f"{where} needs a bbox")
    try:
        return Region(
            page=obj["page"],
            bbox=bbox,
            element_type=obj.get("element_type") or "text",
            text=obj.get("text"),
            doc_id=obj.get("doc"),
        )
    except ValidationError as exc:
        raise RowError(f"{where}: {describe_validation_error(exc)}") from exc


def _fact(obj: dict[str, Any], where: str) -> Fact:
    if "page" not in obj or "text" not in obj:
        raise RowError(f"{where} needs 'page' and 'text'")
    try:
        return Fact(
            page=obj["page"],
            text=obj["text"],
            bbox=_bbox(obj.get("bbox"), where),
            region_index=obj.get("region_index"),
            doc_id=obj.get("doc"),
        )
    except ValidationError as exc:
        raise RowError(f"{where}: {describe_validation_error(exc)}") from exc


def _error(obj: dict[str, Any], where: str) -> GoldError:
    locations = obj.get("locations") or []
    if not isinstance(locations, list) or not all(isinstance(v, dict) for v in locations):
        raise RowError(f"{where}: locations must be a list of region objects")
    pages = _page_list(obj.get("pages"), f"{where} pages")
    regions = [_region(loc, f"{where} location {j}") for j, loc in enumerate(locations)]
    try:
        return GoldError(
            family=obj.get("family"),
            description=obj.get("description") or "",
            pages=pages,
            locations=regions,
            reasoning_steps=obj.get("reasoning_steps") or [],
        )
    except ValidationError as exc:
        raise RowError(f"{where}: {describe_validation_error(exc)}") from exc


def _chain(row: dict[str, Any]) -> list[EvidencePair]:
    pairs = []
    for i, obj in enumerate(_objects(row, "gold_chain")):
        try:
            pairs.append(EvidencePair(**obj))
        except ValidationError as exc:
            raise RowError(f"gold_chain[{i}]: {describe_validation_error(exc)}") from exc
        except TypeError as exc:  # a key EvidencePair does not take
            raise RowError(f"gold_chain[{i}]: {exc}") from exc
    return pairs


def _doc_ids(row: dict[str, Any]) -> list[str]:
    docs = row.get("docs")
    doc = row.get("doc")
    if docs is not None:
        if not isinstance(docs, list) or not docs or not all(isinstance(d, str) for d in docs):
            raise RowError("docs must be a non-empty list of file names")
        if doc is not None and doc != docs[0]:
            raise RowError(f"doc {doc!r} differs from the first of docs {docs[0]!r}")
        return list(docs)
    if "doc" not in row:
        raise RowError("missing field 'doc' (or 'docs')")
    return [_text_field(row, "doc")]


def _kind(value: Any) -> str:
    """How a wrong value reads in a message: ``null``, ``a list ([1, 2])``..."""
    if value is None:
        return "null"
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} ({shown})"


def _text_field(row: dict[str, Any], name: str) -> str:
    """Field ``name`` of ``row``, a non-empty string, or a :class:`RowError` that says
    whether it is missing, null, empty or of another type."""
    if name not in row:
        raise RowError(f"missing field {name!r}")
    value = row[name]
    if not isinstance(value, str):
        raise RowError(f"field {name!r} must be a non-empty string, got {_kind(value)}")
    if not value.strip():
        raise RowError(f"field {name!r} is empty")
    return value


def sample_from_row(row: dict[str, Any]) -> Sample:
    """Turn one generic-format row into a :class:`Sample`; raises :class:`RowError`."""
    if "id" not in row:
        raise RowError("missing field 'id'")
    if row["id"] is None or isinstance(row["id"], (dict, list, bool)):
        raise RowError(f"field 'id' must be a string or a number, got {_kind(row['id'])}")
    question = _text_field(row, "question")
    answer = None if row.get("answer") is None else as_text(row["answer"])
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        raise RowError(f"answerable must be true or false, got {answerable!r}")
    if answer is not None and answer.strip().lower() in NOT_ANSWERABLE:
        answerable = False
    try:
        task = check_task(row.get("task") or "qa")
    except ValueError as exc:
        raise RowError(str(exc)) from exc
    metadata = {k: v for k, v in row.items() if k not in RESERVED}
    extra = row.get("metadata")
    if extra is not None:
        if not isinstance(extra, dict):
            raise RowError("metadata must be an object")
        metadata.update(extra)
    return new_sample(
        id=as_text(row["id"]),
        doc_ids=_doc_ids(row),
        cited_doc_ids=row.get("cited_docs") or [],
        question=question,
        answer=answer,
        answerable=answerable,
        answer_format=row.get("answer_format"),
        gold_pages=_page_list(row.get("evidence_pages"), "evidence_pages"),
        gold_regions=[
            _region(o, f"gold_regions[{i}]") for i, o in enumerate(_objects(row, "gold_regions"))
        ],
        gold_facts=[
            _fact(o, f"gold_facts[{i}]") for i, o in enumerate(_objects(row, "gold_facts"))
        ],
        gold_chain=_chain(row),
        gold_errors=[
            _error(o, f"gold_errors[{i}]") for i, o in enumerate(_objects(row, "gold_errors"))
        ],
        gold_explanation=row.get("gold_explanation"),
        task=task,
        category=row.get("category"),
        metadata=metadata,
    )


def load_generic(
    path_jsonl: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    validate: bool = True,
    *,
    name: str | None = None,
    allow_outside_pdf_dir: bool = False,
) -> Dataset:
    """Load a generic-format JSONL file (or a folder holding ``questions.jsonl`` or
    ``samples.jsonl``). ``pdf_dir`` defaults to ``pdfs/`` next to the file, else ``pdfs/`` one
    folder up, else the file's own folder. With ``validate`` the PDFs are checked (inside
    ``pdf_dir`` unless ``allow_outside_pdf_dir``, existence, page ranges); bad rows are dropped
    and reported, never raised."""
    source = resolve_file(path_jsonl, DEFAULT_FILES)
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(source)
    state = LoadState()
    for index, row in state.read(read_records(source, arrays=False)):
        try:
            state.parsed.append((index, sample_from_row(row)))
        except RowError as exc:
            state.drop(index, row.get("id"), str(exc))
    return finish_load(
        state,
        name=name or _default_name(source),
        source=source,
        pdf_dir=folder,
        loader="generic",
        validate=validate,
        page_counts=False,  # samples read back equal to the ones written
        allow_outside=allow_outside_pdf_dir,
    )


def _default_name(source: Path) -> str:
    stem = source.stem
    return (source.parent.name or stem) if f"{stem}.jsonl" in DEFAULT_FILES else stem
