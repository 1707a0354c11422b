"""ScholScan items (task ``error_detection``): a JSON array or JSONL of audit questions.

ScholScan publishes its data as JSON arrays (``final_image.json``, ``final_text.json`` and the
``*_rag.json`` variants with oracle pages). The field names below are the ones its inference
and evaluation scripts read; the aliases in brackets are accepted too, because the paper's
generation prompts use slightly different names. **Assumed layout** (documented in
``docs/dataset-format.md``):

* ``id`` (required) — the sample id, as given;
* ``question`` (required) — the target-free audit question;
* ``explanation`` — the gold explanation E the extractor judge compares answers with;
* ``Error Type`` [``error_type``, ``category``] — the error family: a letter A–I (the
  official files' convention, A = RQD … I = LE), a code (``RCA``) or a full name
  (``Referential & Citation Alignment``); stored as the code;
* ``Type`` [``type``] — how the item was made: ``Intra-Generate``, ``Intra-Sample`` or
  ``Inter-Generate`` (cross-paper); kept as ``metadata["source_type"]``;
* ``source`` [``pdf``, ``paper``, ``doc``] (required) — the (citing) paper's PDF; only its
  file name is used;
* ``evidence_file`` [``cited_paper``, ``cited_pdf``; ``cited_docs`` for a list] — the cited
  paper of a cross-paper item → ``cited_doc_ids`` (passed whole, never retrieved);
* ``rag_pages`` [``evidence_pages``, ``oracle_pages``] — 1-based gold pages of the citing
  paper (the oracle setting's input);
* ``modify`` — the generator's edits ``[{location, old_str, new_str}]``; kept in
  ``metadata["edits"]``; when there are no ``rag_pages``, page numbers written in the
  locations ("p. 6", "Page 6") become the gold pages;
* ``has_error`` [``error_exists``, ``existence``] — optional; ``false`` marks a negative item
  whose paper has no target error (no gold error is recorded then).

Everything else lands in ``Sample.metadata``. A positive item gets one
:class:`~scanrag.schemas.GoldError` (family, explanation, pages).
"""

from __future__ import annotations

import os
import re
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
    new_sample,
    read_records,
    resolve_file,
)
from scanrag.parsing import parse_verdict
from scanrag.schemas import GoldError, Sample
from scanrag.schemas.families import family_code

__all__ = ["load_scholscan", "sample_from_scholscan"]

DEFAULT_FILES = ("final_image_rag.json", "final_text_rag.json", "final_image.json")
_FIELDS = {
    "family": ("Error Type", "error_type", "category"),
    "kind": ("Type", "type"),
    "doc": ("source", "pdf", "paper", "doc"),
    "cited": ("evidence_file", "cited_paper", "cited_pdf", "cited_docs"),
    "pages": ("rag_pages", "evidence_pages", "oracle_pages"),
    "exists": ("has_error", "error_exists", "existence"),
}
_OWN = frozenset({"id", "question", "explanation", "modify", *sum(_FIELDS.values(), ())})
_PAGE_IN_TEXT = re.compile(r"\b(?:p|pp|pg|page)\.?\s*(\d{1,4})\b", re.IGNORECASE)


def _first(row: dict[str, Any], key: str) -> Any:
    for name in _FIELDS[key]:
        if row.get(name) is not None:
            return row[name]
    return None


def _pages(value: Any, field: str) -> list[int]:
    items = value if isinstance(value, list) else [value]
    pages: list[int] = []
    for item in items:
        text = str(item).strip()
        if isinstance(item, bool) or not text.isdigit():
            raise RowError(f"{field} must hold 1-based page integers, got {item!r}")
        if int(text) < 1:
            raise RowError(f"{field} are 1-based; got {text}")
        pages.append(int(text))
    return pages


def _edits(row: dict[str, Any]) -> list[dict[str, Any]]:
    edits = row.get("modify")
    if edits is None:
        return []
    if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
        raise RowError("modify must be a list of {location, old_str, new_str} objects")
    return edits


def _exists(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_verdict(value, strict=True) is True
    return bool(value)


def _cited(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value] if value else []
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise RowError("the cited paper must be a file name (or a list of them)")
    return [file_name(v) for v in values]


def sample_from_scholscan(row: dict[str, Any]) -> Sample:
    """One ScholScan item as a :class:`Sample`; raises :class:`RowError`."""
    ident = row.get("id")
    if ident is None or isinstance(ident, (dict, list, bool)) or not str(ident).strip():
        raise RowError("missing field 'id'")
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RowError("missing field 'question'")
    doc = _first(row, "doc")
    if not isinstance(doc, str) or not doc.strip():
        raise RowError("missing field 'source' (the paper's PDF)")
    edits = _edits(row)
    raw_pages = _first(row, "pages")
    if raw_pages is not None:
        pages = _pages(raw_pages, "rag_pages")
    else:
        found = [_PAGE_IN_TEXT.findall(as_text(e.get("location", ""))) for e in edits]
        pages = sorted({int(p) for group in found for p in group if int(p) >= 1})
    raw_family = _first(row, "family")
    family = family_code(raw_family)
    explanation = row.get("explanation")
    explanation = None if explanation is None else as_text(explanation)
    exists = _exists(_first(row, "exists"))
    metadata = {k: v for k, v in row.items() if k not in _OWN}
    kind = _first(row, "kind")
    if kind is not None:
        metadata["source_type"] = kind
    if raw_family is not None and family != raw_family:
        metadata["error_type_raw"] = raw_family
    if edits:
        metadata["edits"] = edits
    if exists is not None:
        metadata["has_error"] = exists
    errors = []
    if exists is not False and (explanation or family or pages):
        errors = [GoldError(family=family, description=explanation or "", pages=pages)]
    return new_sample(
        id=as_text(ident).strip(),
        doc_ids=[file_name(doc)],
        cited_doc_ids=_cited(_first(row, "cited")),
        question=question,
        gold_pages=pages,
        gold_errors=errors,
        gold_explanation=explanation,
        task="error_detection",
        category=family,
        metadata=metadata,
    )


def load_scholscan(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    *,
    validate: bool = True,
    name: str | None = None,
    allow_outside_pdf_dir: bool = False,
) -> Dataset:
    """Load ScholScan items (a JSON array or JSONL file, or a folder holding
    ``final_image_rag.json``...). ``pdf_dir`` defaults to ``pdfs/`` next to the file or one
    level up; pass the repository's ``data/origin_pdf`` for its own layout."""
    source = resolve_file(path, DEFAULT_FILES)
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(source)
    state = LoadState()
    for index, row in state.read(read_records(source)):
        try:
            state.parsed.append((index, sample_from_scholscan(row)))
        except RowError as exc:
            state.drop(index, row.get("id"), str(exc))
    return finish_load(
        state,
        name=name or source.stem,
        source=source,
        pdf_dir=folder,
        loader="scholscan",
        validate=validate,
        allow_outside=allow_outside_pdf_dir,
    )
