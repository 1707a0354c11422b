"""Page extraction of long PDFs spread over worker processes, for batches of documents.

MuPDF holds Python's GIL while it builds a page's text layer, which is most of the cost of
ingestion, so threads cannot share that work. A batch (``ingest_many``, the runner's ingest
stage) calls :func:`warm_pool`, which starts a pool of worker processes in the background;
once it is up, every document of at least ``2 × MIN_PAGES_PER_WORKER`` pages has contiguous
page ranges read in the workers (each opens the file itself), which return plain tuples
(``RawPage``) that this process turns into models in page order while the workers read on.
A lone ``ingest_pdf`` never waits for a pool to start: until one is ready, pages are read
here. The output is identical either way.

The pool uses the ``forkserver`` start method (forking a process that runs threads, as the
runner does, is unsafe); its server preloads :mod:`scanrag.documents.page_worker` and PyMuPDF
so workers start in milliseconds, and it stays up for later documents. Workers never import
the caller's ``__main__`` (multiprocessing would re-run a script, or fail for code typed into
``python -``): the main module is hidden while they start. ``SCANRAG_INGEST_WORKERS`` sets the
number of workers (``1`` switches parallel reading off). A pool that breaks (a worker killed)
makes the document fall back to reading in this process.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanrag.documents.extract import PageOptions, RawPage, read_page

log = logging.getLogger(__name__)

MIN_PAGES_PER_WORKER = 16
CHUNKS_PER_WORKER = 2  # more, smaller ranges: this process starts assembling sooner
ENV_WORKERS = "SCANRAG_INGEST_WORKERS"
WORKER_MODULE = "scanrag.documents.page_worker"


@dataclass(frozen=True)
class PageFailure:
    """A page a worker could not read, with the reason (exceptions may not pickle)."""

    message: str


PageResult = RawPage | PageFailure


def read_pages_of(
    fz_doc: Any, start: int, stop: int, options: PageOptions
) -> Iterator[tuple[int, PageResult]]:
    """``(index, result)`` for pages ``start..stop-1`` (0-based) of an open document; a page
    that fails gives a ``PageFailure`` and the others go on. Used here and in the workers."""
    for index in range(start, stop):
        try:
            yield index, read_page(fz_doc.load_page(index), options)
        except Exception as exc:  # one unreadable page must not cost the document
            yield index, PageFailure(f"{type(exc).__name__}: {exc}")


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pool_size() -> int:
    """Worker processes to use: ``SCANRAG_INGEST_WORKERS``, else the CPUs available."""
    setting = os.environ.get(ENV_WORKERS, "").strip()
    return int(setting) if setting.isdigit() and int(setting) > 0 else available_cpus()


def workers_for(page_count: int) -> int:
    """How many workers read a document of ``page_count`` pages now (1: read it here)."""
    if not pool_ready():
        return 1
    return max(1, min(_STATE.size, page_count // MIN_PAGES_PER_WORKER))


class _PoolState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: ProcessPoolExecutor | None = None
        self.size = 0
        self.ready = threading.Event()
        self.registered = False


_STATE = _PoolState()


def _call(name: str, *args: Any) -> Any:
    """Run ``page_worker.<name>(*args)`` in a worker (the module is only imported there)."""
    import importlib

    return getattr(importlib.import_module(WORKER_MODULE), name)(*args)


@contextmanager
def _main_hidden() -> Iterator[None]:
    """While workers start, make ``__main__`` look like an interactive session's (no file,
    no module spec) so multiprocessing does not import it in them."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    had_file, file = hasattr(main, "__file__"), getattr(main, "__file__", None)
    spec = getattr(main, "__spec__", None)
    main.__spec__ = None
    if had_file:
        del main.__file__
    try:
        yield
    finally:
        main.__spec__ = spec
        if had_file:
            main.__file__ = file


def _submit(fn_name: str, *args: Any) -> Future[Any]:
    """Submit a worker task; starts the pool (and its processes) when needed."""
    with _STATE.lock, _main_hidden():
        if _STATE.pool is None:
            if not _STATE.registered:
                atexit.register(shutdown_pool)
                _STATE.registered = True
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([WORKER_MODULE])
            _STATE.size = pool_size()
            _STATE.pool = ProcessPoolExecutor(max_workers=_STATE.size, mp_context=context)
        return _STATE.pool.submit(_call, fn_name, *args)


def warm_pool() -> bool:
    """Start the worker pool in the background (no-op when parallel reading is off or the
    pool runs already); documents use it once every worker has answered. Returns whether a
    pool is (being) started."""
    if pool_size() < 2:
        return False
    if _STATE.pool is not None:
        return True

    def start() -> None:
        try:
            probes = [_submit("ready") for _ in range(pool_size())]
            if all(probe.result() for probe in probes):
                _STATE.ready.set()
        except Exception as exc:  # no pool: pages are read in this process
            log.warning("ingestion worker pool did not start: %s", exc)
            shutdown_pool()

    threading.Thread(target=start, name="scanrag-pool-start", daemon=True).start()
    return True


def warm_pool_for(paths: list[Path]) -> bool:
    """:func:`warm_pool` when ``paths`` hold at least two documents long enough for workers
    (the first is read here while the pool starts; later ones use it). Page counts come from
    opening each file, which costs a millisecond or so; unreadable files count as short."""
    if pool_size() < 2 or len(paths) < 2:
        return False
    import pymupdf

    long_docs = 0
    for path in paths:
        try:
            with pymupdf.open(path) as fz_doc:
                long_docs += fz_doc.page_count >= 2 * MIN_PAGES_PER_WORKER
        except Exception:
            continue
        if long_docs >= 2:
            return warm_pool()
    return False


def pool_ready() -> bool:
    return _STATE.ready.is_set() and _STATE.pool is not None


def shutdown_pool() -> None:
    """Stop the worker processes (a later :func:`warm_pool` starts them again)."""
    with _STATE.lock:
        pool, _STATE.pool = _STATE.pool, None
        _STATE.ready.clear()
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _ranges(page_count: int, parts: int) -> list[tuple[int, int]]:
    size, extra = divmod(page_count, parts)
    ranges, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        ranges.append((start, stop))
        start = stop
    return ranges


def read_pages_in_workers(
    path: Path, password: str | None, page_count: int, options: PageOptions, workers: int
) -> Iterator[tuple[int, PageResult]]:
    """``(index, result)`` for every page in order, read by ``workers`` processes."""
    parts = min(page_count, workers * CHUNKS_PER_WORKER)
    futures = [
        (start, _submit("read_range", str(path), password, start, stop, options))
        for start, stop in _ranges(page_count, parts)
    ]
    try:
        for start, future in futures:
            for offset, result in enumerate(future.result()):
                yield start + offset, result
    finally:
        for _, future in futures:
            future.cancel()
