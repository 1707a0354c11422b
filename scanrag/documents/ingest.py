"""PDF → ``Document``: open and check the file, then extract every page.

Whole-file problems raise a typed ``IngestError``; a single page that fails is kept as a page
with ``error`` set so the rest of the document still arrives. ``ingest_many`` turns per-file
errors into recorded failures.
"""

from __future__ import annotations

import gc
import hashlib
import logging
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
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
from scanrag.documents.extract import OCRMode, PageOptions, page_size
from scanrag.documents.labels import labels_from_rules
from scanrag.documents.pages import assemble_page, failed_page
from scanrag.documents.parallel import (
    PageFailure,
    PageResult,
    read_pages_in_workers,
    read_pages_of,
    shutdown_pool,
    warm_pool_for,
    workers_for,
)
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
def _gc_paused() -> Iterator[None]:
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


def _page_results(
    fz_doc: Any, options: PageOptions, path: Path, password: str | None
) -> Iterator[tuple[int, PageResult]]:
    """``(index, RawPage or PageFailure)`` for every page, in order: read by worker processes
    for a long document on a multi-core machine, else here (and here for whatever is left
    when the worker pool breaks)."""
    count = fz_doc.page_count
    done = 0
    workers = workers_for(count)
    if workers > 1:
        try:
            for index, result in read_pages_in_workers(path, password, count, options, workers):
                yield index, result
                done = index + 1
        except Exception as exc:  # a broken pool, or the file changed under a worker
            log.warning("%s: parallel reading failed (%s); reading in this process", path, exc)
            if isinstance(exc, BrokenProcessPool):
                shutdown_pool()
    yield from read_pages_of(fz_doc, done, count, options)


def _read_pages(
    fz_doc: Any, labels: list[str], options: PageOptions, path: Path, password: str | None
) -> list[Page]:
    """Every page of ``fz_doc`` in order; a page that fails becomes a page with ``error``."""
    pages: list[Page] = []
    for index, result in _page_results(fz_doc, options, path, password):
        number, label = index + 1, labels[index]
        if isinstance(result, PageFailure):
            log.warning("%s, page %d: %s", fz_doc.name, number, result.message)
            width, height = page_size(fz_doc, index)
            pages.append(failed_page(number, label, width, height, result.message))
            continue
        try:
            pages.append(assemble_page(result, number, label, options.tables))
        except Exception as exc:
            log.warning("%s, page %d: %s", fz_doc.name, number, exc)
            pages.append(failed_page(number, label, result.width, result.height, exc))
    return pages


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
    path = Path(path)
    options = PageOptions(ocr=ocr, ocr_language=ocr_language, ocr_dpi=ocr_dpi, tables=tables)
    fz_doc = open_pdf(path, password)
    # hashlib releases the GIL while it digests, so the content hash is computed on a second
    # thread while this one reads the pages.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scanrag-hash") as pool:
        sha_future = pool.submit(_content_sha256, path)
        try:
            with _gc_paused():
                pages = _read_pages(fz_doc, _page_labels(fz_doc), options, path, password)
            title, meta = _metadata(fz_doc)
        finally:
            fz_doc.close()
        sha = sha_future.result()
    return Document.model_construct(
        id=doc_id_from_sha(sha),
        name=path.name,
        path=str(path.resolve()),
        sha256=sha,
        num_pages=len(pages),
        title=title,
        pages=pages,
        metadata=meta,
    )


def ingest_many(paths: Iterable[str | Path], **kwargs: Any) -> IngestBatch:
    """Ingest each file; a file that fails is recorded in ``failures`` and the rest go on.

    A batch holding several long documents starts the page-reading worker pool in the
    background (:func:`scanrag.documents.parallel.warm_pool_for`); they use it once it is up.
    """
    paths = list(paths)
    warm_pool_for([Path(p) for p in paths])
    batch = IngestBatch()
    for path in paths:
        try:
            batch.documents.append(ingest_pdf(path, **kwargs))
        except Exception as exc:  # one bad file must not stop the batch
            if not isinstance(exc, IngestError):
                log.exception("%s: unexpected ingestion failure", path)
            batch.failures.append(
                IngestFailure(path=str(path), error=type(exc).__name__, message=str(exc))
            )
    return batch
