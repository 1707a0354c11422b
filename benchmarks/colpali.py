"""ColPali benchmark: the pipeline with the tiny offline model, and MaxSim scoring throughput.

    .venv/bin/python benchmarks/colpali.py [--pages 1000] [--tokens 700] [--dim 128]
        [--query-tokens 20] [--queries 5] [--repeats 3] [--pdf-pages 12] [--json OUT]

1. Pipeline (tiny random ColQwen2 built offline, ``scanrag.indexes.colpali_tiny``): a
   PyMuPDF-generated PDF is ingested, rendered, encoded and indexed; then search with region
   proposals, save and reopen. Reports pages/s to index, query latency p50 and the index size. The
   model is tiny, so these figures measure our plumbing (rendering, processor, storage), not a real
   encoder.
2. MaxSim throughput on the CPU (or the GPU when present): ``--pages`` synthetic pages of
   ``--tokens`` fp16 unit vectors (ragged: lengths spread over the last 10%, so padding masks
   are exercised) against ``--queries`` queries of ``--query-tokens`` tokens. Reports
   (page, query) pairs scored per second for the whole store (cached padded batches; also with
   a single query, where nothing is shared between queries), the first call (batches built), a
   scoped search over half of the pages (gathered per call), and colpali-engine's
   ``score_multi_vector`` on the same inputs as the raw-library reference; the best of
   ``--repeats`` (runs interleaved) is kept because other processes share the CPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scanrag.indexes.colpali_packed import PackedVectors  # noqa: E402
from scanrag.indexes.colpali_scoring import MaxSimScorer  # noqa: E402

WORDS = [
    "energy",
    "revenue",
    "telescope",
    "galaxy",
    "table",
    "figure",
    "profit",
    "launch",
    "cell",
    "light",
]


def write_pdf(path: Path, pages: int) -> Path:
    import pymupdf

    pdf = pymupdf.open()
    for i in range(pages):
        page = pdf.new_page(width=595, height=842)
        text = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(60))
        page.insert_textbox(pymupdf.Rect(56, 72, 540, 780), f"Page {i + 1}. {text}", fontsize=12)
    pdf.save(path)
    pdf.close()
    return path


def pipeline(pdf_pages: int) -> dict[str, Any]:
    from scanrag.documents import ingest_pdf
    from scanrag.indexes.colpali import ColPaliIndex
    from scanrag.indexes.colpali_tiny import tiny_model_dir

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        document = ingest_pdf(write_pdf(folder / "bench.pdf", pdf_pages), ocr="never")
        index = ColPaliIndex(str(tiny_model_dir("colqwen2")), dpi=72, batch_size=4)
        start = time.perf_counter()
        index.add([document])
        build_s = time.perf_counter() - start
        latencies, regions = [], 0
        for word in WORDS:
            start = time.perf_counter()
            hits = index.search(f"Where is the {word} discussed?", 5)
            latencies.append(time.perf_counter() - start)
            regions += sum(len(h.regions) for h in hits)
        index.save(folder / "idx")
        size = sum(p.stat().st_size for p in (folder / "idx").rglob("*") if p.is_file())
        reopened = ColPaliIndex.open(folder / "idx")
        same = reopened.search("energy", 5) == index.search("energy", 5)
        return {
            "pages": index.page_count,
            "device": index.device,
            "grid": [int(v) for v in index.page_grid(0)[1:]],
            "tokens_per_page": float(index.store.lengths.mean()),
            "index_pages_per_s": index.page_count / build_s,
            "query_p50_ms": statistics.median(latencies) * 1000,
            "regions_per_query": regions / len(WORDS),
            "index_bytes": size,
            "reload_identical": same,
        }


def synthetic_store(pages: int, tokens: int, dim: int, seed: int = 0) -> PackedVectors:
    """``pages`` pages of ~``tokens`` float16 unit vectors (lengths spread over the last 10%),
    drawn in chunks so that no float32 copy of the whole store is held."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(max(1, int(tokens * 0.9)), tokens + 1, size=pages)
    vectors = np.empty((int(lengths.sum()), dim), dtype=np.float16)
    for first in range(0, len(vectors), 1 << 20):
        chunk = rng.standard_normal((min(1 << 20, len(vectors) - first), dim), dtype=np.float32)
        chunk /= np.linalg.norm(chunk, axis=1, keepdims=True)
        vectors[first : first + len(chunk)] = chunk
    store = PackedVectors(dim)
    store.replace(vectors, np.concatenate([[0], np.cumsum(lengths)]))
    return store


def best_of(repeats: int, *fns: Any) -> list[float]:
    """Best wall time of each function, runs interleaved so load spikes hit all alike."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, spent in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - start)
    return [min(spent) for spent in times]


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from colpali_engine.utils.processing_utils import BaseVisualRetrieverProcessor as Engine

    from scanrag.indexes.colpali_models import select_device

    device = select_device()
    store = synthetic_store(args.pages, args.tokens, args.dim)
    rng = np.random.default_rng(1)
    queries = [
        rng.standard_normal((args.query_tokens, args.dim), dtype=np.float32)
        for _ in range(args.queries)
    ]
    for q in queries:
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    n = args.pages * args.queries
    scorer = MaxSimScorer(device)
    start = time.perf_counter()
    ours = scorer.scores(queries, store)
    first_s = time.perf_counter() - start
    half = np.arange(0, args.pages, 2)
    dtype = torch.float32 if device == "cpu" else torch.float16
    qs = [torch.from_numpy(q).to(dtype) for q in queries]
    ps = [torch.from_numpy(store.page(i).astype(np.float32)).to(dtype) for i in range(len(store))]
    raw = Engine.score_multi_vector(qs, ps, batch_size=256, device=device).numpy()
    whole_s, one_s, scoped_s, raw_s = best_of(
        args.repeats,
        lambda: scorer.scores(queries, store),
        lambda: scorer.scores(queries[:1], store),
        lambda: scorer.scores(queries, store, half),
        lambda: Engine.score_multi_vector(qs, ps, batch_size=256, device=device),
    )
    return {
        "device": device,
        "torch_threads": torch.get_num_threads(),
        "shape": f"{args.pages} pages x ~{args.tokens} tokens x {args.dim} dims (fp16), "
        f"{args.queries} queries x {args.query_tokens} tokens",
        # (page, query) pairs scored per second, i.e. pages/s for each query of the batch
        "pairs_per_s": n / whole_s,
        "pairs_per_s_one_query": args.pages / one_s,
        "pairs_per_s_first_call": n / first_s,
        "pairs_per_s_scoped_half": len(half) * args.queries / scoped_s,
        "colpali_engine_pairs_per_s": n / raw_s,
        "max_rel_diff_vs_engine": float(np.abs(ours - raw).max() / np.abs(raw).max()),
        # on CUDA the first call over 2,000 pages or more also times the paths (scorer.record())
        "maxsim_path": scorer.record(),
    }


def print_sections(report: dict[str, dict[str, Any]], number: str = ",.1f") -> None:
    """One ``[section]`` header per part of the report, then its figures, one per line."""
    for section, figures in report.items():
        print(f"[{section}]")
        for key, value in figures.items():
            shown = f"{value:{number}}" if isinstance(value, float) else value
            print(f"  {key:28s} {shown}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=700)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--query-tokens", type=int, default=20)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pdf-pages", type=int, default=12)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report = {"pipeline": pipeline(args.pdf_pages), "maxsim": throughput(args)}
    print_sections(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
