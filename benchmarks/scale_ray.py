"""What Ray buys: ingest + BM25 build, and the dense build, on a local 2-worker cluster.

``single``: one process, one thread for ingestion (no page pool) into a fresh page store,
then ``BM25Index().add(documents)``. ``ray``: :func:`scanrag.runner.ray_shards.ingest_with_ray`
(one task per group of documents) and :func:`~scanrag.runner.ray_shards.build_with_ray` (BM25
built in parts, merged in this process) on ``ray.init(num_cpus=2)``. The cluster's start-up
is timed apart; the first sharded run (workers still importing ScanRAG) is reported as
``cold``, the best of the following ones as ``warm``. Results must be identical: the page
files row by row and the BM25 index's internals.

The dense build (MiniLM) runs on a smaller slice: one process whose torch uses every core,
against two single-thread Ray workers, each encoding half; its ratio shows Ray's overhead.
CPU seconds of the whole process tree (driver, Ray's daemons and workers, read from
``/proc``) are printed beside the wall times.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds (user + system) of ``root`` (default: this process) and its descendants."""
    root = root or os.getpid()
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / TICKS
    total, stack, seen = 0.0, [root], set()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += cpu.get(pid, 0.0)
        stack.extend(children.get(pid, []))
    return total


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), tree_cpu()
    value = fn()
    return value, time.perf_counter() - wall, tree_cpu() - cpu


def _single(paths: Sequence[Path], folder: Path) -> Any:
    from scanrag.documents import DocumentStore, parallel
    from scanrag.indexes.bm25 import BM25Index

    parallel.shutdown_pool()
    os.environ[parallel.ENV_WORKERS] = "1"
    documents = [doc for _, doc in DocumentStore(folder).ingest_many(paths)]
    index = BM25Index()
    index.add(documents)
    return documents, index


def _sharded(ray: Any, paths: Sequence[Path], folder: Path) -> Any:
    from scanrag.indexes.bm25 import BM25Index
    from scanrag.runner.ray_shards import build_with_ray, ingest_with_ray

    result = ingest_with_ray(ray, paths, folder)
    if result.failures:
        raise RuntimeError(f"ray ingestion failed: {result.failures}")
    documents = [result.documents[p] for p in paths]
    return documents, build_with_ray(ray, BM25Index, documents)


def _same(a: Any, b: Any) -> bool:
    import sqlite3

    docs_a, index_a = a
    docs_b, index_b = b
    for x, y in zip(docs_a, docs_b, strict=True):
        rows = []
        for doc in (x, y):
            with sqlite3.connect(doc.pages.store_path) as conn:
                rows.append(conn.execute("SELECT * FROM pages ORDER BY number").fetchall())
        if rows[0] != rows[1]:
            return False
    return bool(index_a.postings_by_term() == index_b.postings_by_term())


def measure(paths: Sequence[Path], dense_paths: Sequence[Path], repeats: int) -> dict[str, Any]:
    import ray

    out: dict[str, Any] = {"files": len(paths), "load_before": _load()}
    with tempfile.TemporaryDirectory(prefix="scanrag-ray-") as tmp:
        root = Path(tmp)
        _, out["ray_start_s"], _ = _timed(
            lambda: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        )
        try:
            single_best = ray_best = (float("inf"), float("inf"))
            reference, identical = None, True
            for attempt in range(repeats + 1):
                single, wall, cpu = _timed(lambda: _single(paths, root / f"s{attempt}"))  # noqa: B023
                reference = reference or single
                out["pages"] = sum(d.num_pages for d in single[0])
                if attempt:
                    single_best = min(single_best, (wall, cpu))
                sharded, wall, cpu = _timed(lambda: _sharded(ray, paths, root / f"r{attempt}"))  # noqa: B023
                if attempt == 0:
                    out["ray_cold"] = {"wall": wall, "cpu": cpu}
                else:
                    ray_best = min(ray_best, (wall, cpu))
                identical = identical and _same(single, sharded)
            out["single"] = {"wall": single_best[0], "cpu": single_best[1]}
            out["ray_warm"] = {"wall": ray_best[0], "cpu": ray_best[1]}
            out["identical"] = identical
            out["ratio_warm"] = single_best[0] / ray_best[0]
            out["ratio_cold"] = single_best[0] / out["ray_cold"]["wall"]
            out["ratio_warm_cpu_bound"] = single_best[1] / (ray_best[1] / 2)
            if dense_paths:
                out["dense"] = _dense(ray, dense_paths, root / "dense", repeats)
        finally:
            ray.shutdown()
    out["load_after"] = _load()
    return out


def _dense(ray: Any, paths: Sequence[Path], folder: Path, repeats: int) -> dict[str, Any]:
    import numpy as np

    from scanrag.documents import DocumentStore
    from scanrag.indexes.dense import DenseIndex
    from scanrag.runner.ray_shards import build_with_ray

    documents = [doc for _, doc in DocumentStore(folder).ingest_many(paths)]
    DenseIndex().add(documents[:1])  # model loaded and warm in this process
    best_one = best_ray = (float("inf"), float("inf"))
    diff = 0.0
    for attempt in range(repeats + 1):
        whole, wall, cpu = _timed(lambda: _dense_whole(documents))
        if attempt:
            best_one = min(best_one, (wall, cpu))
        parts, wall, cpu = _timed(lambda: build_with_ray(ray, DenseIndex, documents))
        if attempt:  # the first round loads the model in the workers
            best_ray = min(best_ray, (wall, cpu))
        diff = max(diff, float(np.abs(whole.store.vectors - parts.store.vectors).max()))
    return {
        "pages": sum(d.num_pages for d in documents),
        "single": {"wall": best_one[0], "cpu": best_one[1]},
        "ray": {"wall": best_ray[0], "cpu": best_ray[1]},
        "ratio": best_one[0] / best_ray[0],
        "overhead": best_ray[0] / best_one[0] - 1.0,
        "max_abs_diff": diff,
    }


def _dense_whole(documents: Sequence[Any]) -> Any:
    from scanrag.indexes.dense import DenseIndex

    index = DenseIndex()
    index.add(documents)
    return index


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def print_ray(result: dict[str, Any]) -> None:
    pages = result["pages"]
    print(
        f"ray: ingest + BM25 build of {result['files']} PDFs ({pages} pages); local cluster of 2 "
        f"CPUs started in {result['ray_start_s']:.1f} s; load average {result['load_before']} "
        f"-> {result['load_after']}"
    )
    for name in ("single", "ray_cold", "ray_warm"):
        t = result[name]
        print(f"  {name:9s}: {t['wall']:7.2f} s wall, {t['cpu']:7.2f} CPU-s (process tree)")
    print(f"ray_ingest_bm25_ratio={result['ratio_warm']:.3f}")
    print(f"ray_ingest_bm25_ratio_cold={result['ratio_cold']:.3f}")
    print(f"ray_ingest_bm25_cpu_bound={result['ratio_warm_cpu_bound']:.3f}")
    print(f"ray_identical={result['identical']}")
    dense = result.get("dense")
    if dense:
        print(
            f"  dense ({dense['pages']} pages): one process {dense['single']['wall']:.2f} s "
            f"({dense['single']['cpu']:.2f} CPU-s), ray {dense['ray']['wall']:.2f} s "
            f"({dense['ray']['cpu']:.2f} CPU-s), max |vector diff| {dense['max_abs_diff']:.2e}"
        )
        print(f"ray_dense_ratio={dense['ratio']:.3f}")
        print(f"ray_dense_overhead={dense['overhead']:.3f}")
