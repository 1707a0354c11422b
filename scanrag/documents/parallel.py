"""Page extraction of PDFs spread over worker processes, for batches of documents.

MuPDF holds Python's GIL while it builds a page's text layer, which is most of the cost of
ingestion, so threads cannot share that work. A batch (``ingest_many``, the runner's ingest
stage, ``DocumentStore.ingest_many``) calls :func:`warm_pool`, which starts a pool of worker
processes in the background; once it is up, documents go to the workers as *units*: a long
document (at least ``2 × MIN_PAGES_PER_WORKER`` pages) as contiguous page ranges, a shorter one
of a batch whole. A worker opens the file itself and returns each page fully built and encoded
(:data:`scanrag.documents.pagestore.EncodedPage`: the bytes the page store keeps), so this
process only writes them out, in page order, while the workers read on; the batch reader
hands out the units of up to four documents ahead of the one it collects
(``scanrag.documents.ingest.LOOKAHEAD_DOCS``), so workers never wait at a document boundary. A lone
``ingest_pdf`` never waits for a pool to start: until one is ready, pages are read here. The output
is identical either way (one function reads a page in both places:
:func:`scanrag.documents.pages.read_document_page`).

The pool uses the ``forkserver`` start method (forking a process that runs threads, as the
runner does, is unsafe); its server preloads :mod:`scanrag.documents.page_worker` and PyMuPDF
so workers start in milliseconds, and it stays up for later documents. Workers never import
the caller's ``__main__`` (multiprocessing would re-run a script, or fail for code typed into
``python -``): the main module is hidden while they start. ``SCANRAG_INGEST_WORKERS`` sets the
number of workers (``1`` switches parallel reading off). Without it, each batch counts the CPUs
actually free when it starts (:func:`usable_workers`: over a tenth of a second, the idle share
of this process's CPUs from ``/proc/stat`` plus what this process itself used, measured on a
background thread while the first document is read here or by the workers of a pool an earlier
batch left up, whose CPU time counts as free) and uses that many workers, or none
below two: on a machine whose other cores are busy, a pool only adds its transfers to the same
CPU time, so the batch is read in this process, never slower than one process. A pool that breaks (a
worker killed) makes the document fall back to reading in this process. Workers exit by
themselves when this process dies (a ``kill -9`` leaves no orphans behind: see
``page_worker.watch_parent``).
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scanrag.documents.extract import PageOptions
from scanrag.documents.records import EncodedPage

log = logging.getLogger(__name__)

MIN_PAGES_PER_WORKER = 16
BATCH_MIN_PAGES = 4 * MIN_PAGES_PER_WORKER  # a batch this long starts the pool
# Page ranges per worker for one long document. Each range opens the PDF again (its fonts and
# object cache are rebuilt per range), so one range each: benchmarks/scale_ingest.py measured
# 1.43x raw with 1 against 1.37x with 2 on financebench-dev (1.35x vs 1.30x on mmlb-dev).
CHUNKS_PER_WORKER = 1
ENV_WORKERS = "SCANRAG_INGEST_WORKERS"
WORKER_MODULE = "scanrag.documents.page_worker"


# What a worker returns for a range of pages: the encoded pages, and ``(page number, reason)``
# for each page that came back with an error (logged by the caller).
RangeResult = tuple[list[EncodedPage], list[tuple[int, str]]]


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pool_size() -> int:
    """Worker processes to use: ``SCANRAG_INGEST_WORKERS``, else the CPUs available."""
    setting = _setting()
    return setting if setting is not None else available_cpus()


def _setting() -> int | None:
    setting = os.environ.get(ENV_WORKERS, "").strip()
    return int(setting) if setting.isdigit() and int(setting) > 0 else None


FREE_WINDOW_S = 0.1  # how long usable_workers watches the CPUs


def free_cpus(window_s: float = FREE_WINDOW_S) -> float | None:
    """How many of the CPUs this process may run on other processes left unused over the next
    ``window_s`` seconds: their idle and I/O-wait time in ``/proc/stat`` plus the CPU time of
    this process and of its own pool's workers (either may be reading a document meanwhile:
    a pool left up by an earlier batch reads the first document while the CPUs are counted);
    ``None`` where that cannot be read."""
    try:
        cpus = {f"cpu{n}" for n in os.sched_getaffinity(0)}
        workers = _worker_pids()
        before, own = _cpu_times(cpus), time.process_time() + _ticks_of(workers) / _TICKS
        time.sleep(window_s)
        after = _cpu_times(cpus)
        own = time.process_time() + _ticks_of(workers) / _TICKS - own
    except (AttributeError, OSError, ValueError):
        return None
    total = sum(after[0]) - sum(before[0])
    idle = sum(after[1]) - sum(before[1])
    if total <= 0:
        return None
    share = (idle + own * total / (len(cpus) * window_s)) / total
    return len(cpus) * min(1.0, share)


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _worker_pids() -> list[int]:
    """Process ids of the pool's workers (none without a pool). ``ProcessPoolExecutor`` keeps
    them in a private attribute; where it is missing the workers count as busy, as before."""
    pool = _STATE.pool
    processes = getattr(pool, "_processes", None) or {}
    return [int(pid) for pid in processes]


def _ticks_of(pids: list[int]) -> int:
    """User and system CPU ticks the processes ``pids`` used so far (one that is gone counts
    none)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total


def _cpu_times(cpus: set[str]) -> tuple[list[int], list[int]]:
    """(all time, idle time) of each of ``cpus`` so far, in ticks."""
    totals, idles = [], []
    with open("/proc/stat", encoding="ascii") as fh:
        for line in fh:
            name, _, rest = line.partition(" ")
            if name in cpus:
                fields = [int(v) for v in rest.split()]
                totals.append(sum(fields[:8]))  # guest time is counted in user time already
                idles.append(fields[3] + fields[4])
    if len(totals) != len(cpus):
        raise ValueError("/proc/stat does not list every CPU")
    return totals, idles


def usable_workers() -> int:
    """Worker processes worth using now: ``SCANRAG_INGEST_WORKERS`` when set, else the CPUs
    free now (:func:`free_cpus`, rounded; the CPUs available where it cannot be read). Below
    2, work stays in this process."""
    setting = _setting()
    if setting is not None:
        return setting
    cpus = available_cpus()
    if cpus < 2:
        return 1
    free = free_cpus()
    if free is None:
        return cpus
    return max(1, min(cpus, int(free + 0.5)))


def workers_for(page_count: int) -> int:
    """How many workers read a document of ``page_count`` pages now (1: read it here)."""
    if not pool_ready():
        return 1
    return max(1, min(_STATE.size, _STATE.active, page_count // MIN_PAGES_PER_WORKER))


def plan_units(page_count: int, whole_if_short: bool = False) -> list[tuple[int, int]]:
    """The page ranges (0-based, stop excluded) a document goes to the workers in; ``[]``
    when it is read here (no pool ready, or a short document outside a batch)."""
    workers = workers_for(page_count)
    if workers > 1:
        return _ranges(page_count, min(page_count, workers * CHUNKS_PER_WORKER))
    if whole_if_short and pool_ready() and page_count > 0:
        return [(0, page_count)]
    return []


class _PoolState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: ProcessPoolExecutor | None = None
        self.size = 0
        self.active = 0  # workers the current batch uses (usable_workers when it began)
        self.deciding: threading.Thread | None = None  # counting the free CPUs
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
            _STATE.pool = ProcessPoolExecutor(
                max_workers=_STATE.size,
                mp_context=context,
                initializer=_call,  # each worker exits once this process is gone
                initargs=("watch_parent", os.getpid()),
            )
        return _STATE.pool.submit(_call, fn_name, *args)


def warm_pool(workers: int | None = None) -> bool:
    """Start the worker pool in the background (no-op when parallel reading is off or the
    pool runs already); documents use it once every worker has answered, ``workers`` of
    them (default: all). Returns whether a pool is (being) started."""
    if pool_size() < 2:
        return False
    _STATE.active = pool_size() if workers is None else workers
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


def warm_when_free() -> bool:
    """Count the free CPUs on a background thread (:func:`usable_workers`) and start the pool
    with that many workers when two or more are free (else work stays here, also with a pool
    started earlier); nothing waits for the decision (:func:`ready_workers`). Returns whether
    parallel work is possible at all (``False``: one CPU, or ``SCANRAG_INGEST_WORKERS=1``)."""
    _STATE.active = 0
    if pool_size() < 2:
        return False
    setting = _setting()
    if setting is not None:
        return warm_pool(setting)

    def decide() -> None:
        workers = usable_workers()
        if workers >= 2:
            warm_pool(workers)
        else:
            log.info("%d CPU(s) free: working in this process", workers)

    _STATE.deciding = threading.Thread(target=decide, name="scanrag-pool-decide", daemon=True)
    _STATE.deciding.start()
    return True


def ready_workers() -> int:
    """Workers the current work may use now (0 until a pool is up and chosen)."""
    return _STATE.active if pool_ready() else 0


def warm_pool_for(paths: list[Path]) -> bool:
    """:func:`warm_when_free` when ``paths`` hold at least two documents and enough pages to
    pay for starting workers (``BATCH_MIN_PAGES``; the first document is read here while the
    CPUs are counted and the pool starts, later ones use it). Page counts come from opening
    each file, which costs a millisecond or so; unreadable files count as empty."""
    _STATE.active = 0
    if pool_size() < 2 or len(paths) < 2:
        return False
    import pymupdf

    pages = 0
    for path in paths:
        try:
            with pymupdf.open(path) as fz_doc:
                pages += fz_doc.page_count
        except Exception:
            continue
        if pages >= BATCH_MIN_PAGES:
            return warm_when_free()
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


def submit_range(
    path: Path,
    password: str | None,
    start: int,
    stop: int,
    options: PageOptions,
    labels: list[str],
) -> Future[RangeResult]:
    """Have a worker read pages ``start..stop-1`` (0-based); ``labels`` are their PDF labels."""
    return _submit("read_range", str(path), password, start, stop, options, labels)


def submit_task(target: str, *args: Any) -> Future[Any]:
    """Have a worker run ``module:function(*args)`` (see ``page_worker.run_task``); starts
    the pool when needed. Used for index builds split into parts (``scanrag.indexes.bm25``)."""
    return _submit("run_task", target, args)
