"""The dense index before and after a change, on this CPU: two source trees side by side.

    git archive main | tar -x -C /tmp/dense_before      # the code to compare against
    .venv/bin/python benchmarks/dense_before_after.py --before /tmp/dense_before \\
        [--sections host,build,recall,query] [--pages 48] [--rounds 3] \\
        [--cache-dir /tmp/dense_before_after] [--sets mmlb,fb] [--json OUT]

Each tree runs in a worker process of its own (its folder first on ``sys.path``, loaded once,
``device="cpu"``, the default embedded encoder and parameters); the driver asks the workers in
turn, A, B, A, B…, so load on shared cores hits both alike, and keeps each figure's best round.

* ``host``: milliseconds per page of ``DenseIndex.add`` with the encoder's forward replaced by
  a no-op returning zero vectors: the host's share of a build (tokenizing, cutting windows,
  batching), wall clock and CPU time of the worker process;
* ``build``: pages per second of ``DenseIndex.add`` (the same pages, the real forward);
* ``recall``: R@1/5/10 of each tree's index on the dev sets (``--sets``: mmlb-dev,
  financebench-dev), each question searching its own document; an index is built once and
  saved under ``--cache-dir/<tree>/<set>`` (later runs load it), and the largest difference
  between the two trees' vectors is reported;
* ``query``: per-document query latency with each tree's index loaded from that cache, query
  encoding included (what ``retrieve eval`` times): every question of the sets once per
  round, query-vector caches emptied between rounds; p50/p95 per round, the best round kept.

The pages of ``host`` and ``build`` are ``--pages`` real financebench-dev pages, evenly spread
over its filings (ingested into ``--doc-cache`` on first use), or generated ones (``--source
synthetic``: no data needed; ``tests/benchmarks/test_dense_before_after.py`` runs it so,
comparing this checkout with itself).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data")
SECTIONS = ("host", "build", "recall", "query")


# -- the worker: one source tree, commands on stdin, one JSON line per answer ------------------
class Worker:
    def __init__(
        self, root: Path, doc_cache: Path, cache_dir: Path, label: str, source: str = "fb"
    ) -> None:
        from scanrag.indexes.dense import DenseIndex

        self.root, self.doc_cache, self.label, self.source = root, doc_cache, label, source
        self.cache_dir = cache_dir / label
        self.make = lambda: DenseIndex(device="cpu")
        self.sets: dict[str, Any] = {}
        self.indexes: dict[str, Any] = {}
        self.picked: dict[int, list[Any]] = {}

    def dev_set(self, name: str) -> Any:
        if name not in self.sets:
            from benchmarks.retrieval import load_set

            self.sets[name] = load_set(name, DATA, self.doc_cache)
        return self.sets[name]

    def pages(self, count: int) -> list[Any]:
        """``count`` financebench-dev pages spread evenly over the set, as one document each
        (or, with ``--source synthetic``, generated pages: ``gpu_bench_dense.synthetic_pages``)."""
        if count not in self.picked and self.source == "synthetic":
            from gpu_bench_dense import synthetic_pages  # beside this script

            self.picked[count] = synthetic_pages(count)
        if count not in self.picked:
            docs = self.dev_set("fb").corpus
            flat = [(d, p) for d in docs for p in d.pages]
            step = max(1, len(flat) // count)
            self.picked[count] = [
                d.model_copy(update={"id": f"{d.id}#{p.number}", "pages": [p], "num_pages": 1})
                for d, p in flat[::step][:count]
            ]
        return self.picked[count]

    def timed_add(self, count: int, forward: bool) -> dict[str, float]:
        docs = self.pages(count)
        index = self.make()
        if not forward:  # the encoder may be shared by every index: put it back after
            _no_forward(index.encoder, index.store.dim)
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            index.add(docs)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        finally:
            vars(index.encoder).pop("forward", None)
        return {"pages": count, "wall_s": wall, "cpu_s": cpu}

    def index(self, name: str) -> Any:
        if name not in self.indexes:
            ds = self.dev_set(name)
            folder = self.cache_dir / name
            index = self.make()
            if (folder / "manifest.json").is_file():
                index.load(folder, ds.corpus)
            else:
                start = time.perf_counter()
                index.add(ds.corpus)
                print(f"{self.label}: built {name} in {time.perf_counter() - start:.0f}s",
                      file=sys.stderr, flush=True)  # fmt: skip
                index.save(folder)
            self.indexes[name] = index
        return self.indexes[name]

    def recall(self, names: list[str]) -> dict[str, Any]:
        from benchmarks.retrieval import hits_of, report_of

        out = {}
        for name in names:
            index = self.index(name)
            macro = report_of(self.dev_set(name), hits_of(self.dev_set(name), index)).macro
            out[name] = {k: macro[k] for k in ("recall@1", "recall@5", "recall@10")}
        return out

    def query(self, names: list[str]) -> dict[str, Any]:
        latencies, cpu = [], []
        for name in names:
            index, ds = self.index(name), self.dev_set(name)
            cache = getattr(index, "_queries", None)
            if cache is not None:
                cache.clear()  # every question encoded, as on its first asking
            for sample in ds.samples:
                scope = [ds.documents[sample.primary_doc].id]
                wall, spent = time.perf_counter(), time.process_time()
                index.search(sample.question, 10, scope)
                latencies.append(1000 * (time.perf_counter() - wall))
                cpu.append(1000 * (time.process_time() - spent))
        return {
            "queries": len(latencies),
            "p50_ms": _percentile(latencies, 50),
            "p95_ms": _percentile(latencies, 95),
            "cpu_p50_ms": _percentile(cpu, 50),
        }

    def serve(self) -> None:
        for line in sys.stdin:
            request = json.loads(line)
            kind = request["section"]
            if kind == "host":
                answer = self.timed_add(request["pages"], forward=False)
            elif kind == "build":
                answer = self.timed_add(request["pages"], forward=True)
            elif kind == "recall":
                answer = self.recall(request["sets"])
            else:
                answer = self.query(request["sets"])
            print(json.dumps(answer), flush=True)


def _no_forward(model: Any, dim: int) -> None:
    import torch

    def forward(features: dict[str, Any], **_: Any) -> dict[str, Any]:
        rows = features["input_ids"].shape[0]
        return {**features, "sentence_embedding": torch.zeros(rows, dim)}

    model.forward = forward


def _percentile(values: list[float], q: int) -> float:
    import numpy as np

    return float(np.percentile(values, q)) if values else 0.0


def worker_main(root: Path, doc_cache: Path, cache_dir: Path, label: str, source: str) -> None:
    sys.path.insert(0, str(root))
    os.chdir(root)
    import scanrag.indexes.dense

    where = Path(scanrag.indexes.dense.__file__).resolve()
    if not where.is_relative_to(root):
        raise SystemExit(f"{label}: scanrag.indexes.dense came from {where}, not from {root}")
    Worker(root, doc_cache, cache_dir, label, source).serve()


# -- the driver --------------------------------------------------------------------------------
class Side:
    """A worker process for one tree."""

    def __init__(self, label: str, root: Path, args: argparse.Namespace) -> None:
        command = [
            sys.executable, __file__, "--worker", str(root), "--label", label,
            "--doc-cache", str(args.doc_cache), "--cache-dir", str(args.cache_dir),
            "--source", args.source,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(root)}
        self.label = label
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.label} worker stopped (see its stderr above)")
        return dict(json.loads(line))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def interleaved(sides: list[Side], request: dict[str, Any], rounds: int, key: str) -> Any:
    """Each side's answers over ``rounds`` A, B, A, B… rounds, and its best (lowest ``key``)."""
    answers: dict[str, list[dict[str, Any]]] = {s.label: [] for s in sides}
    for turn in range(rounds):
        for side in sides if turn % 2 == 0 else sides[::-1]:
            answers[side.label].append(side.ask(request))
    return {
        label: min(got, key=lambda a: a[key]) | {"rounds": got} for label, got in answers.items()
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    sides = [Side("before", args.before.resolve(), args), Side("after", REPO, args)]
    report: dict[str, Any] = {"environment": environment()}
    sets = [s for s in args.sets.split(",") if s]
    try:
        for section in args.sections:
            if section in ("host", "build"):
                best = interleaved(
                    sides, {"section": section, "pages": args.pages}, args.rounds, "wall_s"
                )
                report[section] = per_page(best, section)
            elif section == "recall":
                report["recall"] = {
                    s.label: s.ask({"section": "recall", "sets": sets}) for s in sides
                }
                report["recall"]["max_abs_vector_diff"] = vector_diff(args.cache_dir, sets)
            else:
                best = interleaved(sides, {"section": "query", "sets": sets}, args.rounds, "p50_ms")
                report["query"] = {label: query_figures(b) for label, b in best.items()}
    finally:
        for side in sides:
            side.close()
    report["environment"]["load_average_after"] = " ".join(f"{v:.1f}" for v in os.getloadavg())
    return report


def query_figures(best: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in best.items() if k != "rounds"}
    return out | {"p50_ms_rounds": [r["p50_ms"] for r in best["rounds"]]}


def per_page(best: dict[str, Any], section: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, b in best.items():
        if section == "host":
            out[f"{label}_ms_per_page_wall"] = 1000 * b["wall_s"] / b["pages"]
            out[f"{label}_ms_per_page_cpu"] = 1000 * b["cpu_s"] / b["pages"]
            out[f"{label}_ms_per_page_wall_rounds"] = [
                1000 * r["wall_s"] / r["pages"] for r in b["rounds"]
            ]
        else:
            out[f"{label}_pages_per_s"] = b["pages"] / b["wall_s"]
            out[f"{label}_pages_per_cpu_s"] = b["pages"] / b["cpu_s"]
            out[f"{label}_pages_per_s_rounds"] = [r["pages"] / r["wall_s"] for r in b["rounds"]]
    if section == "host":
        out["after_over_before_wall"] = (
            out["after_ms_per_page_wall"] / out["before_ms_per_page_wall"]
        )
        out["after_over_before_cpu"] = out["after_ms_per_page_cpu"] / out["before_ms_per_page_cpu"]
    else:
        out["after_over_before"] = out["after_pages_per_s"] / out["before_pages_per_s"]
    return out


def vector_diff(cache_dir: Path, sets: list[str]) -> dict[str, float]:
    import numpy as np

    out = {}
    for name in sets:
        a, b = (
            np.load(next((cache_dir / s / name).rglob("vectors.npy"))) for s in ("before", "after")
        )
        out[name] = float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")
    return out


def environment() -> dict[str, Any]:
    text = (
        Path("/proc/cpuinfo").read_text(errors="replace") if Path("/proc/cpuinfo").is_file() else ""
    )
    return {
        "cpus": os.cpu_count() or 0,
        "cpu_flags": " ".join(f for f in ("amx_bf16", "avx512f", "avx2") if f" {f}" in text),
        "load_average_before": " ".join(f"{v:.1f}" for v in os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the source tree to compare against")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated")
    parser.add_argument("--pages", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sets", default="mmlb,fb")
    parser.add_argument(
        "--source", choices=("fb", "synthetic"), default="fb", help="pages of host and build"
    )
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/dense_before_after"))
    parser.add_argument("--doc-cache", type=Path, default=REPO / ".scanrag_cache")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--label", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(
            args.worker, args.doc_cache.resolve(), args.cache_dir.resolve(), args.label, args.source
        )
        return 0
    if args.before is None or not (args.before / "indexes" / "dense.py").is_file():
        parser.error("--before must be a source tree of the project (git archive main | tar -x)")
    args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    if unknown := sorted(set(args.sections) - set(SECTIONS)):
        parser.error(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    args.doc_cache, args.cache_dir = args.doc_cache.resolve(), args.cache_dir.resolve()
    report = run(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
