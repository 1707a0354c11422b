"""The page store: ingested documents on disk, one SQLite file per document, read page by page.

A document's pages are written once, as ingestion produces them, into
``<sha256>.<options>.pages.sqlite`` (see :class:`scanrag.documents.DocumentStore`): a table
``pages(number INTEGER PRIMARY KEY, source, text, record)`` and a one-row table ``document``
with the document's fields. ``record`` is the rest of the page (printed label, size, words
with boxes, layout blocks, error) as compact JSON (:mod:`scanrag.documents.records`). The
file is written (:mod:`scanrag.documents.pagewriter`) under a temporary name and renamed into
place when complete, so a reader
never sees half a document and the file never changes afterwards: readers open it read-only
and ``immutable`` (no locks, no journal), which also works on shared network storage where
SQLite's locking does not.

Why SQLite rather than Parquet: readers mostly want *one page* (an agent reads page 37, a
scorer looks at a cited region); SQLite finds it through the rowid B-tree and decodes only
that row, where Parquet's unit of reading is a row group (many pages, decompressed together).
It is in the standard library, a writer streams pages in without holding the document, and
the page text sits in its own column, so index builders read texts without decoding words.

The document row records ``content_crc``, a CRC-32 of the pages computed while they are
written; ``open_document(..., verify=True)`` (the document cache, on every hit) recomputes it
and raises :class:`PageChecksumError` for a file edited or damaged since (or older than the
checksum), which the cache rebuilds from its PDF (:mod:`scanrag.documents.pagecheck`).

:func:`open_document` returns an ordinary :class:`~scanrag.schemas.Document` whose ``pages`` is a
:class:`PageSequence`: ``len``, indexing, slicing and iteration work as on a list, pages are
decoded on demand, and a small process-wide LRU (``SCANRAG_PAGE_CACHE`` pages, default 128)
keeps the most recently read ones. A ``PageSequence`` pickles as a reference (file path and
page count), so a document sent to another process (a Ray worker) carries no page data.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from operator import index as as_index
from pathlib import Path
from typing import Any, overload
from urllib.parse import quote

from scanrag.documents.pagecheck import checksum_problem
from scanrag.documents.pages import make_block, new_page
from scanrag.documents.pagewriter import FORMAT
from scanrag.documents.records import loads
from scanrag.hashing import TextListHasher
from scanrag.schemas import Document, Page

SUFFIX = ".pages.sqlite"
ENV_CACHE = "SCANRAG_PAGE_CACHE"
_CHUNK = 64  # pages per query when iterating
_MAX_OPEN = 32  # read connections kept open per process


class PageStoreError(ValueError):
    """A page file that cannot be read (damaged, truncated, another format)."""


class PageChecksumError(PageStoreError):
    """A page file whose pages no longer match the checksum recorded when it was written."""


# --------------------------------------------------------------------------- encoding


def decode_page(number: int, source: str, text: str, record: bytes) -> Page:
    """Rebuild the ``Page`` (trusted data: no per-word validation); ``PageStoreError`` when
    the record is malformed."""
    try:
        doc_page, width, height, words, blocks, error = loads(record)
        built = [make_block(kind, x1, y1, x2, y2, btext) for kind, x1, y1, x2, y2, btext in blocks]
        return new_page(
            {
                "number": int(number),
                "doc_page": str(doc_page),
                "width": float(width),
                "height": float(height),
                "text": text,
                "words": [(w[0], w[1], w[2], w[3], w[4]) for w in words],
                "blocks": built,
                "text_source": source,
                "error": error,
            }
        )
    except (ValueError, TypeError, IndexError) as exc:
        raise PageStoreError(f"page {number}: unreadable record ({exc})") from exc


# --------------------------------------------------------------------------- reading


class _Readers:
    """Read-only connections to page files, a few kept open per process (per pid: a forked
    child never uses its parent's connections)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: OrderedDict[str, tuple[sqlite3.Connection, threading.Lock]] = OrderedDict()
        self.pid = os.getpid()

    def get(self, path: str) -> tuple[sqlite3.Connection, threading.Lock]:
        with self.lock:
            if self.pid != os.getpid():
                self.open.clear()
                self.pid = os.getpid()
            entry = self.open.get(path)
            if entry is not None:
                self.open.move_to_end(path)
                return entry
            uri = f"file:{quote(path)}?mode=ro&immutable=1"
            try:
                conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            except sqlite3.Error as exc:
                raise PageStoreError(f"{path}: cannot open the page file ({exc})") from exc
            entry = (conn, threading.Lock())
            self.open[path] = entry
            while len(self.open) > _MAX_OPEN:
                _, (old, old_lock) = self.open.popitem(last=False)
                with old_lock:
                    old.close()
            return entry

    def query(self, path: str, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        conn, lock = self.get(path)
        try:
            with lock:
                return conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise PageStoreError(f"{path}: {exc}") from exc

    def forget(self, path: str) -> None:
        with self.lock:
            entry = self.open.pop(path, None)
        if entry is not None:
            with entry[1]:
                entry[0].close()


_READERS = _Readers()


class _PageCache:
    """The most recently read pages of every page file, process-wide."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pages: OrderedDict[tuple[str, int], Page] = OrderedDict()

    @staticmethod
    def capacity() -> int:
        setting = os.environ.get(ENV_CACHE, "").strip()
        return int(setting) if setting.isdigit() else 128

    def get(self, key: tuple[str, int]) -> Page | None:
        with self.lock:
            page = self.pages.get(key)
            if page is not None:
                self.pages.move_to_end(key)
            return page

    def put(self, key: tuple[str, int], page: Page) -> None:
        capacity = self.capacity()
        with self.lock:
            self.pages[key] = page
            self.pages.move_to_end(key)
            while len(self.pages) > capacity:
                self.pages.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.pages.clear()

    def forget(self, path: str) -> None:
        """Drop the pages of one file (it was replaced)."""
        with self.lock:
            for key in [k for k in self.pages if k[0] == path]:
                del self.pages[key]


PAGE_CACHE = _PageCache()


class PageSequence(Sequence[Page]):
    """The pages of a stored document, read on demand (see the module docstring)."""

    __slots__ = ("_count", "_path", "text_hash")

    def __init__(self, path: str | Path, count: int, text_hash: str | None = None) -> None:
        self._path = str(path)
        self._count = int(count)
        self.text_hash = text_hash

    @property
    def store_path(self) -> Path:
        return Path(self._path)

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"PageSequence({self._path!r}, {self._count} pages)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PageSequence, (self._path, self._count, self.text_hash))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PageSequence) and other._path == self._path:
            return other._count == self._count
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self._count and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    @overload
    def __getitem__(self, index: int) -> Page: ...

    @overload
    def __getitem__(self, index: slice) -> list[Page]: ...

    def __getitem__(self, index: int | slice) -> Page | list[Page]:
        if isinstance(index, slice):
            numbers = range(*index.indices(self._count))
            if numbers.step != 1 or len(numbers) <= _CHUNK:  # a few pages: through the cache
                return [self[i] for i in numbers]
            return list(self._range(numbers.start + 1, numbers.stop + 1))
        i = as_index(index)
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError(f"page index {index} outside 0..{self._count - 1}")
        key = (self._path, i + 1)
        page = PAGE_CACHE.get(key)
        if page is None:
            sql = "SELECT number, source, text, record FROM pages WHERE number = ?"
            rows = _READERS.query(self._path, sql, key[1:])
            if not rows:
                raise PageStoreError(f"{self._path}: page {i + 1} is missing")
            page = decode_page(*rows[0])
            PAGE_CACHE.put(key, page)
        return page

    def __iter__(self) -> Iterator[Page]:
        return self._range(1, self._count + 1)

    def _range(self, start: int, stop: int) -> Iterator[Page]:
        """Pages ``start..stop-1`` (1-based) in order, read a chunk at a time; pages already in
        the cache are taken from it, the others are not added (a full scan would evict it)."""
        for first in range(start, stop, _CHUNK):
            last = min(stop, first + _CHUNK)
            rows = _READERS.query(
                self._path,
                "SELECT number, source, text, record FROM pages WHERE number >= ? AND number < ? "
                "ORDER BY number",
                (first, last),
            )
            if len(rows) != last - first:
                raise PageStoreError(f"{self._path}: pages {first}..{last - 1} are incomplete")
            for row in rows:
                yield PAGE_CACHE.get((self._path, row[0])) or decode_page(*row)

    def texts(self) -> Iterator[str]:
        """Every page's text in page order, without decoding words and blocks."""
        for first in range(1, self._count + 1, _CHUNK * 4):
            last = min(self._count + 1, first + _CHUNK * 4)
            rows = _READERS.query(
                self._path,
                "SELECT text FROM pages WHERE number >= ? AND number < ? ORDER BY number",
                (first, last),
            )
            if len(rows) != last - first:
                raise PageStoreError(f"{self._path}: pages {first}..{last - 1} are incomplete")
            for (text,) in rows:
                yield text

    def texts_hash(self) -> str:
        """``stable_hash`` of the page texts, computed once per sequence (streamed)."""
        if self.text_hash is None:
            hasher = TextListHasher()
            for text in self.texts():
                hasher.add(text)
            self.text_hash = hasher.hexdigest()
        return self.text_hash

    def sources(self) -> list[str]:
        """Every page's ``text_source`` in page order."""
        rows = _READERS.query(self._path, "SELECT source FROM pages ORDER BY number")
        return [source for (source,) in rows]


def open_document(path: str | Path, *, verify: bool = False, **update: Any) -> Document:
    """The document stored in page file ``path``, its pages read on demand. ``update``
    replaces fields (the runner reports the name and path a file was asked for under).
    Raises ``PageStoreError`` for a file that is not a complete page file and, with
    ``verify``, :class:`PageChecksumError` for one whose pages do not match the checksum
    recorded when it was written."""
    path = str(Path(path))
    if not os.path.isfile(path):
        raise PageStoreError(f"{path}: no such page file")
    if os.path.getsize(path) == 0:
        raise PageStoreError(f"{path}: the file is empty (0 bytes)")
    _READERS.forget(path)  # the file may have been replaced since a connection was opened
    PAGE_CACHE.forget(path)
    try:
        rows = _READERS.query(path, "SELECT format, data FROM document")
    except PageStoreError as exc:
        cause = exc.__cause__ or exc  # the SQLite error, without the path again
        raise PageStoreError(
            f"{path}: unreadable as a page file of format {FORMAT} ({cause}): damaged, cut "
            "short or another kind of file"
        ) from exc
    if len(rows) != 1 or rows[0][0] != FORMAT:
        raise PageStoreError(f"{path}: not a page file of format {FORMAT}")
    try:
        data = json.loads(rows[0][1])
        count = int(data["num_pages"])
        fields = {
            "id": str(data["id"]),
            "name": str(data["name"]),
            "path": data["path"],
            "sha256": str(data["sha256"]),
            "num_pages": count,
            "title": data["title"],
            "metadata": {str(k): str(v) for k, v in data["metadata"].items()},
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise PageStoreError(f"{path}: malformed document row ({exc})") from exc
    stored = _READERS.query(path, "SELECT count(*) FROM pages")[0][0]
    if stored != count:
        raise PageStoreError(f"{path}: {stored} pages stored, {count} declared (a page is missing)")
    if verify:
        problem = checksum_problem(path, data.get("content_crc"))
        if problem is not None:
            raise PageChecksumError(f"{path}: {problem}")
    pages = PageSequence(path, count)
    return Document.model_construct(**{**fields, **update, "pages": pages})
