"""Ingested documents on disk: JSON files (``save_document``/``load_document``, gzip for
``.gz`` names) and the document cache, a page store keyed by file content.

:class:`DocumentStore` keeps one page file per (content hash, ingestion options) under its
folder (:mod:`scanrag.documents.pagestore`: SQLite, read page by page), so ingesting the same
bytes twice costs one file hash, and the documents it returns hold no pages in memory: their
``pages`` are read from the file on demand. Several runs share one cache
(``runner.cache_dir/documents``); a page file is written once and renamed into place, so
concurrent writers of the same document (two runs, Ray workers) leave one complete file.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scanrag.documents.extract import PageOptions
from scanrag.documents.ingest import gc_paused, read_pdfs
from scanrag.documents.pagecheck import remove_stale_tmp
from scanrag.documents.pages import page_from_dict
from scanrag.documents.pagestore import (
    SUFFIX,
    PageStoreError,
    open_document,
)
from scanrag.documents.pagewriter import PageWriter, write_document
from scanrag.documents.parallel import warm_pool_for
from scanrag.hashing import doc_id_from_sha, file_sha256, stable_hash
from scanrag.schemas import Document

log = logging.getLogger(__name__)

# Bump when extraction or the cache's format changes what a cache entry holds; older entries
# are then ignored. 2: page files (SQLite) replaced gzip JSON documents.
STORE_VERSION = 2
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
    """Cache of ingested documents under ``cache_dir``: one page file per (content hash,
    ingestion options); see the module docstring."""

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
        return self.cache_dir / f"{sha256}.{self.options_key(**options)}{SUFFIX}"

    def load(self, sha256: str, **options: Any) -> Document | None:
        """The cached document for this content and options, or ``None``. A cache file that
        cannot be used is a miss with a warning that names it and says why (unreadable,
        truncated, a page missing, pages that do not match their checksum, another
        document's pages): it is rebuilt from the PDF."""
        path = self.path_for(sha256, **options)
        if not path.is_file():
            return None
        problem = _cache_problem(path, sha256)
        if isinstance(problem, Document):
            return problem
        log.warning("document cache: %s; rebuilding it from the PDF", problem)
        return None

    def save(self, document: Document, **options: Any) -> Path:
        """Write an in-memory ``document`` into the cache."""
        return write_document(document, self.path_for(document.sha256, **options))

    def load_or_ingest(self, path: str | Path, **options: Any) -> Document:
        """Return the cached document for the file's content, ingesting it on a miss. The
        returned document carries the name and path it was asked for now."""
        ((_, result),) = list(self.ingest_many([path], **options))
        if isinstance(result, Exception):
            raise result
        return result

    def ingest_many(
        self, paths: Iterable[str | Path], **options: Any
    ) -> Iterator[tuple[Path, Document | Exception]]:
        """``(path, document)`` for each file, or ``(path, exception)`` for one that cannot be
        ingested: cache hits first, then the misses, read (by the worker pool when there are
        several long ones) and streamed into page files."""
        self.options_key(**options)  # unknown options fail before any work
        password = options.pop("password", None)
        misses: list[Path] = []
        shas: dict[Path, str] = {}
        hits: dict[str, Document | None] = {}  # by content: one look (and warning) each
        for path in map(Path, paths):
            if path.is_file():
                shas[path] = sha = file_sha256(path)
                if sha not in hits:
                    hits[sha] = self.load(sha, **options)
                cached = hits[sha]
                if cached is not None:
                    yield path, _as_asked(cached, path)
                    continue
            misses.append(path)
        if not misses:
            return
        remove_stale_tmp(self.cache_dir)  # left by a killed ingestion
        warm_pool_for(misses)
        pages_options = PageOptions(**options)
        for path, reader in read_pdfs(misses, options=pages_options, password=password, shas=shas):
            if isinstance(reader, Exception):
                yield path, reader
                continue
            target = self.path_for(shas[path], **options)
            try:
                with PageWriter(target) as writer, gc_paused():
                    writer.add_all(reader.pages(encoded=True))
                    writer.finish(reader.fields())
                yield path, open_document(target)
            except Exception as exc:  # the disk filled up, the file vanished...
                yield path, exc


def _cache_problem(path: Path, sha256: str) -> Document | str:
    """The document page file ``path`` holds for content ``sha256``, or why it cannot be
    used."""
    try:
        document = open_document(path, verify=True)
    except (PageStoreError, OSError) as exc:  # checksum mismatches included
        return str(exc)
    if document.sha256 != sha256 or document.id != doc_id_from_sha(sha256):
        return (
            f"{path}: it holds the pages of another document ({document.name!r}, content "
            f"{document.sha256[:16]}), not of content {sha256[:16]}: copied or renamed over it"
        )
    return document


def _as_asked(document: Document, path: Path) -> Document:
    return document.model_copy(update={"name": path.name, "path": str(path.resolve())})
