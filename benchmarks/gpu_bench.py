"""GPU speed of the dense build, MaxSim and vector search, with the bounds to judge them by.

    .venv/bin/python benchmarks/gpu_bench.py [--json OUT] [--sections dense,maxsim,search]
        [--budget-s S] [--pages 2000] [--host-pages 2000] [--maxsim-pages 10000]
        [--maxsim-tokens 700] [--search-vectors 1000000] [--repeats 2] [--tick-s 10]

Sized to finish within 5 minutes on one H100, warm-up included; on a CPU-only machine the
same sections run on the CPU (give small sizes: ``tests/benchmarks/test_gpu_bench.py`` runs it
in seconds). Needs torch, sentence-transformers, faiss and the bundled all-MiniLM-L6-v2; no PDF
library, no downloads. colpali-engine, late-interaction-kernels and flash-maxsim are used
when installed.

It says where it is: each section prints a line when it starts and ends and, every
``--tick-s`` seconds in between, its stage and done/total (``gpu_bench_progress.Section``).
``--json OUT`` is rewritten after every section, so a run killed midway keeps the sections
that finished. ``--budget-s`` bounds each section (default: ``BUDGETS``): past it the section
stops at its next step and is marked ``"incomplete": true`` with the figures it has; a
watchdog prints every thread's stack when a section overruns and ends a section that never
returns to its code. Exit status 0 only when every section completed.

1. ``dense`` (``benchmarks/gpu_bench_dense.py``): build pages/s of the project's path against
   the path before it and raw sentence-transformers ``encode`` of the same windows, with
   ``TOKENIZERS_PARALLELISM`` unset and ``false``; host-only milliseconds per page.
2. ``maxsim`` (``benchmarks/gpu_bench_maxsim.py``): every MaxSim path (the project's Triton
   kernel, late-interaction-kernels, flash-maxsim, the matrix-product reference) and
   colpali-engine's scorer side by side on one store, against the bound of reading the store
   once per call at a measured copy bandwidth, with each path's difference from the reference.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from colpali import print_sections  # noqa: E402
from gpu_bench_dense import dense_build  # noqa: E402
from gpu_bench_maxsim import maxsim  # noqa: E402
from gpu_bench_progress import BudgetSpentError, Section  # noqa: E402

# Seconds per section by default: together under 5 minutes with the start-up.
BUDGETS = {"dense": 90.0, "maxsim": 120.0, "search": 45.0}


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
        "triton": _version("triton"),
        "late_interaction_kernels": _version("late-interaction-kernels"),
        "flash_maxsim": _version("flash-maxsim"),
        "colpali_engine": _version("colpali-engine"),
        "cuda": cuda,
        "gpu": torch.cuda.get_device_name(0) if cuda else "none",
        "cpus": os.cpu_count() or 0,
        "torch_threads": torch.get_num_threads(),
        "cpu_flags": flags,
        "load_average": " ".join(f"{v:.1f}" for v in os.getloadavg()),
    }


def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


# -- vector search -------------------------------------------------------------------------------
def search(progress: Section, vectors: int, dim: int, repeats: int) -> None:
    import torch

    from scanrag.indexes.vector_store import VectorStore

    progress.stage("vectors", 1)
    rng = np.random.default_rng(2)
    data = rng.standard_normal((vectors, dim), dtype=np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    batch = data[rng.integers(0, vectors, 32)] + 0.1
    stores = {"faiss_cpu": VectorStore(dim), "torch_cpu": VectorStore(dim, torch_device="cpu")}
    if torch.cuda.is_available():
        stores["torch_cuda"] = VectorStore(dim, torch_device="cuda")
    progress.stage("add and warm", len(stores))
    for store in stores.values():
        store.add(data)
        store.search(batch[:1], 10)  # warm: the GPU copy is made by the first search
        progress.advance()
    want = stores["faiss_cpu"].search(batch, 10)[1]
    figures = progress.figures
    figures |= {"vectors": vectors, "dim": dim}
    for name, store in stores.items():
        progress.stage(name, 5 + repeats * 2)
        one = [_timed(lambda s=store, q=q: s.search(q[None], 10), progress) for q in batch[:5]]
        many = [_timed(lambda s=store: s.search(batch, 10), progress) for _ in range(repeats * 2)]
        figures[f"{name}_p50_ms_one_query"] = 1000 * statistics.median(one)
        figures[f"{name}_p50_ms_32_queries"] = 1000 * statistics.median(many)
        figures[f"{name}_same_hits_as_faiss"] = bool(
            np.array_equal(store.search(batch, 10)[1], want)
        )


def _timed(fn: Callable[[], Any], progress: Section) -> float:
    start = time.perf_counter()
    fn()
    spent = time.perf_counter() - start
    progress.advance()
    return spent


# -- the run ------------------------------------------------------------------------------------
class Run:
    """The report so far and where it goes: written whole after every section (a kill
    mid-write leaves the previous version)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.report: dict[str, Any] = {}

    def save(self) -> None:
        if self.path is not None:
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps(self.report, indent=2, default=str))
            os.replace(tmp, self.path)


def run_section(
    run: Run, name: str, body: Callable[[Section], None], budget_s: float, tick_s: float
) -> None:
    """Run one section under its ``Section``; record its figures, marked incomplete or
    failed, and save the report."""

    def on_hang(section: Section) -> None:  # the watchdog's last act: keep what finished
        stage = section.label
        run.report[name] = {**section.figures, "incomplete": True, "error": f"hung in {stage}"}
        run.save()

    section = Section(name, budget_s, tick_s, on_hang=on_hang)
    try:
        with section:
            body(section)
        figures = dict(section.figures)
    except BudgetSpentError as stop:
        figures = {**section.figures, "incomplete": True, "stopped": str(stop)}
    except Exception as exc:  # report every section, even when one breaks
        figures = {**section.figures, "error": f"{type(exc).__name__}: {exc}"}
    figures["section_s"] = section.elapsed()
    run.report[name] = figures
    run.save()


def main(argv: list[str] | None = None) -> int:
    import torch

    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000 if cuda else 200)
    parser.add_argument("--host-pages", type=int, default=2000 if cuda else 600)
    parser.add_argument("--chars", type=int, default=3000, help="characters per dense page")
    parser.add_argument("--maxsim-pages", type=int, default=10000 if cuda else 1000)
    parser.add_argument("--maxsim-tokens", type=int, default=700)
    parser.add_argument("--doc-pages", type=int, default=50, help="pages per MaxSim document")
    parser.add_argument("--search-vectors", type=int, default=1_000_000 if cuda else 100_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sections", default="dense,maxsim,search", help="comma-separated")
    parser.add_argument("--budget-s", type=float, default=None, help="seconds per section")
    parser.add_argument("--tick-s", type=float, default=10.0, help="seconds between lines")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sections: dict[str, Callable[[Section], None]] = {
        "dense": lambda p: dense_build(
            p, args.pages, args.host_pages, args.repeats, None, args.chars
        ),
        "maxsim": lambda p: maxsim(
            p, args.maxsim_pages, args.maxsim_tokens, args.doc_pages, max(args.repeats, 2)
        ),
        "search": lambda p: search(p, args.search_vectors, 384, max(args.repeats, 2)),
    }
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    if unknown := sorted(set(chosen) - set(sections)):
        parser.error(f"unknown sections {unknown}; known: {', '.join(sections)}")
    run = Run(args.json)
    run.report["environment"] = environment()
    for name in chosen:
        budget = args.budget_s if args.budget_s is not None else BUDGETS[name]
        run_section(run, name, sections[name], budget, args.tick_s)
    print_sections(run.report, number=",.6g")
    finished = [run.report[name] for name in chosen]
    return 0 if all("error" not in f and not f.get("incomplete") for f in finished) else 1


if __name__ == "__main__":
    raise SystemExit(main())
