"""What runs inside an ingestion worker process (see :mod:`scanrag.documents.parallel`).

The pool's server process imports this module first: it keeps PyMuPDF 2's layout-analysis
(ONNX) and Markdown add-ons from loading, which a page reader never uses and which would take
most of a worker's start-up time. Only worker processes import this module.
"""

from __future__ import annotations

import sys
from pathlib import Path

for _addon in ("pymupdf.layout", "pymupdf4llm"):
    sys.modules.setdefault(_addon, None)  # type: ignore[arg-type]  # "import" raises ImportError

import pymupdf  # noqa: E402,F401  (loaded once in the server, shared by every worker)

from scanrag.documents.extract import PageOptions  # noqa: E402
from scanrag.documents.pages import read_document_record  # noqa: E402
from scanrag.documents.parallel import RangeResult  # noqa: E402


def watch_parent(pid: int, interval_s: float = 1.0) -> None:
    """Exit this worker once process ``pid`` (the one that started the pool) is gone.

    Pool workers block on their task queue, whose pipes they hold both ends of, so they never
    notice a parent killed with SIGKILL; they would stay, and keep the forkserver (whose
    liveness pipe they hold) alive with them. A daemon thread checks every ``interval_s``."""
    import os
    import threading
    import time

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:  # pragma: no cover - the pid now belongs to someone else
                os._exit(0)

    threading.Thread(target=watch, name="scanrag-parent-watch", daemon=True).start()


def ready() -> bool:
    """A no-op task: running it proves a worker is up."""
    return True


def read_range(
    path: str,
    password: str | None,
    start: int,
    stop: int,
    options: PageOptions,
    labels: list[str],
) -> RangeResult:
    """Pages ``start..stop-1`` (0-based) of ``path``, built and encoded, and the pages that
    came back with an error."""
    import gc

    from scanrag.documents.ingest import open_pdf

    fz_doc = open_pdf(Path(path), password)
    encoded, failed = [], []
    gc.disable()  # no reference cycles among page objects; see ingest.gc_paused
    try:
        for index in range(start, stop):
            page, error = read_document_record(fz_doc, index, labels[index - start], options)
            if error is not None:
                failed.append((index + 1, error))
            encoded.append(page)
    finally:
        gc.enable()
        fz_doc.close()
    return encoded, failed


def run_task(target: str, args: tuple[object, ...]) -> object:
    """Run ``module:function`` (named by the caller, e.g. a BM25 build's slice of pages)
    with ``args``: the pool also takes CPU-bound index work that reads the page store."""
    import importlib

    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)(*args)
