"""Peak memory of ``scanrag retrieve eval --retrievers bm25`` against corpus size.

For each generated corpus (:mod:`scale_corpus`) two fresh processes run one after the other:

1. ``eval``: exactly ``scanrag retrieve eval --dataset Q --retrievers bm25`` (ingestion into a
   temporary page store, the BM25 build, every question), reporting its own peak RSS
   (``ru_maxrss`` of the process) and the largest ingestion worker's;
2. ``index``: the same ingestion and the same BM25 build and nothing else, reporting its RSS
   with the documents opened (``rss_docs``), after the build (``rss_index``) and its peak.

``beyond = eval peak - index peak`` is what the evaluation holds besides the index structures
(and besides what any process of ours holds: imports, the interpreter), so its growth per page
between two corpus sizes is the figure the target bounds (≤ 10 KB per page). The index's own
growth per page (``rss_index - rss_docs``) is printed beside it.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

_EVAL_CHILD = """
import contextlib, io, json, resource, sys, time
start = time.perf_counter()
from scanrag.cli import main
from scanrag.documents import parallel

def hwm_kib(pid):  # peak RSS of another process
    with open(f"/proc/{pid}/status") as fh:
        return max([int(l.split()[1]) for l in fh if l.startswith("VmHWM:")] or [0])

with contextlib.redirect_stdout(io.StringIO()):
    code = main(["retrieve", "eval", "--dataset", sys.argv[1], "--retrievers", "bm25",
                 "--k", "1,5", "--json"])
pool = parallel._STATE.pool
workers = [hwm_kib(pid) for pid in (pool._processes if pool is not None else {})]
print("@@" + json.dumps({
    "code": code,
    "seconds": time.perf_counter() - start,
    "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "workers_peak_kib": max(workers or [0]),
}))
"""

_INDEX_CHILD = """
import json, os, resource, sys, tempfile, time
from pathlib import Path

def rss_kib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

start = time.perf_counter()
from scanrag.indexes.bm25 import BM25Index
from scanrag.documents import DocumentStore
paths = sorted(Path(sys.argv[1]).glob("*.pdf"))
with tempfile.TemporaryDirectory(prefix="scanrag-") as tmp:
    docs = [doc for _, doc in DocumentStore(tmp).ingest_many(paths, ocr="auto")]
    rss_docs = rss_kib()
    index = BM25Index()
    index.add(docs)
    rss_index = rss_kib()
    print("@@" + json.dumps({
        "pages": index.page_count,
        "seconds": time.perf_counter() - start,
        "rss_docs_kib": rss_docs,
        "rss_index_kib": rss_index,
        "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }))
"""


def _child(script: str, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("@@")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"child failed ({out.returncode}): {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1][2:])
    return result


def measure(corpus: Path) -> dict[str, Any]:
    """Both processes on one corpus folder (``pdfs/``, ``questions.jsonl``)."""
    info = json.loads((corpus / "corpus.json").read_text())
    started = time.perf_counter()
    evaluation = _child(_EVAL_CHILD, str(corpus / "questions.jsonl"))
    index = _child(_INDEX_CHILD, str(corpus / "pdfs"))
    if evaluation["code"] != 0:
        raise RuntimeError(f"retrieve eval exited with {evaluation['code']}")
    return {
        "pages": index["pages"],
        "docs": info["docs"],
        "questions": info["questions"],
        "eval_peak_mib": evaluation["peak_kib"] / 1024,
        "eval_seconds": evaluation["seconds"],
        "worker_peak_mib": evaluation["workers_peak_kib"] / 1024,
        "index_peak_mib": index["peak_kib"] / 1024,
        "index_mib": (index["rss_index_kib"] - index["rss_docs_kib"]) / 1024,
        "docs_open_mib": index["rss_docs_kib"] / 1024,
        "beyond_mib": (evaluation["peak_kib"] - index["peak_kib"]) / 1024,
        "wall_s": time.perf_counter() - started,
    }


def slopes(rows: list[dict[str, Any]]) -> dict[str, float]:
    """KB (1000 bytes) per page between the smallest and the largest corpus."""
    if len(rows) < 2:
        return {}
    first, last = rows[0], rows[-1]
    pages = last["pages"] - first["pages"]

    def per_page(key: str) -> float:
        return (last[key] - first[key]) * 2**20 / 1000 / pages

    return {
        "eval_kb_per_page": per_page("eval_peak_mib"),
        "beyond_index_kb_per_page": per_page("beyond_mib"),
        "index_kb_per_page": per_page("index_mib"),
    }


HEADER = "memory: peak RSS of `scanrag retrieve eval --retrievers bm25` (fresh process each)"


def print_row(row: dict[str, Any]) -> None:
    print(
        f"  pages={row['pages']:>6} docs={row['docs']:>5} q={row['questions']:>5}  "
        f"eval_peak={row['eval_peak_mib']:7.1f} MiB ({row['eval_seconds']:.1f} s)  "
        f"index_only_peak={row['index_peak_mib']:7.1f} MiB  "
        f"bm25_index={row['index_mib']:6.1f} MiB  beyond_index={row['beyond_mib']:6.1f} MiB  "
        f"ingest_worker_peak={row['worker_peak_mib']:.0f} MiB"
    )


def print_slopes(rows: list[dict[str, Any]]) -> None:
    """Growth per page between each pair of neighboring sizes, then over the whole curve."""
    for a, b in itertools.pairwise(rows):
        if len(rows) > 2:
            step = slopes([a, b])
            print(
                f"  {a['pages']} -> {b['pages']} pages: eval +{step['eval_kb_per_page']:.2f} "
                f"KB/page, beyond index {step['beyond_index_kb_per_page']:+.2f} KB/page, "
                f"BM25 index +{step['index_kb_per_page']:.2f} KB/page"
            )
    for key, value in slopes(rows).items():
        print(f"memory_{key}={value:.2f}")


def print_curve(rows: list[dict[str, Any]]) -> None:
    print(HEADER)
    for row in rows:
        print_row(row)
    print_slopes(rows)
