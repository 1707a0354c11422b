"""The generic ScanRAG dataset format: one JSON object per line (JSONL).

It is the format of ``shared/data/mmlb-dev/questions.jsonl`` (MMLongBench-Doc rows), extended
with optional gold evidence. A dataset is a JSONL file plus a folder of PDFs (by default the
``pdfs/`` folder next to the file). ``docs/dataset-format.md`` holds the same description.

Required fields
    ``id``        unique string (integers are turned into strings).
    ``doc``       PDF file name inside the PDF folder, **or** ``docs``: a list of them; the first
                  is the primary document, the one gold pages/regions/facts refer to.
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
    ``task``              ``qa`` (default), ``error_detection``, ``find``, ``verify``,
                          ``chain_qa`` or ``summary``.
    ``category``          free label (question type, error family...).

Any other field (``evidence_sources``, ``doc_type``, ``num_pages``...) is kept in
``Sample.metadata``; a ``metadata`` object, if present, is merged into it as well.

Loading never fails on one bad row: a line that is not JSON, lacks a required field, carries a
malformed value, repeats an id, names a missing PDF or a page outside the PDF is dropped and
listed in ``Dataset.report.dropped`` with the reason. A missing file, or a file that is not JSONL
at all, raises :class:`~scanrag.datasets.base.DatasetError`. :func:`write_generic` writes samples
back so that loading the file gives equal :class:`~scanrag.schemas.Sample` objects.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast, get_args

from pydantic import ValidationError

from scanrag.datasets.base import (
    Dataset,
    DatasetError,
    DroppedRow,
    LoadReport,
    describe_validation_error,
    unique_ids,
    validate_against_pdfs,
)
from scanrag.schemas import (
    BBox,
    EvidencePair,
    Fact,
    GoldError,
    Region,
    Sample,
    TaskType,
)

NOT_ANSWERABLE = frozenset({"not answerable", "unanswerable"})
DEFAULT_FILES = ("questions.jsonl", "samples.jsonl")
TASKS: tuple[str, ...] = get_args(TaskType)

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


class RowError(ValueError):
    """One row cannot become a Sample; the message is the drop reason."""


# --------------------------------------------------------------------------- reading rows


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


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
    return GoldError(
        family=obj.get("family"),
        description=obj.get("description") or "",
        pages=_page_list(obj.get("pages"), f"{where} pages"),
        locations=[_region(loc, f"{where} location {j}") for j, loc in enumerate(locations)],
        reasoning_steps=obj.get("reasoning_steps") or [],
    )


def _doc_ids(row: dict[str, Any]) -> list[str]:
    docs = row.get("docs")
    doc = row.get("doc")
    if docs is not None:
        if not isinstance(docs, list) or not docs or not all(isinstance(d, str) for d in docs):
            raise RowError("docs must be a non-empty list of file names")
        if doc is not None and doc != docs[0]:
            raise RowError(f"doc {doc!r} differs from the first of docs {docs[0]!r}")
        return list(docs)
    if not isinstance(doc, str) or not doc.strip():
        raise RowError("missing field 'doc' (or 'docs')")
    return [doc]


def sample_from_row(row: dict[str, Any]) -> Sample:
    """Turn one generic-format row into a :class:`Sample`; raises :class:`RowError`."""
    if "id" not in row or row["id"] is None or isinstance(row["id"], (dict, list, bool)):
        raise RowError("missing field 'id'")
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RowError("missing field 'question'")
    answer = None if row.get("answer") is None else _as_text(row["answer"])
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        raise RowError(f"answerable must be true or false, got {answerable!r}")
    if answer is not None and answer.strip().lower() in NOT_ANSWERABLE:
        answerable = False
    task = row.get("task") or "qa"
    if task not in TASKS:
        raise RowError(f"task {task!r} is not one of {', '.join(TASKS)}")
    task_type = cast(TaskType, task)
    metadata = {k: v for k, v in row.items() if k not in RESERVED}
    extra = row.get("metadata")
    if extra is not None:
        if not isinstance(extra, dict):
            raise RowError("metadata must be an object")
        metadata.update(extra)
    try:
        return Sample(
            id=_as_text(row["id"]),
            doc_ids=_doc_ids(row),
            cited_doc_ids=row.get("cited_docs") or [],
            question=question,
            answer=answer,
            answerable=answerable,
            answer_format=row.get("answer_format"),
            gold_pages=_page_list(row.get("evidence_pages"), "evidence_pages"),
            gold_regions=[
                _region(o, f"gold_regions[{i}]")
                for i, o in enumerate(_objects(row, "gold_regions"))
            ],
            gold_facts=[
                _fact(o, f"gold_facts[{i}]") for i, o in enumerate(_objects(row, "gold_facts"))
            ],
            gold_chain=[EvidencePair(**o) for o in _objects(row, "gold_chain")],
            gold_errors=[
                _error(o, f"gold_errors[{i}]") for i, o in enumerate(_objects(row, "gold_errors"))
            ],
            gold_explanation=row.get("gold_explanation"),
            task=task_type,
            category=row.get("category"),
            metadata=metadata,
        )
    except ValidationError as exc:
        raise RowError(describe_validation_error(exc)) from exc
    except TypeError as exc:  # e.g. gold_chain item with an unexpected shape
        raise RowError(str(exc)) from exc


def _read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Yield ``(row_index, row_or_None, reason_or_None)`` for each non-blank line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not UTF-8 text, so not a JSONL file: {exc}") from exc
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if text.lstrip().startswith("["):
        raise DatasetError(f"{path} holds a JSON array; the generic format is one object a line")
    for index, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield index, None, f"line {index + 1} is not valid JSON: {exc.msg}"
            continue
        if not isinstance(row, dict):
            yield index, None, f"line {index + 1} is not a JSON object"
            continue
        yield index, row, None


def resolve_source(path: str | os.PathLike[str]) -> Path:
    """The JSONL file behind ``path``: the file itself, or ``questions.jsonl`` /
    ``samples.jsonl`` inside a folder. Raises :class:`DatasetError` if there is none."""
    source = Path(path)
    if source.is_dir():
        for name in DEFAULT_FILES:
            if (source / name).is_file():
                return source / name
        raise DatasetError(f"{source} holds none of {', '.join(DEFAULT_FILES)}")
    if not source.is_file():
        raise DatasetError(f"dataset file not found: {source}")
    return source


def load_generic(
    path_jsonl: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    validate: bool = True,
    *,
    name: str | None = None,
) -> Dataset:
    """Load a generic-format JSONL file (or a folder holding ``questions.jsonl`` or
    ``samples.jsonl``). ``pdf_dir`` defaults to the ``pdfs/`` folder next to the file (or the
    file's own folder when there is none). With ``validate`` the PDFs are checked (existence and
    page ranges); bad rows are dropped and reported, never raised."""
    source = resolve_source(path_jsonl)
    folder = Path(pdf_dir) if pdf_dir is not None else _default_pdf_dir(source)
    report = LoadReport()
    parsed: list[tuple[int, Sample]] = []
    unreadable = 0
    for index, row, reason in _read_rows(source):
        report.rows_read += 1
        if row is None:
            unreadable += 1
            report.dropped.append(DroppedRow(row=index, reason=reason or "unreadable row"))
            continue
        try:
            parsed.append((index, sample_from_row(row)))
        except RowError as exc:
            row_id = row.get("id")
            ident = None if row_id is None else _as_text(row_id)
            report.dropped.append(DroppedRow(row=index, id=ident, reason=str(exc)))
    if report.rows_read and unreadable == report.rows_read:
        raise DatasetError(f"no line of {source} is a JSON object; is it a JSONL file?")
    parsed, duplicates = unique_ids(parsed)
    report.dropped.extend(duplicates)
    samples = [s for _, s in parsed]
    if validate:
        samples, bad = validate_against_pdfs(samples, folder, rows=[r for r, _ in parsed])
        report.dropped.extend(bad)
    report.dropped.sort(key=lambda d: d.row if d.row is not None else -1)
    report.rows_kept = len(samples)
    return Dataset(
        name=name or _default_name(source),
        samples=samples,
        pdf_dir=folder,
        report=report,
        source=source,
        loader="generic",
    )


def _default_pdf_dir(source: Path) -> Path:
    sibling = source.parent / "pdfs"
    return sibling if sibling.is_dir() else source.parent


def _default_name(source: Path) -> str:
    stem = source.stem
    return (source.parent.name or stem) if f"{stem}.jsonl" in DEFAULT_FILES else stem


# --------------------------------------------------------------------------- writing rows


def _region_row(region: Region) -> dict[str, Any]:
    out: dict[str, Any] = {
        "page": region.page,
        "bbox": region.bbox.as_list(),
        "element_type": region.element_type,
    }
    if region.text is not None:
        out["text"] = region.text
    if region.doc_id is not None:
        out["doc"] = region.doc_id
    return out


def _fact_row(fact: Fact) -> dict[str, Any]:
    out: dict[str, Any] = {"page": fact.page, "text": fact.text}
    if fact.bbox is not None:
        out["bbox"] = fact.bbox.as_list()
    if fact.region_index is not None:
        out["region_index"] = fact.region_index
    if fact.doc_id is not None:
        out["doc"] = fact.doc_id
    return out


def sample_to_row(sample: Sample) -> dict[str, Any]:
    """One generic-format row for ``sample`` (inverse of :func:`sample_from_row`)."""
    row: dict[str, Any] = {"id": sample.id}
    if len(sample.doc_ids) == 1:
        row["doc"] = sample.doc_ids[0]
    else:
        row["docs"] = list(sample.doc_ids)
    row["question"] = sample.question
    row["answer"] = sample.answer
    row["answer_format"] = sample.answer_format
    row["answerable"] = sample.answerable
    row["evidence_pages"] = list(sample.gold_pages)
    clashing = {k: v for k, v in sample.metadata.items() if k in RESERVED}
    row.update({k: v for k, v in sample.metadata.items() if k not in RESERVED})
    if sample.cited_doc_ids:
        row["cited_docs"] = list(sample.cited_doc_ids)
    if sample.gold_regions:
        row["gold_regions"] = [_region_row(r) for r in sample.gold_regions]
    if sample.gold_facts:
        row["gold_facts"] = [_fact_row(f) for f in sample.gold_facts]
    if sample.gold_chain:
        row["gold_chain"] = [p.model_dump() for p in sample.gold_chain]
    if sample.gold_errors:
        row["gold_errors"] = [
            {
                "family": e.family,
                "description": e.description,
                "pages": list(e.pages),
                "locations": [_region_row(r) for r in e.locations],
                "reasoning_steps": list(e.reasoning_steps),
            }
            for e in sample.gold_errors
        ]
    if sample.gold_explanation is not None:
        row["gold_explanation"] = sample.gold_explanation
    if sample.task != "qa":
        row["task"] = sample.task
    if sample.category is not None:
        row["category"] = sample.category
    if clashing:
        row["metadata"] = clashing
    return row


def write_generic(samples: Iterable[Sample], path: str | os.PathLike[str]) -> Path:
    """Write ``samples`` as generic-format JSONL (UTF-8, one object a line); returns the path.

    The file is written to a temporary name and renamed, so a crash never leaves half a file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for sample in samples:
            fh.write(json.dumps(sample_to_row(sample), ensure_ascii=False) + "\n")
    os.replace(tmp, target)
    return target
