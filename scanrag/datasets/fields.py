"""Sample fields every loader fills the same way: stable ids and the breakdown fields.

Reports break results down by document type, evidence source, answer format and number of
evidence pages. Loaders keep the first two in ``Sample.metadata`` with one type each
(:func:`normalize_metadata`: ``doc_type`` a string, ``evidence_sources`` a list of strings);
the answer format is ``Sample.answer_format`` and the page count is derived from the gold pages.
:func:`breakdown` reads all four, the one place a report should take them from.

Where a benchmark gives its rows no id, :func:`content_id` derives one from the row's own
identity (its document and question), so the same question has the same id in every file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scanrag.datasets.rows import literal
from scanrag.hashing import stable_hash
from scanrag.schemas import Sample

DOC_TYPE = "doc_type"
EVIDENCE_SOURCES = "evidence_sources"


def content_id(prefix: str, *parts: str, length: int = 12) -> str:
    """``prefix`` plus a hash of ``parts`` (whitespace runs folded, ends stripped)."""
    key = [" ".join(str(p).split()) for p in parts]
    return f"{prefix}{stable_hash(key, length=length)}"


def unique_content_ids(ids: Iterable[str]) -> list[str]:
    """``ids`` with a ``~2``, ``~3``... suffix on repeats, so that a benchmark row asked twice
    (same document and question) keeps both rows under ids that stay stable."""
    seen: dict[str, int] = {}
    out = []
    for ident in ids:
        seen[ident] = seen.get(ident, 0) + 1
        out.append(ident if seen[ident] == 1 else f"{ident}~{seen[ident]}")
    return out


def source_list(value: Any) -> list[str] | None:
    """A list of strings from ``["Chart"]``, ``"['Chart', 'Table']"``, ``'["Chart"]'`` or
    ``"Chart"``; ``None`` for ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "("):
            try:
                value = literal(text)
            except ValueError:
                return [text]
        else:
            return [text] if text else []
    if isinstance(value, (list, tuple, set)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [str(value)]


def normalize_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Give the breakdown fields of ``metadata`` their one type each (in place; returned)."""
    if EVIDENCE_SOURCES in metadata:
        sources = source_list(metadata[EVIDENCE_SOURCES])
        if sources is None:
            del metadata[EVIDENCE_SOURCES]
        else:
            metadata[EVIDENCE_SOURCES] = sources
    if DOC_TYPE in metadata:
        value = metadata[DOC_TYPE]
        if value is None or not str(value).strip():
            del metadata[DOC_TYPE]
        else:
            metadata[DOC_TYPE] = str(value).strip()
    return metadata


def breakdown(sample: Sample) -> dict[str, Any]:
    """The fields results are broken down by: ``doc_type`` (str or None), ``evidence_sources``
    (list of str), ``answer_format`` (str or None) and ``evidence_pages`` (the number of
    distinct gold pages of the primary document)."""
    meta = sample.metadata
    return {
        "doc_type": None if meta.get(DOC_TYPE) is None else str(meta[DOC_TYPE]),
        "evidence_sources": source_list(meta.get(EVIDENCE_SOURCES)) or [],
        "answer_format": sample.answer_format,
        "evidence_pages": len(sample.gold_pages),
    }
