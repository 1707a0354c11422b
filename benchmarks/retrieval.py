"""Retrieval benchmark on mmlb-dev, financebench-dev and their union: ablations, defaults, speed.

    .venv/bin/python benchmarks/retrieval.py [--sets mmlb,fb] [--cache-dir DIR] [--json OUT]
        [--backends onnx,onnx-int8,torch-bf16] [--skip-speed] [--skip-quality]

Quality: every question searches its own document (per-document scope); R@1/3/5/10, MRR@5 and
nDCG@5 (macro means over the answerable questions with gold pages,
``scanrag.evaluation.retrieval.metrics``) per dev set, and on the union (the pooled mean over both
sets' questions, each scored in its own set's store: 70 + 35 questions). One question moves R@5 by
0.014 on mmlb and 0.029 on financebench: differences under ~0.03 are noise.

Tables (markdown), one change at a time:

1. BM25 from the earlier default (lowercase ``\\w+``, page text, raw question) adding one
   ingredient; then the new default removing one ingredient;
2. dense: query handling and encoder backends (full encodes of every page);
3. fusion rules over the default components (dense by the whole question), the rule chosen on
   one set checked on the other (``benchmarks/fusion_cv.py`` runs the full cross-set protocol
   behind the hybrid's default, dense searched by sentences included);
4. how much rests on the financial statement expansion (``query_mode`` without ``stmt``);
5. the defaults a user gets (bm25, dense, hybrid) and the hybrid-vs-best-single margin.

Speed: BM25 build pages/s (earlier vs new tokenizer, whole set) and dense build pages/s per
encoder backend on a sample, interleaved (``benchmarks/retrieval_speed.py``), plus the
full-set build time of every dense index built in this run. Indexes are cached under
``--cache-dir``/bench-indexes (a dense index of financebench takes tens of minutes on 2 cores);
a cached index is checked against the corpus and parameters when loaded.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.retrieval_speed import backend_speed, print_speed  # noqa: E402
from scanrag.datasets import load_generic  # noqa: E402
from scanrag.documents import DocumentStore  # noqa: E402
from scanrag.evaluation.retrieval.metrics import RetrievalReport, evaluate_retrieval  # noqa: E402
from scanrag.hashing import stable_hash  # noqa: E402
from scanrag.indexes.bm25 import BM25Index  # noqa: E402
from scanrag.indexes.tokenize import TokenizerConfig  # noqa: E402
from scanrag.retrievers.fusion import fuse  # noqa: E402
from scanrag.retrievers.hybrid import HybridRetriever  # noqa: E402
from scanrag.schemas import Document, PageHit, Sample  # noqa: E402

KS = [1, 3, 5, 10]
COLUMNS = ["recall@1", "recall@3", "recall@5", "recall@10", "mrr@5", "ndcg@5"]
SHORT = ["R@1", "R@3", "R@5", "R@10", "MRR@5", "nDCG@5"]
SETS = {"mmlb": "mmlb-dev", "fb": "financebench-dev"}
DEPTH = 100
OLD_BM25_INDEX: dict[str, Any] = {
    "tokenizer": TokenizerConfig.plain().model_dump(mode="json"),
    "page_text": "text",
}
OLD_BM25: dict[str, Any] = {**OLD_BM25_INDEX, "query_mode": "raw"}


@dataclass
class DevSet:
    name: str
    samples: list[Sample]
    documents: dict[str, Document]  # file name -> document
    corpus: list[Document]
    built: dict[str, float] = field(default_factory=dict)  # index label -> build seconds

    @property
    def pages(self) -> int:
        return sum(len(d.pages) for d in self.corpus)


def load_set(name: str, data: Path, cache: Path) -> DevSet:
    folder = data / SETS[name]
    dataset = load_generic(folder / "questions.jsonl", folder / "pdfs")
    store = DocumentStore(cache / "documents")
    docs = {n: store.load_or_ingest(dataset.pdf_dir / n) for n in sorted(dataset.doc_ids())}
    corpus = list({d.id: d for d in docs.values()}.values())
    scored = [s for s in dataset.samples if s.gold_pages and s.primary_doc in docs]
    return DevSet(name, scored, docs, corpus)


# -- indexes (cached) -------------------------------------------------------------------------
def cached(ds: DevSet, index: Any, label: str, cache: Path) -> Any:
    """``index`` loaded from ``cache``/bench-indexes/<set>-<label>, else built and saved."""
    folder = cache / "bench-indexes" / f"{ds.name}-{label}"
    if (folder / "manifest.json").is_file():
        try:
            return index.load(folder, ds.corpus)
        except Exception as exc:  # stale cache: rebuild
            print(f"  {folder.name}: cached index unusable ({exc}); rebuilding", file=sys.stderr)
    start = time.perf_counter()
    index.add(ds.corpus)
    ds.built[label] = time.perf_counter() - start
    print(f"  built {ds.name}/{label} in {ds.built[label]:.0f}s", file=sys.stderr)
    index.save(folder)
    return index


def bm25(ds: DevSet, cache: Path, query_mode: str | None = None, **params: Any) -> BM25Index:
    """A BM25 index (cached by its content parameters: variants that only differ in
    ``query_mode`` share one); ``query_mode`` ``None`` keeps the class default."""
    index = BM25Index(**params)
    index = cached(ds, index, f"bm25-{stable_hash(index.params(), 10)}", cache)
    return index if query_mode is None else with_query_mode(index, query_mode)


def dense(ds: DevSet, cache: Path, backend: str, query_mode: str | None = None) -> Any:
    from scanrag.indexes.dense import DenseIndex

    index = cached(ds, DenseIndex(backend=backend, device="cpu"), f"dense-{backend}", cache)
    return index if query_mode is None else with_query_mode(index, query_mode)


def with_query_mode(index: Any, mode: str) -> Any:
    """A shallow copy of ``index`` (same stored pages) searching with ``query_mode`` ``mode``."""
    other = copy.copy(index)
    other.query_mode = mode
    return other


# -- scoring ----------------------------------------------------------------------------------
Hits = dict[str, list[PageHit]]  # question id -> hits (top DEPTH)
Figures = dict[str, dict[str, float]]  # group -> metric -> value


def hits_of(ds: DevSet, retriever: Any) -> Hits:
    return {
        s.id: retriever.search(s.question, DEPTH, [ds.documents[s.primary_doc].id])
        for s in ds.samples
    }


def report_of(ds: DevSet, hits: Hits) -> RetrievalReport:
    runs = ((s.id, [h.page for h in hits[s.id]][: max(KS)], s.gold_pages) for s in ds.samples)
    return evaluate_retrieval(runs, KS)


def figures(reports: dict[str, RetrievalReport]) -> Figures:
    """Per set macro metrics and the union (pooled over every question)."""
    out = {name: dict(report.macro) for name, report in reports.items()}
    pooled = [q.metrics for report in reports.values() for q in report.per_question]
    if len(reports) > 1 and pooled:
        out["union"] = {m: sum(q[m] for q in pooled) / len(pooled) for m in pooled[0]}
    return out


class Bench:
    """Hit lists per variant and set, memoised, and the tables built from them."""

    def __init__(self, sets: list[DevSet], cache: Path) -> None:
        self.sets, self.cache = sets, cache
        self.hits: dict[tuple[str, str], Hits] = {}
        self.tables: dict[str, dict[str, Figures]] = {}

    def run(self, label: str, make: Callable[[DevSet], Any]) -> dict[str, Hits]:
        out = {}
        for ds in self.sets:
            key = (label, ds.name)
            if key not in self.hits:
                self.hits[key] = hits_of(ds, make(ds))
            out[ds.name] = self.hits[key]
        return out

    def fused(self, parts: Sequence[str], weights: Sequence[float], how: str,
              k_rrf: float = 60.0) -> dict[str, Hits]:  # fmt: skip
        out = {}
        for ds in self.sets:
            lists = [self.hits[(p, ds.name)] for p in parts]
            out[ds.name] = {
                s.id: fuse([h[s.id] for h in lists], weights, how, DEPTH, k_rrf) for s in ds.samples
            }
        return out

    def score(self, hits: dict[str, Hits]) -> Figures:
        return figures({ds.name: report_of(ds, hits[ds.name]) for ds in self.sets})

    def table(self, title: str, rows: dict[str, Figures]) -> None:
        self.tables[title] = rows
        print(f"\n## {title}\n")
        for group in [*(ds.name for ds in self.sets), "union"]:
            if not all(group in r for r in rows.values()):
                continue
            print(f"**{group}**\n")
            print("| variant | " + " | ".join(SHORT) + " |")
            print("|---|" + "---:|" * len(SHORT))
            for label, row in rows.items():
                cells = " | ".join(f"{row[group][c]:.3f}" for c in COLUMNS)
                print(f"| {label} | {cells} |")
            print()


# -- the tables -------------------------------------------------------------------------------
def bm25_tables(bench: Bench) -> None:
    cache = bench.cache

    def variant(tok: dict[str, Any], page_text: str, query: str) -> Callable[[DevSet], Any]:
        tokenizer = TokenizerConfig.plain(**tok).model_dump(mode="json")
        return lambda ds: bm25(ds, cache, query, tokenizer=tokenizer, page_text=page_text)

    rows: dict[str, Figures] = {}
    steps = [
        ("earlier default (\\w+, page text, raw question)", {}, "text", "raw"),
        ("+ numbers kept whole", {"numbers": True}, "text", "raw"),
        ("+ English stopwords removed", {"stopwords": "english"}, "text", "raw"),
        ("+ Snowball stems", {"stem": True}, "text", "raw"),
        ("+ bigrams", {"bigrams": True}, "text", "raw"),
        ("+ page heading", {}, "heading+text", "raw"),
        ("+ table text", {}, "text+tables", "raw"),
        ("+ query: strip instructions", {}, "text", "strip"),
        ("+ query: strip + statement expansion", {}, "text", "strip+stmt"),
    ]
    for label, tok, page_text, query in steps:
        rows[label] = bench.score(bench.run(f"bm25 {label}", variant(tok, page_text, query)))
    bench.table("BM25: one change at a time from the earlier default", rows)

    full = TokenizerConfig().model_dump(mode="json")
    rows = {}
    removals = [
        ("new default (all of the below)", {}, "heading+text+tables", "strip+stmt"),
        ("− numbers kept whole", {"numbers": False}, "heading+text+tables", "strip+stmt"),
        ("− stopwords", {"stopwords": "none"}, "heading+text+tables", "strip+stmt"),
        ("− stems", {"stem": False}, "heading+text+tables", "strip+stmt"),
        ("− bigrams", {"bigrams": False}, "heading+text+tables", "strip+stmt"),
        ("− page heading", {}, "text+tables", "strip+stmt"),
        ("− table text", {}, "heading+text", "strip+stmt"),
        ("− statement expansion (query strip)", {}, "heading+text+tables", "strip"),
        ("− query handling (raw question)", {}, "heading+text+tables", "raw"),
    ]
    for label, tok, page_text, query in removals:
        tokenizer = {**full, **tok}
        make = lambda ds, t=tokenizer, p=page_text, q=query: bm25(  # noqa: E731
            ds, cache, q, tokenizer=t, page_text=p
        )
        rows[label] = bench.score(bench.run(f"bm25 {label}", make))
    bench.table("BM25: one change at a time from the new default", rows)


def dense_tables(bench: Bench, backends: Sequence[str]) -> None:
    rows: dict[str, Figures] = {}
    for query in ("raw", "strip", "strip+stmt"):
        label = f"dense torch, query {query}"
        make = lambda ds, q=query: dense(ds, bench.cache, "torch", q)  # noqa: E731
        rows[label] = bench.score(bench.run(label, make))
    for backend in backends:
        for query in ("raw", "strip"):
            label = f"dense {backend}, query {query}"
            make = lambda ds, b=backend, q=query: dense(ds, bench.cache, b, q)  # noqa: E731
            rows[label] = bench.score(bench.run(label, make))
    bench.table("Dense (MiniLM, 254/32 windows, max): query handling and backends", rows)


def fusion_tables(bench: Bench, backend: str) -> dict[str, Any]:
    lexical, semantic = "bm25 new default (all of the below)", f"dense {backend}, query strip"
    old_lexical = "bm25 earlier default (\\w+, page text, raw question)"
    old_semantic = "dense torch, query raw"
    cache = bench.cache
    singles = {
        "bm25": bench.score(bench.run(lexical, lambda ds: bm25(ds, cache, "strip+stmt"))),
        "dense": bench.score(bench.run(semantic, lambda ds: dense(ds, cache, backend, "strip"))),
    }
    bench.run(old_lexical, lambda ds: bm25(ds, cache, "raw", **OLD_BM25_INDEX))
    bench.run(old_semantic, lambda ds: dense(ds, cache, "torch", "raw"))
    grid: dict[str, tuple[str, list[float], float]] = {}
    for how in ("zconf", "minmax", "z"):
        for w in (0.3, 0.4, 0.5, 0.6, 0.7):
            grid[f"{how}, dense weight {w}"] = (how, [1 - w, w], 60.0)
    for k_rrf in (60.0, 10.0):
        for wl, wd in ((1.0, 1.0), (1.5, 1.0), (1.0, 1.5)):
            grid[f"rrf k={k_rrf:g}, weights {wl:g}:{wd:g}"] = ("rrf", [wl, wd], k_rrf)
    scored = {
        label: bench.score(bench.fused([lexical, semantic], w, how, k))
        for label, (how, w, k) in grid.items()
    }
    rows: dict[str, Figures] = {
        "earlier hybrid (earlier bm25 + dense raw, rrf k=60 1:1)": bench.score(
            bench.fused([old_lexical, old_semantic], [1.0, 1.0], "rrf")
        ),
        "bm25 (new default)": singles["bm25"],
        "dense (query strip)": singles["dense"],
        **scored,
    }
    bench.table("Fusion of the default components (bm25 + dense)", rows)
    names = [ds.name for ds in bench.sets]
    chosen = {}
    if len(names) == 2:
        for pick, other in (names, names[::-1]):
            best = max(scored, key=lambda n: (scored[n][pick]["recall@5"],
                                              scored[n][pick]["ndcg@5"]))  # fmt: skip
            single = max(singles[s][other]["recall@5"] for s in singles)
            chosen[pick] = best
            print(
                f"chosen on {pick}: {best} → on {other} R@5 {scored[best][other]['recall@5']:.3f}"
                f" vs best single {single:.3f}"
            )
    return {"grid": scored, "chosen_on": chosen}


def statement_table(bench: Bench, backend: str) -> None:
    cache = bench.cache
    rows: dict[str, Figures] = {}
    full = TokenizerConfig().model_dump(mode="json")
    configs = [("raw", "raw"), ("strip", "strip"), ("strip", "raw"), ("strip+stmt", "strip")]
    for lex_q, dense_q in configs:
        lex = f"bm25 new tokens+text, query {lex_q}"
        hits = bench.run(lex, lambda ds, q=lex_q: bm25(ds, cache, q, tokenizer=full))
        rows[f"bm25 query {lex_q}"] = bench.score(hits)
        sem = f"dense {backend}, query {dense_q}"
        hits = bench.run(sem, lambda ds, q=dense_q: dense(ds, cache, backend, q))
        rows[f"dense query {dense_q}"] = bench.score(hits)
        rows[f"hybrid (bm25 {lex_q}, dense {dense_q})"] = bench.score(
            bench.fused([lex, sem], [1.0, 1.0], "minmax")
        )
    bench.table("How much rests on the query handling (minmax hybrid)", rows)


def default_table(bench: Bench, backend: str) -> dict[str, Any]:
    """The retrievers a user gets with no parameters (dense on ``backend``)."""
    cache = bench.cache
    rows = {
        "bm25": bench.score(bench.run("default bm25", lambda ds: bm25(ds, cache))),
        "dense": bench.score(bench.run("default dense", lambda ds: dense(ds, cache, backend))),
    }
    rows["hybrid"] = bench.score(
        bench.run(
            "default hybrid",
            lambda ds: HybridRetriever([bm25(ds, cache), dense(ds, cache, backend)]),
        )
    )
    bench.table(f"Defaults (dense backend {backend})", rows)
    margins = {}
    print("hybrid − best single retriever, R@5:")
    for group in rows["hybrid"]:
        best = max(("bm25", "dense"), key=lambda n: rows[n][group]["recall@5"])
        margins[group] = rows["hybrid"][group]["recall@5"] - rows[best][group]["recall@5"]
        print(f"- {group}: {margins[group]:+.3f} (best single: {best})")
    return {"rows": rows, "margin_r5": margins}


def bm25_speed(sets: list[DevSet]) -> dict[str, Any]:
    out = {}
    for ds in sets:
        for label, params in (("earlier", OLD_BM25), ("new default", {})):
            index = BM25Index(**params)
            start = time.perf_counter()
            index.add(ds.corpus)
            spent = time.perf_counter() - start
            out[f"{ds.name} {label}"] = {
                "pages": ds.pages,
                "s": spent,
                "pages_per_s": ds.pages / spent,
            }
    print("\n## BM25 build speed (whole set, one run)\n")
    for label, row in out.items():
        print(
            f"- {label}: {row['pages']} pages in {row['s']:.1f}s, {row['pages_per_s']:.0f} pages/s"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".scanrag_cache")
    parser.add_argument("--sets", default="mmlb,fb", help="comma-separated: mmlb, fb")
    parser.add_argument("--backends", default="onnx,onnx-int8,torch-bf16", help="besides torch")
    parser.add_argument("--default-backend", default="torch", help="dense backend of the defaults")
    parser.add_argument("--speed-docs", default=",".join(SPEED_DOCS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write figures here")
    args = parser.parse_args(argv)

    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    sets = [load_set(n, args.data, args.cache_dir) for n in names]
    for ds in sets:
        print(f"{ds.name}: {len(ds.corpus)} PDFs, {ds.pages} pages, {len(ds.samples)} questions")
    out: dict[str, Any] = {}
    if not args.skip_quality:
        bench = Bench(sets, args.cache_dir)
        bm25_tables(bench)
        dense_tables(bench, backends)
        out["fusion"] = fusion_tables(bench, args.default_backend)
        statement_table(bench, args.default_backend)
        out["defaults"] = default_table(bench, args.default_backend)
        out["tables"] = bench.tables
        out["full_builds_s"] = {ds.name: ds.built for ds in sets}
        for ds in sets:
            for label, seconds in ds.built.items():
                if not label.startswith("dense"):
                    continue
                rate = ds.pages / seconds
                print(f"full build {ds.name}/{label}: {seconds:.0f}s, {rate:.2f} pages/s")
    if not args.skip_speed:
        out["bm25_speed"] = bm25_speed(sets)
        wanted = {n.strip() for n in args.speed_docs.split(",")}
        sample = [d for ds in sets for d in ds.corpus if d.name in wanted]
        out["dense_speed"] = backend_speed(sample, backends, repeats=args.repeats)
        print_speed(out["dense_speed"])
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


SPEED_DOCS = (
    "JOHNSON_JOHNSON_2023Q2_EARNINGS.pdf",
    "indonesiamobilemarketresearch-ag-150106055934-conversion-gate02_95.pdf",
)

if __name__ == "__main__":
    sys.exit(main())
