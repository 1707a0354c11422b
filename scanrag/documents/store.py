"""Ingested documents on disk: JSON (gzip-compressed for ``.gz`` names) and a cache keyed by
file content so ingesting the same bytes twice costs one file hash."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from scanrag.documents.ingest import ingest_pdf
from scanrag.documents.pages import page_from_dict
from scanrag.hashing import doc_id_from_sha, file_sha256, stable_hash
from scanrag.schemas import Document

# Bump when extraction changes what a Document holds; older cache entries are then ignored.
STORE_VERSION = 1
_DEFAULT_OPTIONS: dict[str, Any] = {
    "ocr": "auto",
    "ocr_language": "eng",
    "ocr_dpi": 300,
    "tables": "fast",
}


def save_document(document: Document, path: str | Path) -> Path:
    """Write ``document`` as JSON (gzip when ``path`` ends in ``.gz``), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = document.model_dump_json().encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=1)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _loads(data: bytes) -> Any:
    try:
        import orjson  # ships with langgraph's SDK; several times faster than json
    except ImportError:
        return json.loads(data)
    return orjson.loads(data)


def _trusted_document(data: dict[str, Any]) -> Document:
    pages = [page_from_dict(page) for page in data["pages"]]
    if len(pages) != data["num_pages"]:
        raise ValueError(f"{data['name']}: {len(pages)} pages stored, {data['num_pages']} declared")
    return Document.model_construct(
        id=str(data["id"]),
        name=str(data["name"]),
        path=data["path"],
        sha256=str(data["sha256"]),
        num_pages=int(data["num_pages"]),
        title=data["title"],
        pages=pages,
        metadata={str(k): str(v) for k, v in data["metadata"].items()},
    )


def load_document(path: str | Path, *, trusted: bool = False) -> Document:
    """Read a document written by ``save_document``.

    By default every field is validated. ``trusted=True`` (our own cache files) skips the
    per-word validation, which otherwise costs more than ingesting the PDF again; malformed
    files still raise ``ValueError``/``KeyError``/``TypeError``.
    """
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    if trusted:
        return _trusted_document(_loads(data))
    return Document.model_validate_json(data)


class DocumentStore:
    """Cache of ingested documents under ``cache_dir``, one gzip JSON file per
    (content hash, ingestion options)."""

    def __init__(self, cache_dir: str | Path) -> None:
        self.cache_dir = Path(cache_dir)

    @staticmethod
    def options_key(**options: Any) -> str:
        unknown = set(options) - set(_DEFAULT_OPTIONS) - {"password"}
        if unknown:
            raise TypeError(f"unknown ingestion options: {sorted(unknown)}")
        merged = {**_DEFAULT_OPTIONS, **{k: v for k, v in options.items() if k != "password"}}
        return stable_hash({"version": STORE_VERSION, **merged}, length=8)

    def path_for(self, sha256: str, **options: Any) -> Path:
        return self.cache_dir / f"{sha256}.{self.options_key(**options)}.json.gz"

    def load(self, sha256: str, **options: Any) -> Document | None:
        """The cached document for this content and options, or ``None``. An unreadable cache
        file counts as a miss."""
        path = self.path_for(sha256, **options)
        if not path.is_file():
            return None
        try:
            return load_document(path, trusted=True)
        except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError):
            return None

    def save(self, document: Document, **options: Any) -> Path:
        return save_document(document, self.path_for(document.sha256, **options))

    def load_or_ingest(self, path: str | Path, **options: Any) -> Document:
        """Return the cached document for the file's content, ingesting it on a miss. The
        returned document carries the name and path it was asked for now."""
        path = Path(path)
        if path.is_file():
            sha = file_sha256(path)
            cached = self.load(sha, **options)
            if cached is not None and doc_id_from_sha(sha) == cached.id:
                return cached.model_copy(update={"name": path.name, "path": str(path.resolve())})
        document = ingest_pdf(path, **options)
        self.save(document, **options)
        return document
