"""GPU speed of the dense build, MaxSim and vector search, with the bounds to judge them by.

    .venv/bin/python benchmarks/gpu_bench.py [--pages 4000] [--host-pages 4000]
        [--maxsim-pages N] [--maxsim-tokens 700] [--search-vectors N] [--repeats 2] [--json OUT]

One command, about 5 minutes on one GPU; on a CPU-only machine the same sections run on the
CPU (give small sizes: ``tests/benchmarks/test_gpu_bench.py`` runs it in seconds). Needs
torch, sentence-transformers, faiss and the bundled all-MiniLM-L6-v2; no PDF library, no
downloads. colpali-engine, when installed, is the MaxSim reference.

1. ``dense`` (``benchmarks/gpu_bench_dense.py``): build pages/s of the project's path against
   the path before it (windows re-tokenized by sentence-transformers) and raw
   sentence-transformers ``encode`` of the same windows, with ``TOKENIZERS_PARALLELISM`` unset
   and ``false``; host-only milliseconds per page (the forward replaced by a no-op).
2. ``maxsim``: (page, query) pairs scored per second on the chosen device for the whole store
   (5 queries and 1), the first call (blocks built), a scope of half the pages, one document
   at a time (the fused Triton kernel on CUDA, and the matrix-product path beside it), and
   colpali-engine's ``score_multi_vector`` on the same pages; next to the bound
   of reading the padded store once per query group at the bandwidth of a measured
   device-to-device copy, and the largest relative difference from the engine's scores.
3. ``search``: exact top-10 over a flat store: faiss-cpu, torch on the CPU and torch on the GPU
   (when present), p50 milliseconds for one query and for a batch of 32, and whether every
   contender returns faiss-cpu's hits.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from colpali import best_of, print_sections, synthetic_store  # noqa: E402
from gpu_bench_dense import dense_build  # noqa: E402


def environment() -> dict[str, Any]:
    import torch

    cuda = torch.cuda.is_available()
    flags = ""
    if Path("/proc/cpuinfo").is_file():
        text = Path("/proc/cpuinfo").read_text(errors="replace")
        flags = " ".join(f for f in ("amx_bf16", "avx512f", "avx2") if f" {f}" in text)
    return {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda or "none",
        "cuda": cuda,
        "gpu": torch.cuda.get_device_name(0) if cuda else "none",
        "cpus": os.cpu_count() or 0,
        "torch_threads": torch.get_num_threads(),
        "cpu_flags": flags,
        "load_average": " ".join(f"{v:.1f}" for v in os.getloadavg()),
    }


# -- MaxSim -------------------------------------------------------------------------------------
def copy_bandwidth(device: str, megabytes: int = 512, repeats: int = 5) -> float:
    """Bytes moved per second (read + write) by a device-to-device copy."""
    import torch

    src = torch.empty(megabytes << 20, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        dst.copy_(src)
        sync()
        best = min(best, time.perf_counter() - start)
    return 2 * src.numel() / best


def maxsim(pages: int, tokens: int, doc_pages: int, repeats: int) -> dict[str, Any]:
    import torch

    from scanrag.indexes.colpali_models import select_device
    from scanrag.indexes.colpali_scoring import MaxSimScorer

    device = select_device()
    store = synthetic_store(pages, tokens, 128)
    rng = np.random.default_rng(1)
    queries = [rng.standard_normal((20, 128), dtype=np.float32) for _ in range(5)]
    for q in queries:
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    breaks = np.arange(0, pages, doc_pages)
    scorer = MaxSimScorer(device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    start = time.perf_counter()
    ours = scorer.scores(queries, store, None, breaks)
    sync()
    first_s = time.perf_counter() - start
    half = np.arange(0, pages, 2)
    docs = [np.arange(b, min(b + doc_pages, pages)) for b in breaks]

    def per_document() -> None:
        for rows in docs:
            scorer.scores(queries, store, rows, breaks)

    timed = {
        "whole": lambda: scorer.scores(queries, store, None, breaks),
        "one_query": lambda: scorer.scores(queries[:1], store, None, breaks),
        "scoped_half": lambda: scorer.scores(queries, store, half, breaks),
        "per_document": per_document,
    }
    if scorer.kernel:  # the matrix-product path beside the fused kernel
        plain = MaxSimScorer(device, kernel=False)
        plain.scores(queries, store, None, breaks)
        timed["matmul_whole"] = lambda: plain.scores(queries, store, None, breaks)
    engine = _engine(device, store, queries)
    if engine is not None:
        timed["engine"], timed["engine_scoped_half"] = engine["whole"], engine["half"](half)
    seconds = dict(zip(timed, best_of(repeats, *timed.values()), strict=True))
    n = pages * len(queries)
    padded = sum(int(b.pages.numel()) * b.pages.element_size() for b in scorer._blocks)
    bandwidth = copy_bandwidth(device)
    report: dict[str, Any] = {
        "device": device,
        "shape": f"{pages} pages x ~{tokens} tokens x 128, {len(queries)} queries x 20 tokens",
        "padded_store_bytes": padded,
        "copy_bandwidth_gb_s": bandwidth / 1e9,
        # reading the padded store once per query group at the copy's bandwidth
        "bound_pairs_per_s": bandwidth / padded * n,
        "bound_pairs_per_s_one_query": bandwidth / padded * pages,
        "pairs_per_s": n / seconds["whole"],
        "pairs_per_s_one_query": pages / seconds["one_query"],
        "pairs_per_s_first_call": n / first_s,
        "pairs_per_s_scoped_half": len(half) * len(queries) / seconds["scoped_half"],
        "pairs_per_s_per_document": n / seconds["per_document"],
        "fused_kernel": scorer.kernel,
    }
    if "matmul_whole" in seconds:
        report["pairs_per_s_matmul_path"] = n / seconds["matmul_whole"]
    report["fraction_of_bound"] = report["pairs_per_s"] / report["bound_pairs_per_s"]
    report["fraction_of_bound_one_query"] = (
        report["pairs_per_s_one_query"] / report["bound_pairs_per_s_one_query"]
    )
    if engine is not None:
        report["engine_pairs_per_s"] = n / seconds["engine"]
        report["engine_pairs_per_s_scoped_half"] = len(half) * 5 / seconds["engine_scoped_half"]
        report["scoped_half_over_engine_scoped"] = (
            report["pairs_per_s_scoped_half"] / report["engine_pairs_per_s_scoped_half"]
        )
        raw = engine["scores"]
        report["max_rel_diff_vs_engine"] = float(np.abs(ours - raw).max() / np.abs(raw).max())
    return report


def _engine(device: str, store: Any, queries: list[np.ndarray]) -> dict[str, Any] | None:
    """colpali-engine's scorer on the same pages (``None`` when it is not installed)."""
    try:
        from colpali_engine.utils.processing_utils import BaseVisualRetrieverProcessor as Engine
    except ImportError:
        return None
    import torch

    dtype = torch.float32 if device == "cpu" else torch.float16
    qs = [torch.from_numpy(q).to(dtype) for q in queries]
    ps = [torch.from_numpy(store.page(i).astype(np.float32)).to(dtype) for i in range(len(store))]

    def score(pages: list[Any]) -> Any:
        return Engine.score_multi_vector(qs, pages, batch_size=256, device=device)

    return {
        "scores": score(ps).float().numpy(),
        "whole": lambda: score(ps),
        "half": lambda rows: lambda: score([ps[i] for i in rows]),
    }


# -- vector search -------------------------------------------------------------------------------
def search(vectors: int, dim: int, repeats: int) -> dict[str, Any]:
    import torch

    from scanrag.indexes.vector_store import VectorStore

    rng = np.random.default_rng(2)
    data = rng.standard_normal((vectors, dim), dtype=np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    batch = data[rng.integers(0, vectors, 32)] + 0.1
    stores = {"faiss_cpu": VectorStore(dim), "torch_cpu": VectorStore(dim, torch_device="cpu")}
    if torch.cuda.is_available():
        stores["torch_cuda"] = VectorStore(dim, torch_device="cuda")
    for store in stores.values():
        store.add(data)
        store.search(batch[:1], 10)  # warm: the GPU copy is made by the first search
    want = stores["faiss_cpu"].search(batch, 10)[1]
    report: dict[str, Any] = {"vectors": vectors, "dim": dim}
    for name, store in stores.items():
        one = [_timed(lambda s=store, q=q: s.search(q[None], 10)) for q in batch[: repeats * 5]]
        many = [_timed(lambda s=store: s.search(batch, 10)) for _ in range(repeats * 2)]
        report[f"{name}_p50_ms_one_query"] = 1000 * statistics.median(one)
        report[f"{name}_p50_ms_32_queries"] = 1000 * statistics.median(many)
        report[f"{name}_same_hits_as_faiss"] = bool(
            np.array_equal(store.search(batch, 10)[1], want)
        )
    return report


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    import torch

    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=4000 if cuda else 200)
    parser.add_argument("--host-pages", type=int, default=4000 if cuda else 600)
    parser.add_argument("--chars", type=int, default=3000, help="characters per dense page")
    parser.add_argument("--maxsim-pages", type=int, default=20000 if cuda else 1000)
    parser.add_argument("--maxsim-tokens", type=int, default=700)
    parser.add_argument("--doc-pages", type=int, default=50, help="pages per MaxSim document")
    parser.add_argument("--search-vectors", type=int, default=1_000_000 if cuda else 100_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sections", default="dense,maxsim,search", help="comma-separated")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sections: dict[str, Any] = {
        "dense": lambda: dense_build(args.pages, args.host_pages, args.repeats, chars=args.chars),
        "maxsim": lambda: maxsim(
            args.maxsim_pages, args.maxsim_tokens, args.doc_pages, max(args.repeats, 2)
        ),
        "search": lambda: search(args.search_vectors, 384, max(args.repeats, 2)),
    }
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    if unknown := sorted(set(chosen) - set(sections)):
        parser.error(f"unknown sections {unknown}; known: {', '.join(sections)}")
    report: dict[str, Any] = {"environment": environment()}
    for name in chosen:
        start = time.perf_counter()
        try:
            report[name] = sections[name]()
        except Exception as exc:  # report every section, even when one breaks
            report[name] = {"error": f"{type(exc).__name__}: {exc}"}
        report[name]["section_s"] = time.perf_counter() - start
    print_sections(report, number=",.6g")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return 1 if any("error" in v for v in report.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
