"""Ingestion and index builds sharded by document across a Ray cluster, merged in the driver.

* :func:`ingest_with_ray` gives groups of PDFs to Ray tasks (one CPU each); every task reads
  its files in one process straight into the page store under ``cache_dir`` and sends back the
  documents as references (file name, hash, page count, page-file path), never their pages.
* :func:`build_with_ray` cuts the documents into consecutive slices of about equal page
  counts; a task per slice runs ``build_part`` (BM25: terms and counts per page; dense: chunk
  vectors) and the driver merges the parts in order with ``add_parts``, which gives the index
  ``add`` would (bit-identical for BM25; dense vectors can differ in the last digits, as the
  encoder batches differ).

What travels to workers: the task functions, file paths and ingestion options, the index
factory (its class and parameters) and documents as references. Page files are opened by
path, so ``cache_dir`` must be storage every node of the cluster sees (a shared file system);
each file is written once and renamed into place, and read without locks.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scanrag.runner.components import IngestResult
from scanrag.schemas import Document

log = logging.getLogger(__name__)

TASKS_PER_CPU = 4  # ingestion tasks per CPU of the cluster: enough to even out the load


def _ingest_task(
    cache_dir: str, paths: list[str], options: dict[str, Any]
) -> list[tuple[str, Document | Exception]]:
    """Body of an ingestion task: ``paths`` into the page store, in this process only."""
    from scanrag.documents import DocumentStore
    from scanrag.documents.parallel import ENV_WORKERS

    os.environ[ENV_WORKERS] = "1"  # the task has one CPU: no page-reading pool of its own
    out: list[tuple[str, Document | Exception]] = []
    for path, result in DocumentStore(cache_dir).ingest_many(paths, **options):
        if isinstance(result, Exception) and not _pickles(result):
            result = RuntimeError(f"{type(result).__name__}: {result}")
        out.append((str(path), result))
    return out


def _pickles(value: Any) -> bool:
    import pickle

    try:
        pickle.loads(pickle.dumps(value))
    except Exception:
        return False
    return True


def _groups(paths: Sequence[Path], cpus: int) -> list[list[Path]]:
    """Consecutive groups of files, about ``TASKS_PER_CPU`` per CPU (one file each when
    there are few)."""
    size = max(1, math.ceil(len(paths) / max(1, cpus * TASKS_PER_CPU)))
    return [list(paths[i : i + size]) for i in range(0, len(paths), size)]


def _cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def ingest_with_ray(
    ray: Any,
    paths: Sequence[Path],
    cache_dir: Path,
    on_done: Callable[[Path], None] | None = None,
    **options: Any,
) -> IngestResult:
    """Ingest ``paths`` on the cluster into the page store under ``cache_dir`` (see the
    module docstring); failures are recorded per file, as ``ingest_paths`` does."""
    task = ray.remote(_ingest_task).options(num_cpus=1, max_retries=1)
    pending = {
        task.remote(str(cache_dir), [str(p) for p in group], options): group
        for group in _groups(list(paths), _cluster_cpus(ray))
    }
    result = IngestResult()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        group = pending.pop(ready[0])
        try:
            outcomes = [(Path(p), r) for p, r in ray.get(ready[0])]
        except Exception as exc:  # the task itself died: every file of it failed
            outcomes = [(p, RuntimeError(f"ray ingestion task failed: {exc}")) for p in group]
        for path, outcome in outcomes:
            result.record(path, outcome)
            if on_done is not None:
                on_done(path)
    return result


def _part_task(make_index: Callable[[], Any], documents: list[Document]) -> Any:
    """Body of an index-build task: one slice's part."""
    return make_index().build_part(documents)


def slices(documents: Sequence[Document], count: int) -> list[list[Document]]:
    """``documents`` cut into at most ``count`` consecutive slices of about equal pages."""
    total = sum(d.num_pages for d in documents)
    target = total / max(1, count)
    out: list[list[Document]] = [[]]
    pages = 0
    for document in documents:
        if out[-1] and pages >= target * len(out) and len(out) < count:
            out.append([])
        out[-1].append(document)
        pages += document.num_pages
    return [s for s in out if s]


class NotBuiltInPartsError(ValueError):
    """The retriever cannot be built in parts (a composite, an index without the hooks)."""


def build_with_ray(
    ray: Any,
    make_index: Callable[[], Any],
    documents: Sequence[Document],
    parts: int | None = None,
) -> Any:
    """``make_index()`` holding ``documents`` (each content once, in order), built in
    ``parts`` slices (default: two per CPU of the cluster) on the cluster and merged here.
    :class:`NotBuiltInPartsError` when the index kind cannot be built in parts."""
    index = make_index()
    if not getattr(index, "builds_in_parts", False):
        raise NotBuiltInPartsError(f"{type(index).__name__} cannot be built in parts")
    unique = list({d.id: d for d in documents}.values())
    count = parts or 2 * _cluster_cpus(ray)
    task = ray.remote(_part_task).options(num_cpus=1, max_retries=1)
    factory = ray.put(make_index)
    refs = [task.remote(factory, piece) for piece in slices(unique, count)]
    index.add_parts(unique, ray.get(refs))
    return index


def prebuild_indexes(
    ray: Any,
    make_index: Callable[[str], Any],
    documents: Sequence[Document],
    aliases: Sequence[str],
    index_dir: Callable[[str], Path],
) -> dict[str, Any]:
    """Build every alias whose index can be built in parts across the cluster and save it
    in ``index_dir(alias)``; returns the built indexes by alias. An alias already saved
    there (a resume), one that cannot be built in parts, or one whose sharded build fails is
    left to be built as before (where its errors are reported)."""
    built: dict[str, Any] = {}
    for alias in aliases:
        folder = index_dir(alias)
        if (folder / "manifest.json").is_file():
            continue
        try:
            index = build_with_ray(ray, functools.partial(make_index, alias), documents)
            index.save(folder)
        except NotBuiltInPartsError:
            continue
        except Exception as exc:
            log.warning("retriever %s: sharded build failed (%s); building it whole", alias, exc)
            continue
        built[alias] = index
    return built
