"""Writing a document's page file (the format :mod:`scanrag.documents.pagestore` reads):
a SQLite file with one row per page (number, text source, text, encoded record) and one
``document`` row (format and the document's fields as JSON), written under a temporary name
and moved into place when complete, with a running CRC-32 of its pages
(:mod:`scanrag.documents.pagecheck`)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scanrag.documents.pagecheck import row_crc, writer_tag
from scanrag.documents.records import EncodedPage, encode_page
from scanrag.schemas import Document, Page

FORMAT = 1
_PAGE_SIZE = 16384  # SQLite pages: a page record (~10-40 KB) spans a few, not ten

_SCHEMA = """
CREATE TABLE pages (number INTEGER PRIMARY KEY, source TEXT NOT NULL, text TEXT NOT NULL,
                    record BLOB NOT NULL);
CREATE TABLE document (format INTEGER NOT NULL, data TEXT NOT NULL);
"""


class PageWriter:
    """Writes one document's page file: ``add`` pages in order, then ``finish`` with the
    document's fields; the file appears under ``target`` only then. ``abort`` (or leaving a
    ``with`` block by an exception) removes the partial file."""

    def __init__(self, target: str | Path) -> None:
        self.target = Path(target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.target.with_name(f".{self.target.name}.{writer_tag()}.{id(self)}.tmp")
        self.tmp.unlink(missing_ok=True)
        self._conn: sqlite3.Connection | None = sqlite3.connect(self.tmp, isolation_level=None)
        self._conn.execute(f"PRAGMA page_size={_PAGE_SIZE}")
        self._conn.execute("PRAGMA journal_mode=OFF")
        self._conn.execute("PRAGMA synchronous=OFF")
        self._conn.executescript(_SCHEMA)
        self._conn.execute("BEGIN")
        self.count = 0
        self._crc = 0

    def add(self, page: Page | EncodedPage) -> None:
        number, source, text, record = encode_page(page) if isinstance(page, Page) else page
        if number != self.count + 1:
            raise ValueError(f"{self.target.name}: page {number} written after {self.count}")
        assert self._conn is not None, "the writer is closed"
        self._conn.execute("INSERT INTO pages VALUES (?, ?, ?, ?)", (number, source, text, record))
        self._crc = row_crc(self._crc, number, source, text, record)
        self.count += 1

    def add_all(self, pages: Iterable[Page | EncodedPage]) -> None:
        for page in pages:
            self.add(page)

    def finish(self, fields: dict[str, Any]) -> Path:
        """Record the document (``id``, ``name``, ``path``, ``sha256``, ``title``,
        ``metadata``; ``num_pages`` comes from the pages written) and move the file into place.

        No ``fsync``: a cache entry lost or torn by a power cut is unreadable, which
        :class:`~scanrag.documents.DocumentStore` treats as a miss (it ingests again)."""
        assert self._conn is not None, "the writer is closed"
        data = {**fields, "num_pages": self.count, "content_crc": f"{self._crc:08x}"}
        self._conn.execute("INSERT INTO document VALUES (?, ?)", (FORMAT, json.dumps(data)))
        self._conn.execute("COMMIT")
        self._conn.close()
        self._conn = None
        os.replace(self.tmp, self.target)
        return self.target

    def abort(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> PageWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if self._conn is not None:
            self.abort()


def write_document(document: Document, target: str | Path) -> Path:
    """Write an in-memory ``document`` to a page file at ``target``."""
    with PageWriter(target) as writer:
        writer.add_all(document.pages)
        return writer.finish(document_fields(document))


def document_fields(document: Document) -> dict[str, Any]:
    return {
        "id": document.id,
        "name": document.name,
        "path": document.path,
        "sha256": document.sha256,
        "title": document.title,
        "metadata": dict(document.metadata),
    }
