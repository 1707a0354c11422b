"""PDF → ``Document``: open and check the file, then extract every page.

Whole-file problems raise a typed ``IngestError``; a single page that fails is kept as a page
with ``error`` set so the rest of the document still arrives. ``ingest_many`` turns per-file
errors into recorded failures.

:func:`read_pdfs` is the one reading loop: it opens each file, hands its pages to the worker
pool when one runs (:mod:`scanrag.documents.parallel`; the next document's pages are handed
over before the current one's are collected) and yields a :class:`PdfPages` per file whose
``pages()`` are the pages in order, either ``Page`` objects read here or pages encoded by a
worker. ``ingest_pdf``/``ingest_many`` collect them into documents in memory; the document
cache streams them into its page store (:mod:`scanrag.documents.store`) without ever holding
a whole document.
"""

from __future__ import annotations

import gc
import hashlib
import logging
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from scanrag.documents.errors import (
    CorruptPDFError,
    EmptyPDFError,
    EncryptedPDFError,
    IngestError,
    MissingFileError,
    NotAPDFError,
)
from scanrag.documents.extract import OCRMode, PageOptions
from scanrag.documents.labels import labels_from_rules
from scanrag.documents.pages import read_document_page, read_document_record
from scanrag.documents.pagestore import decode_page
from scanrag.documents.parallel import (
    RangeResult,
    plan_units,
    shutdown_pool,
    submit_range,
    warm_pool_for,
)
from scanrag.documents.records import EncodedPage
from scanrag.documents.tables import TableMode
from scanrag.hashing import doc_id_from_sha, file_sha256
from scanrag.schemas import Document, Page

log = logging.getLogger(__name__)

# The PDF header may sit anywhere in the first 1024 bytes (ISO 32000-1, 7.5.2 note).
_HEADER_WINDOW = 1024

REPAIRED_WARNING = (
    "the file is damaged (e.g. a broken or missing cross-reference table) and MuPDF repaired "
    "it when opening it; text or pages may be missing"
)
"""``Document.metadata["warning"]`` of a PDF MuPDF had to repair (``metadata["repaired"]`` is
``"true"``); the runner copies document warnings into each item's trajectory."""


class IngestFailure(BaseModel):
    """One file of a batch that could not be ingested."""

    path: str
    error: str = Field(description="Exception class name, e.g. EncryptedPDFError.")
    message: str


class IngestBatch(BaseModel):
    """Result of ``ingest_many``: the documents that were read and the files that were not."""

    documents: list[Document] = Field(default_factory=list)
    failures: list[IngestFailure] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _check_header(path: Path) -> None:
    if not path.is_file():
        raise MissingFileError(path)
    with open(path, "rb") as fh:
        head = fh.read(_HEADER_WINDOW)
    if not head:
        raise NotAPDFError(path, "the file is empty")
    if b"%PDF-" not in head:
        raise NotAPDFError(path, "no %PDF- header in the first 1024 bytes")


def open_pdf(path: str | Path, password: str | None = None) -> Any:
    """Open ``path`` with PyMuPDF after checking it is a readable, unlocked PDF with pages."""
    import pymupdf

    path = Path(path)
    _check_header(path)
    try:
        fz_doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:
        raise CorruptPDFError(path, str(exc) or type(exc).__name__) from exc
    if fz_doc.needs_pass and not (password and fz_doc.authenticate(password)):
        fz_doc.close()
        detail = "wrong password" if password else "no password given"
        raise EncryptedPDFError(path, detail)
    try:
        count = fz_doc.page_count
    except Exception as exc:
        fz_doc.close()
        raise CorruptPDFError(path, str(exc)) from exc
    if count == 0:
        repaired = fz_doc.is_repaired
        fz_doc.close()
        if repaired:
            raise CorruptPDFError(path, "no readable page tree")
        raise EmptyPDFError(path)
    return fz_doc


def _page_labels(fz_doc: Any) -> list[str]:
    try:
        rules = fz_doc.get_page_labels()
    except Exception:  # a broken label tree is not worth losing the document over
        log.warning("%s: unreadable page labels, detecting printed numbers instead", fz_doc.name)
        rules = []
    return labels_from_rules(rules, fz_doc.page_count) if rules else [""] * fz_doc.page_count


def _metadata(fz_doc: Any) -> tuple[str | None, dict[str, str]]:
    raw = fz_doc.metadata or {}
    meta = {key: str(value) for key, value in raw.items() if value}
    if fz_doc.is_repaired:
        meta["repaired"] = "true"
        meta["warning"] = REPAIRED_WARNING
    title = (raw.get("title") or "").strip() or None
    return title, meta


_WHOLE_FILE_HASH_LIMIT = 256 << 20


def _content_sha256(path: Path) -> str:
    """SHA-256 of the file. Files up to 256 MiB are hashed in one call, during which hashlib
    releases the GIL for the whole digest, so it runs beside the page extraction."""
    if path.stat().st_size > _WHOLE_FILE_HASH_LIMIT:
        return file_sha256(path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a document's pages are built.

    A page allocates hundreds of tuples and small models, none in reference cycles. With the
    collector on, every ~700 allocations trigger a pass that also revisits the pages already
    built, which costs about a third of the Python time per page. It resumes afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# A page as a reader yields it: built here, or encoded by a worker process.
PageItem = Page | EncodedPage


@dataclass
class PdfPages:
    """One opened PDF whose pages are being read (see :func:`read_pdfs`)."""

    path: Path
    fz_doc: Any
    labels: list[str]
    options: PageOptions
    password: str | None
    sha: str | Future[str]
    units: list[tuple[int, int, Future[RangeResult]]] = field(default_factory=list)

    @property
    def page_count(self) -> int:
        return len(self.labels)

    def pages(self, encoded: bool = False) -> Iterator[PageItem]:
        """Every page in order: from the workers' units first (encoded), then (for a pool that
        broke part way, or when no unit was handed out) read here: as ``Page`` objects, or
        encoded too when ``encoded`` (the page store's writer asks for that)."""
        done = 0
        try:
            for start, _stop, future in self.units:
                records, failed = future.result()
                for number, message in failed:
                    log.warning("%s, page %d: %s", self.path.name, number, message)
                if start != done:  # cannot happen: units are contiguous and in order
                    raise RuntimeError(f"page range starts at {start}, expected {done}")
                yield from records
                done = start + len(records)
        except Exception as exc:  # a broken pool, or the file changed under a worker
            log.warning("%s: parallel reading failed (%s); reading in this process", self.path, exc)
            if isinstance(exc, BrokenProcessPool):
                shutdown_pool()
        finally:
            for _, _, future in self.units:
                future.cancel()
        for index in range(done, self.page_count):
            label = self.labels[index]
            item: PageItem
            if encoded:
                item, error = read_document_record(self.fz_doc, index, label, self.options)
            else:
                item = read_document_page(self.fz_doc, index, label, self.options)
                error = item.error
            if error is not None:
                log.warning("%s, page %d: %s", self.path.name, index + 1, error)
            yield item

    def fields(self) -> dict[str, Any]:
        """The document's fields besides its pages (waits for the content hash)."""
        sha = self.sha if isinstance(self.sha, str) else self.sha.result()
        title, meta = _metadata(self.fz_doc)
        return {
            "id": doc_id_from_sha(sha),
            "name": self.path.name,
            "path": str(self.path.resolve()),
            "sha256": sha,
            "title": title,
            "metadata": meta,
        }

    def close(self) -> None:
        for _, _, future in self.units:
            future.cancel()
        if not self.fz_doc.is_closed:
            self.fz_doc.close()


def _open_pages(
    path: Path,
    options: PageOptions,
    password: str | None,
    sha: str | Future[str],
    in_batch: bool,
) -> PdfPages:
    fz_doc = open_pdf(path, password)
    try:
        labels = _page_labels(fz_doc)
        reader = PdfPages(path, fz_doc, labels, options, password, sha)
        for start, stop in plan_units(len(labels), whole_if_short=in_batch):
            future = submit_range(path, password, start, stop, options, labels[start:stop])
            reader.units.append((start, stop, future))
    except BaseException:
        fz_doc.close()
        raise
    return reader


def read_pdfs(
    paths: Iterable[str | Path],
    *,
    options: PageOptions,
    password: str | None = None,
    shas: dict[Path, str] | None = None,
) -> Iterator[tuple[Path, PdfPages | Exception]]:
    """``(path, PdfPages)`` for each file in order, or ``(path, exception)`` for a file that
    cannot be opened. Consume each document's ``pages()`` before asking for the next: when
    the worker pool runs, the pages of the documents after it are already being read (up to
    :data:`LOOKAHEAD_DOCS` documents and :data:`LOOKAHEAD_PAGES` pages ahead). The
    content hash is computed on a second thread (hashlib releases the GIL) unless ``shas``
    knows it. Each yielded ``PdfPages`` is closed when the next one is asked for."""
    files = [Path(p) for p in paths]
    in_batch = len(files) > 1
    queue: deque[tuple[Path, PdfPages | Exception]] = deque()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scanrag-hash") as hasher:

        def opened(path: Path) -> tuple[Path, PdfPages | Exception]:
            try:
                known = (shas or {}).get(path)
                sha = known or hasher.submit(_content_sha256, path)
                return path, _open_pages(path, options, password, sha, in_batch)
            except Exception as exc:
                return path, exc

        def emit() -> Iterator[tuple[Path, PdfPages | Exception]]:
            path, item = queue.popleft()
            try:
                yield path, item
            finally:
                if isinstance(item, PdfPages):
                    item.close()

        try:
            for path in files:
                queue.append(opened(path))
                while len(queue) > 1 and not _room_ahead(queue):
                    yield from emit()
            while queue:
                yield from emit()
        finally:
            for _, item in queue:
                if isinstance(item, PdfPages):
                    item.close()


# Documents handed to the workers ahead of the one collected: several keep both workers busy
# past a short one, bounded in documents and pages so the encoded pages waiting stay small.
LOOKAHEAD_DOCS = 4
LOOKAHEAD_PAGES = 1024


def _room_ahead(queue: deque[tuple[Path, PdfPages | Exception]]) -> bool:
    """Whether another document may be opened (and handed to the workers) before the first
    queued one is collected: every queued one after it went to the workers, within the
    bounds above."""
    ahead = [item for _, item in list(queue)[1:]]
    if len(ahead) >= LOOKAHEAD_DOCS:
        return False
    readers = [item for item in ahead if isinstance(item, PdfPages)]
    if any(not reader.units for reader in readers):  # read here: nothing to overlap
        return False
    return sum(reader.page_count for reader in readers) < LOOKAHEAD_PAGES


def collect_document(reader: PdfPages) -> Document:
    """The whole document in memory (pages encoded by workers are decoded here)."""
    with gc_paused():
        pages = [p if isinstance(p, Page) else decode_page(*p) for p in reader.pages()]
    return Document.model_construct(**reader.fields(), num_pages=len(pages), pages=pages)


def ingest_pdf(
    path: str | Path,
    *,
    ocr: OCRMode = "auto",
    ocr_language: str = "eng",
    ocr_dpi: int = 300,
    tables: TableMode = "fast",
    password: str | None = None,
) -> Document:
    """Read a PDF into a ``Document``.

    ``ocr``: ``auto`` OCRs pages with (almost) no text layer that carry images, ``force`` OCRs
    every page, ``never`` none. ``tables``: see ``scanrag.documents.tables``.
    Raises ``MissingFileError``, ``NotAPDFError``, ``CorruptPDFError``, ``EncryptedPDFError``
    or ``EmptyPDFError`` for a file that cannot be read at all.
    """
    options = PageOptions(ocr=ocr, ocr_language=ocr_language, ocr_dpi=ocr_dpi, tables=tables)
    ((_, result),) = list(_collected(read_pdfs([path], options=options, password=password)))
    if isinstance(result, Exception):
        raise result
    return result


def _collected(
    readers: Iterator[tuple[Path, PdfPages | Exception]],
) -> Iterator[tuple[Path, Document | Exception]]:
    for path, reader in readers:
        if isinstance(reader, Exception):
            yield path, reader
            continue
        try:
            document: Document | Exception = collect_document(reader)
        except Exception as exc:  # the file vanished while its hash was computed...
            document = exc
        yield path, document


def ingest_many(paths: Iterable[str | Path], **kwargs: Any) -> IngestBatch:
    """Ingest each file; a file that fails is recorded in ``failures`` and the rest go on.

    A batch holding several long documents starts the page-reading worker pool in the
    background (:func:`scanrag.documents.parallel.warm_pool_for`); they use it once it is up.
    """
    files = [Path(p) for p in paths]
    password = kwargs.pop("password", None)
    unknown = set(kwargs) - {"ocr", "ocr_language", "ocr_dpi", "tables"}
    if unknown:
        raise TypeError(f"unknown ingestion options: {sorted(unknown)}")
    warm_pool_for(files)
    batch = IngestBatch()
    readers = read_pdfs(files, options=PageOptions(**kwargs), password=password)
    for path, result in _collected(readers):
        if isinstance(result, Document):
            batch.documents.append(result)
            continue
        if not isinstance(result, IngestError):
            log.error("%s: unexpected ingestion failure: %r", path, result)
        batch.failures.append(
            IngestFailure(path=str(path), error=type(result).__name__, message=str(result))
        )
    return batch
