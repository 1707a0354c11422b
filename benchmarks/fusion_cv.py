"""Fusion chosen on one dev set, measured on the other: the hybrid's cross-set protocol.

    .venv/bin/python benchmarks/fusion_cv.py [--data DIR] [--cache-dir DIR] [--backend torch]
        [--json OUT] [--bootstrap 2000] [--skip-check] [--latency ROUNDS]

Why: the fusion used to be picked looking at both dev sets at once, and on held-out documents
it fell between its components. Here every choice is made on one set and reported on the
other, so the figures are what a setting does on documents it was not chosen on.

1. Component lists (cached under ``--cache-dir``/fusion-lists, keyed by the index manifest,
   query mode, view and depth): per question of mmlb-dev and financebench-dev, the top
   ``depth`` = 100 pages of its own document from bm25 (query ``strip+stmt``, the default,
   and ``strip``), dense by the question (``strip``) and dense by sentences
   (``scanrag.retrievers.views``). The indexes are ``benchmarks/retrieval.py``'s cached ones.
2. Candidates: every fusion rule (``zconf``, ``minmax``, ``z``, ``rrf`` k=60) × dense view
   (question, sentences), equal weights — and, as a second family, the same with dense
   weights 0.3–0.7 (weights are what fails to transfer). Fused with
   ``scanrag.retrievers.fusion.fuse``, the code the hybrid runs.
3. Protocol: for each set, the candidate with the best R@5 on the *other* set (ties: nDCG@5,
   then MRR@5, then the order above) is reported on this set; the union pools the two
   cross-set halves (each question scored with the setting chosen on the other set). The
   statement expansion (bm25 ``stmt``) was written after reading financebench questions, so
   the protocol also runs with bm25 ``strip``.
4. The defaults a user gets (``HybridRetriever()`` over the default indexes) are run end to
   end and must equal their candidate's lists (a check that the benchmark measures the code).

``--latency 3`` times one-question hybrid searches with dense by question and by sentences,
interleaved, best of 3 (report the load average with the figures).

Margins are hybrid R@5 minus the best single retriever's, with a paired bootstrap 95%
interval over questions. One question moves R@5 by 0.014 on mmlb and 0.029 on fb.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.retrieval import SETS, DevSet, bm25, dense, load_set  # noqa: E402
from scanrag.evaluation.retrieval.metrics import question_metrics  # noqa: E402
from scanrag.hashing import stable_hash  # noqa: E402
from scanrag.retrievers.fusion import fuse  # noqa: E402
from scanrag.retrievers.hybrid import HybridRetriever  # noqa: E402
from scanrag.retrievers.views import search_views  # noqa: E402
from scanrag.schemas import PageHit  # noqa: E402

DEPTH = 100
KS = [1, 3, 5, 10]
SHOWN = [("recall@1", "R@1"), ("recall@5", "R@5"), ("recall@10", "R@10"), ("mrr@5", "MRR@5"),
         ("ndcg@5", "nDCG@5")]  # fmt: skip
RULES = ["zconf", "minmax", "z", "rrf"]
DENSE_VIEWS = {"question": "dense", "sentences": "dense:sentences"}
DENSE_WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7]
Lists = dict[str, list[PageHit]]  # question id -> top DEPTH hits
Metrics = dict[str, float]


@dataclass(frozen=True)
class Candidate:
    rule: str
    view: str  # key of DENSE_VIEWS
    dense_weight: float = 0.5

    @property
    def label(self) -> str:
        weights = "" if self.dense_weight == 0.5 else f", dense weight {self.dense_weight:g}"
        return f"{self.rule}, dense by {self.view}{weights}"


REFERENCES = {
    "hybrid default (zconf, dense by sentences)": Candidate("zconf", "sentences"),
    "earlier default (minmax, dense by question)": Candidate("minmax", "question"),
}


def candidates(weighted: bool) -> list[Candidate]:
    weights = DENSE_WEIGHTS if weighted else [0.5]
    return [Candidate(r, v, w) for r in RULES for v in DENSE_VIEWS for w in weights]


# -- component lists (cached) -----------------------------------------------------------------
def component_lists(ds: DevSet, cache: Path, backend: str) -> dict[str, Lists]:
    """label -> lists: ``bm25`` (strip+stmt), ``bm25:strip``, ``dense``, ``dense:sentences``."""
    specs: dict[str, tuple[Any, str]] = {
        "bm25": (bm25(ds, cache, "strip+stmt"), "query"),
        "bm25:strip": (bm25(ds, cache, "strip"), "query"),
        "dense": (dense(ds, cache, backend, "strip"), "query"),
        "dense:sentences": (dense(ds, cache, backend, "strip"), "sentences"),
    }
    return {label: cached_lists(ds, index, view, cache) for label, (index, view) in specs.items()}


def cached_lists(ds: DevSet, index: Any, view: str, cache: Path) -> Lists:
    key = stable_hash([index.manifest(), index.query_mode, view, DEPTH, [s.id for s in ds.samples]])
    path = cache / "fusion-lists" / f"{ds.name}-{index.name}-{key}.json"
    if path.is_file():
        raw = json.loads(path.read_text())
        return {qid: [PageHit(**h) for h in hits] for qid, hits in raw.items()}
    lists = {
        s.id: search_views(index, [s.question], view, DEPTH, [ds.documents[s.primary_doc].id])[0]
        for s in ds.samples
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({q: [h.model_dump(mode="json") for h in v] for q, v in lists.items()})
    )
    return lists


# -- scoring ----------------------------------------------------------------------------------
def per_question(ds: DevSet, lists: Lists) -> list[Metrics]:
    return [question_metrics([h.page for h in lists[s.id]], s.gold_pages, KS) for s in ds.samples]


def mean(rows: Sequence[Metrics]) -> Metrics:
    return {m: sum(r[m] for r in rows) / len(rows) for m in rows[0]} if rows else {}


def fused_lists(parts: dict[str, Lists], c: Candidate, lexical: str, ds: DevSet) -> Lists:
    semantic = DENSE_VIEWS[c.view]
    weights = [1 - c.dense_weight, c.dense_weight]
    return {
        s.id: fuse([parts[lexical][s.id], parts[semantic][s.id]], weights, c.rule, DEPTH)
        for s in ds.samples
    }


def order_key(m: Metrics) -> tuple[float, float, float]:
    return (round(m["recall@5"], 9), round(m["ndcg@5"], 9), round(m["mrr@5"], 9))


def bootstrap(diffs: Sequence[float], rounds: int, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean of ``diffs`` over questions resampled with replacement."""
    if not diffs or rounds < 1:
        return (float("nan"), float("nan"))
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(rounds))
    return means[int(0.025 * (rounds - 1))], means[int(0.975 * (rounds - 1))]


@dataclass
class Protocol:
    """Per set: per candidate the per-question metrics; and the singles."""

    sets: list[DevSet]
    parts: dict[str, dict[str, Lists]]  # set -> label -> lists
    lexical: str  # "bm25" or "bm25:strip"

    def singles(self) -> dict[str, dict[str, list[Metrics]]]:
        labels = {"bm25": self.lexical, "dense": "dense"}
        return {
            name: {ds.name: per_question(ds, self.parts[ds.name][label]) for ds in self.sets}
            for name, label in labels.items()
        }

    def scored(self, cands: list[Candidate]) -> dict[Candidate, dict[str, list[Metrics]]]:
        return {
            c: {
                ds.name: per_question(ds, fused_lists(self.parts[ds.name], c, self.lexical, ds))
                for ds in self.sets
            }
            for c in cands
        }

    def cross(self, cands: list[Candidate]) -> dict[str, Any]:
        """For each set the candidate chosen on the other one, and the pooled union."""
        scored = self.scored(cands)
        names = [ds.name for ds in self.sets]
        chosen: dict[str, Candidate] = {}
        for name in names:
            (other,) = [n for n in names if n != name]
            chosen[name] = max(cands, key=lambda c: order_key(mean(scored[c][other])))
        rows = {name: scored[chosen[name]][name] for name in names}
        rows["union"] = [m for name in names for m in rows[name]]
        return {"chosen": chosen, "rows": rows, "scored": scored}


# -- tables -----------------------------------------------------------------------------------
def cells(m: Metrics) -> str:
    return " | ".join(f"{m[key]:.3f}" for key, _ in SHOWN)


def table(title: str, rows: dict[str, dict[str, Metrics]], groups: list[str]) -> None:
    print(f"\n### {title}\n")
    print("| retriever | set | " + " | ".join(short for _, short in SHOWN) + " |")
    print("|---|---|" + "---:|" * len(SHOWN))
    for group in groups:
        for label, per_set in rows.items():
            if group in per_set:
                print(f"| {label} | {group} | {cells(per_set[group])} |")


def report(proto: Protocol, weighted: bool, rounds: int) -> dict[str, Any]:
    singles = proto.singles()
    single_rows = {
        name: {**per_set, "union": [m for rows in per_set.values() for m in rows]}
        for name, per_set in singles.items()
    }
    result = proto.cross(candidates(weighted))
    groups = [*(ds.name for ds in proto.sets), "union"]
    rows: dict[str, dict[str, Metrics]] = {
        name: {g: mean(single_rows[name][g]) for g in groups} for name in single_rows
    }
    rows["hybrid, chosen on the other set"] = {g: mean(result["rows"][g]) for g in groups}
    for label, c in REFERENCES.items():  # fixed settings, for comparison
        per_set = result["scored"].get(c) or proto.scored([c])[c]
        pooled = [m for v in per_set.values() for m in v]
        rows[label] = {**{n: mean(v) for n, v in per_set.items()}, "union": mean(pooled)}
    family = "dense weights 0.3–0.7" if weighted else "equal weights"
    query = "strip+stmt" if proto.lexical == "bm25" else "strip"
    table(f"Cross-set ({family}; bm25 query {query})", rows, groups)
    margins = {}
    for g in groups:
        best = max(("bm25", "dense"), key=lambda n: rows[n][g]["recall@5"])
        diffs = [
            h["recall@5"] - b["recall@5"]
            for h, b in zip(result["rows"][g], single_rows[best][g], strict=True)
        ]
        low, high = bootstrap(diffs, rounds)
        margins[g] = {"best_single": best, "margin": sum(diffs) / len(diffs), "ci95": [low, high]}
        print(f"- {g}: R@5 margin over {best} {margins[g]['margin']:+.3f} "
              f"(95% bootstrap [{low:+.3f}, {high:+.3f}])")  # fmt: skip
    for name, c in result["chosen"].items():
        (other,) = [ds.name for ds in proto.sets if ds.name != name]
        print(f"- reported on {name}: {c.label} (chosen on {other})")
    return {
        "rows": rows,
        "margins": margins,
        "chosen": {n: c.label for n, c in result["chosen"].items()},
        "grid": {
            c.label: {n: mean(v) for n, v in per_set.items()}
            for c, per_set in result["scored"].items()
        },
    }


def grid_table(out: dict[str, Any], names: list[str]) -> None:
    print("\n### Every candidate (R@5 / R@1 / MRR@5 per set; equal weights, bm25 strip+stmt)\n")
    print("| candidate | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for label, per_set in out["grid"].items():
        values = " | ".join(
            f"{per_set[n]['recall@5']:.3f} / {per_set[n]['recall@1']:.3f} / "
            f"{per_set[n]['mrr@5']:.3f}"
            for n in names
        )
        print(f"| {label} | {values} |")


def check_defaults(sets: list[DevSet], parts: dict[str, dict[str, Lists]], cache: Path,
                   backend: str) -> None:  # fmt: skip
    """``HybridRetriever()`` over the default indexes returns the ``zconf``/sentences lists."""
    want = Candidate("zconf", "sentences")
    for ds in sets:
        hybrid = HybridRetriever([bm25(ds, cache), dense(ds, cache, backend)])
        expected = fused_lists(parts[ds.name], want, "bm25", ds)
        for s in ds.samples:
            got = hybrid.search(s.question, DEPTH, [ds.documents[s.primary_doc].id])
            if [h.page for h in got] != [h.page for h in expected[s.id]]:
                raise SystemExit(f"default hybrid differs from {want.label} on {s.id}")
    print(f"\nchecked: HybridRetriever() equals '{want.label}' on every question")


def latency(sets: list[DevSet], cache: Path, backend: str, rounds: int) -> dict[str, Any]:
    """ms per one-question hybrid search (k=10), dense by question vs by sentences, the two
    interleaved, best of ``rounds``."""
    import time

    out: dict[str, Any] = {}
    for ds in sets:
        lexical, semantic = bm25(ds, cache), dense(ds, cache, backend)
        hybrids = {
            "question": HybridRetriever([lexical, semantic], views=["query", "query"]),
            "sentences": HybridRetriever([lexical, semantic]),
        }
        best = dict.fromkeys(hybrids, float("inf"))
        for _ in range(rounds):
            for label, hybrid in hybrids.items():
                start = time.perf_counter()
                for s in ds.samples:
                    hybrid.search(s.question, 10, [ds.documents[s.primary_doc].id])
                spent = (time.perf_counter() - start) / len(ds.samples)
                best[label] = min(best[label], spent)
        out[ds.name] = {label: 1000 * v for label, v in best.items()}
        print(f"latency {ds.name}: dense by question {out[ds.name]['question']:.1f} ms, "
              f"by sentences {out[ds.name]['sentences']:.1f} ms per question")  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".scanrag_cache")
    parser.add_argument("--backend", default="torch", help="dense encoder backend")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples for the CIs")
    parser.add_argument("--skip-check", action="store_true", help="skip the end-to-end check")
    parser.add_argument("--latency", type=int, default=0, help="rounds of the latency check")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    sets = [load_set(name, args.data, args.cache_dir) for name in SETS]
    parts = {ds.name: component_lists(ds, args.cache_dir, args.backend) for ds in sets}
    out: dict[str, Any] = {}
    runs: list[tuple[str, str, bool]] = [
        ("equal", "bm25", False),
        ("weighted", "bm25", True),
        ("equal, bm25 strip", "bm25:strip", False),
    ]
    for key, lexical, weighted in runs:
        out[key] = report(Protocol(sets, parts, lexical), weighted, args.bootstrap)
    grid_table(out["equal"], [ds.name for ds in sets])
    if not args.skip_check:
        check_defaults(sets, parts, args.cache_dir, args.backend)
    if args.latency:
        out["latency_ms"] = latency(sets, args.cache_dir, args.backend, args.latency)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
