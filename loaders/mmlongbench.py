"""MMLongBench-Doc ``data/samples.json``: a JSON array of question rows.

Fields of a row: ``doc_id`` (the PDF file name, e.g. ``"0e94...fbf.pdf"``), ``doc_type``,
``question``, ``answer``, ``evidence_pages`` (a *string* such as ``"[3, 5]"``, 1-based
physical pages), ``evidence_sources`` (a string such as ``"['Chart']"``) and
``answer_format`` (``Str``, ``Int``, ``Float``, ``List``, ``None``). The answer
``"Not answerable"`` marks an unanswerable question (its evidence pages are ``"[]"``).

Rows carry no id: the sample id is ``mmlongbench-doc/<hash>``, a hash of the document and the
question (whitespace folded), so the same question has the same id in every file that holds it
(the full ``samples.json``, a subset, a reordered copy). A question asked twice about the same
document keeps both rows, the second as ``<id>~2``. The row's position is kept in
``metadata["source_index"]``. (``shared/data/mmlb-dev`` was converted by hand with positional
ids ``mmlongbench-doc/NNNN``; that file is in the generic format and keeps its own ids.)

``profile`` (``official`` or ``lenient``) asks the ``mmlongbench`` scorer for that scoring
profile for these samples (``metadata["scoring_profile"]``); without it the scorer's own
default (``official``) applies. See ``docs/mmlongbench-scoring.md``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scanrag.datasets.base import Dataset, DatasetError
from scanrag.datasets.fields import content_id, unique_content_ids
from scanrag.datasets.rows import literal
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
from scanrag.schemas import Sample

ID_PREFIX = "mmlongbench-doc/"
PROFILES = ("official", "lenient")
DEFAULT_FILES = ("samples.json",)


def _literal(value: Any, field: str) -> Any:
    """Decode a Python/JSON literal stored as a string (``"[3, 5]"``, ``"['Chart']"``)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return []
    try:
        return literal(text)
    except ValueError as exc:
        shown = value if len(value) <= 80 else value[:77] + "..."
        raise RowError(f"{field} is not a list literal: {shown!r} ({exc})") from exc


def parse_pages(value: Any) -> list[int]:
    """1-based pages from ``"[3, 5]"``, ``[3, 5]``, ``"3"`` or ``3``; :class:`RowError` if bad."""
    decoded = _literal(value, "evidence_pages")
    items = decoded if isinstance(decoded, (list, tuple)) else [decoded]
    pages: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise RowError(f"evidence_pages must hold page integers, got {item!r}")
        if item < 1:
            raise RowError(f"evidence_pages are 1-based; got {item}")
        pages.append(item)
    return pages


def sample_id(row: dict[str, Any]) -> str:
    """``mmlongbench-doc/<hash of document and question>``; :class:`RowError` without them."""
    doc, question = row.get("doc_id"), row.get("question")
    if not isinstance(doc, str) or not doc.strip():
        raise RowError("missing field 'doc_id'")
    if not isinstance(question, str) or not question.strip():
        raise RowError("missing field 'question'")
    return content_id(ID_PREFIX, doc.strip(), question)


def sample_from_mmlb(row: dict[str, Any], index: int, ident: str | None = None) -> Sample:
    """One ``samples.json`` row as a :class:`Sample` (``ident`` defaults to
    :func:`sample_id`); raises :class:`RowError`."""
    ident = ident or sample_id(row)
    doc, question = str(row["doc_id"]), str(row["question"])
    answer = None if row.get("answer") is None else as_text(row["answer"])
    answerable = answer is None or answer.strip().lower() not in NOT_ANSWERABLE
    sources = _literal(row.get("evidence_sources"), "evidence_sources")
    metadata: dict[str, Any] = {"source_index": index}
    if row.get("doc_type") is not None:
        metadata["doc_type"] = row["doc_type"]
    if sources:
        metadata["evidence_sources"] = list(sources) if isinstance(sources, (list, tuple)) else []
    known = {"doc_id", "doc_type", "question", "answer", "evidence_pages", "evidence_sources"}
    metadata.update({k: v for k, v in row.items() if k not in known and k != "answer_format"})
    fmt = row.get("answer_format")
    return new_sample(
        id=ident,
        doc_ids=[doc.strip()],
        question=question,
        answer=answer,
        answerable=answerable,
        answer_format=None if fmt is None else str(fmt),
        gold_pages=parse_pages(row.get("evidence_pages")),
        metadata=metadata,
    )


def _row_ids(rows: list[tuple[int, dict[str, Any]]]) -> list[str | None]:
    """Each row's id (``None`` for a row without document or question); repeats get ``~N``."""
    found: list[str | None] = []
    for _, row in rows:
        try:
            found.append(sample_id(row))
        except RowError:
            found.append(None)
    unique = iter(unique_content_ids(i for i in found if i is not None))
    return [None if i is None else next(unique) for i in found]


def load_mmlongbench(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    *,
    validate: bool = True,
    name: str | None = None,
    allow_outside_pdf_dir: bool = False,
    profile: str | None = None,
) -> Dataset:
    """Load MMLongBench-Doc ``samples.json`` (or a folder holding it).

    ``pdf_dir`` defaults to ``pdfs/`` next to the file or one level up (the repository keeps
    ``data/samples.json`` beside ``documents/``; pass ``pdf_dir`` for that layout).
    """
    if profile is not None and profile not in PROFILES:
        raise DatasetError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    source = resolve_file(path, DEFAULT_FILES)
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(source)
    state = LoadState()
    rows = list(state.read(read_records(source)))
    idents = _row_ids(rows)
    for (index, row), ident in zip(rows, idents, strict=True):
        try:
            sample = sample_from_mmlb(row, index, ident)
        except RowError as exc:
            state.drop(index, ident, str(exc))
            continue
        if profile is not None:
            sample.metadata["scoring_profile"] = profile
        state.parsed.append((index, sample))
    return finish_load(
        state,
        name=name or "mmlongbench-doc",
        source=source,
        pdf_dir=folder,
        loader="mmlongbench",
        validate=validate,
        allow_outside=allow_outside_pdf_dir,
    )
