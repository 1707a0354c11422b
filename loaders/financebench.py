"""FinanceBench ``data/financebench_open_source.jsonl``: one question per line.

Fields of a row: ``financebench_id`` (unique, used as the sample id), ``company``,
``doc_name`` (the filing, e.g. ``"3M_2023Q2_10Q"``; the PDF is ``<doc_name>.pdf``),
``question_type``, ``question_reasoning``, ``domain_question_num``, ``question``, ``answer``,
``justification``, ``dataset_subset_label`` and ``evidence``: a list of
``{evidence_text, doc_name, evidence_page_num, evidence_text_full_page}``.

``evidence_page_num`` is **0-based** (page 0 is the first page of the PDF), so the gold page
is ``evidence_page_num + 1``. Evidence from the question's own filing becomes gold pages; the
evidence snippets are kept in ``metadata["evidence"]`` as ``{doc, page, text}`` (1-based
pages). An evidence item naming another filing adds that filing to ``doc_ids`` (after the
primary one); its pages are kept in the metadata only, since gold pages refer to the primary
document. ``evidence_text_full_page`` (a whole page of text) is left out unless
``keep_full_pages=True``. Every FinanceBench question is answerable. ``metadata["doc_type"]``
is the row's own ``doc_type`` if it has one, else the filing type ending the document name
(``10K``, ``10Q``, ``8K``, ``EARNINGS``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scanrag.datasets.base import Dataset
from scanrag.datasets.sources import (
    LoadState,
    RowError,
    as_text,
    default_pdf_dir,
    file_name,
    finish_load,
    maybe_json,
    new_sample,
    read_records,
    resolve_file,
)
from scanrag.schemas import Sample

DEFAULT_FILES = ("financebench_open_source.jsonl",)
FILING_TYPES = frozenset({"10K", "10Q", "8K", "EARNINGS"})
_OWN = frozenset({"financebench_id", "doc_name", "question", "answer", "evidence"})


def _evidence(row: dict[str, Any], primary: str, keep_full_pages: bool) -> list[dict[str, Any]]:
    items = maybe_json(row.get("evidence"))
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(e, dict) for e in items):
        raise RowError("evidence must be a list of objects")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        number = item.get("evidence_page_num")
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        if isinstance(number, bool) or not isinstance(number, int):
            raise RowError(f"evidence[{i}].evidence_page_num must be an integer, got {number!r}")
        if number < 0:
            raise RowError(f"evidence[{i}].evidence_page_num is 0-based; got {number}")
        doc = item.get("doc_name")
        entry: dict[str, Any] = {
            "doc": file_name(doc) if isinstance(doc, str) and doc.strip() else primary,
            "page": number + 1,
            "text": as_text(item.get("evidence_text") or ""),
        }
        if keep_full_pages and item.get("evidence_text_full_page"):
            entry["full_page"] = as_text(item["evidence_text_full_page"])
        out.append(entry)
    return out


def doc_type(doc_name: str) -> str | None:
    """The filing type FinanceBench writes last in a document name: ``"3M_2023Q2_10Q"`` →
    ``"10Q"`` (10K, 10Q, 8K or EARNINGS); ``None`` for another shape."""
    kind = doc_name.strip().rsplit("_", 1)[-1].upper()
    return kind if kind in FILING_TYPES else None


def sample_from_financebench(row: dict[str, Any], keep_full_pages: bool = False) -> Sample:
    """One FinanceBench row as a :class:`Sample`; raises :class:`RowError`."""
    ident = row.get("financebench_id")
    if ident is None or isinstance(ident, (dict, list, bool)) or not str(ident).strip():
        raise RowError("missing field 'financebench_id'")
    doc_name = row.get("doc_name")
    if not isinstance(doc_name, str) or not doc_name.strip():
        raise RowError("missing field 'doc_name'")
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RowError("missing field 'question'")
    primary = file_name(doc_name)
    evidence = _evidence(row, primary, keep_full_pages)
    docs = list(dict.fromkeys([primary, *(e["doc"] for e in evidence)]))
    metadata = {k: v for k, v in row.items() if k not in _OWN and v is not None}
    kind = doc_type(doc_name)
    if kind is not None:
        metadata.setdefault("doc_type", kind)
    metadata["evidence"] = evidence
    metadata["page_base_in_source"] = 0
    return new_sample(
        id=as_text(ident).strip(),
        doc_ids=docs,
        question=question,
        answer=None if row.get("answer") is None else as_text(row["answer"]),
        answerable=True,
        gold_pages=[e["page"] for e in evidence if e["doc"] == primary],
        category=row.get("question_type"),
        metadata=metadata,
    )


def load_financebench(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    *,
    validate: bool = True,
    name: str | None = None,
    keep_full_pages: bool = False,
    allow_outside_pdf_dir: bool = False,
) -> Dataset:
    """Load ``financebench_open_source.jsonl`` (or a folder holding it).

    ``pdf_dir`` defaults to ``pdfs/`` next to the file or one level up (the repository's
    ``data/`` and ``pdfs/`` folders sit side by side).
    """
    source = resolve_file(path, DEFAULT_FILES)
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(source)
    state = LoadState()
    for index, row in state.read(read_records(source)):
        try:
            state.parsed.append((index, sample_from_financebench(row, keep_full_pages)))
        except RowError as exc:
            state.drop(index, row.get("financebench_id"), str(exc))
    return finish_load(
        state,
        name=name or "financebench",
        source=source,
        pdf_dir=folder,
        loader="financebench",
        validate=validate,
        allow_outside=allow_outside_pdf_dir,
    )
