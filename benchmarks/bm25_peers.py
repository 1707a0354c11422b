"""ScanRAG's BM25 next to the libraries a user would pick instead, on the same page texts.

    python benchmarks/bm25_peers.py [--corpora financebench-dev] [--generated 18000,60000]
                                    [--rounds 3] [--contenders scanrag,bm25s] [--work DIR]
                                    [--recall] [--check]

Contenders, each measured in its own subprocess (so peak RSS is its own):

* ``scanrag``: ``BM25Index`` (the full default tokenizer: numbers, stopwords, Snowball stems,
  bigrams) given the composed page texts (``add_texts``);
* ``scanrag-store``: the same index built the way a run builds it, from the page store
  (``add``: page texts composed from the stored records while building);
* ``bm25s``: ``bm25s.tokenize`` (English stopwords, PyStemmer) and ``bm25s.BM25().index``;
* ``tantivy``: an index in memory, ``en_stem`` tokenizer, one writer thread.

Texts are each page's ``heading+text+tables`` composition (the ``bm25`` default), from
financebench-dev's filings (``--corpora``; a number there means that many pages of PDFs
``benchmarks/scale_corpus.py`` writes, ingested) or generated in memory (``--generated``: that
many pages of ~300 Zipf-drawn words from the same made-up vocabulary, 60 pages per document,
two questions per document built from rare words of one page; no PDFs). Figures per
contender: build seconds (texts in memory to a searchable index) with the build's CPU seconds
(worker processes included), corpus query p50 (the corpus's first 200 questions, each against
every page, top 10), the subprocess's peak RSS, the RSS the build adds and keeps (``grow``: the
index, measured after the build with the texts still held) and the most it adds while
building (``peak+``; workers' memory not included); best of
``--rounds`` rounds, contenders interleaved (the order rotating per round); ``--contenders``
keeps some of them. Ratios are ScanRAG's figure over each peer's, from the same rounds.
``--recall`` adds R@5 on mmlb-dev and financebench-dev (each question scoped to its own
document, as ``scanrag retrieve eval`` does), ScanRAG also with a tokenizer like bm25s's
(stopwords and stems only).
``--check`` compares every ScanRAG score, and the best 10 of each search, with the reference
(rank-bm25, ``scanrag.indexes.bm25_reference``) on both dev sets and the generated corpora. A
contender whose library is not installed is skipped. The last lines are ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# the dev sets: shared/data beside the checkout (or beside the folder of worktrees)
SHARED = next(
    (p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data",
)
CONTENDERS = ("scanrag", "scanrag-store", "bm25s", "tantivy")
K = 10
QUERIES = 200  # corpus queries timed per contender (the corpus's first questions)


# ----------------------------------------------------------------------------- preparing texts


GENERATED = "generated:"  # corpus names of in-memory generated corpora: generated:PAGES
PAGES_PER_DOC = 60


def prepare(corpus: str, work: Path) -> Path:
    """The corpus's page texts, documents, store paths and questions, pickled once."""
    target = work / f"{corpus.replace(':', '-')}.texts.pkl"
    if target.is_file():
        return target
    if corpus.startswith(GENERATED):
        data = generated(int(corpus.removeprefix(GENERATED)))
        target.write_bytes(pickle.dumps(data))
        return target
    from scanrag.datasets import load_generic
    from scanrag.documents import DocumentStore
    from scanrag.indexes.manifest import IndexedDocument
    from scanrag.indexes.pagetext import page_texts

    if corpus.isdigit():
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from scale_corpus import generate

        folder = work / f"generated-{corpus}"
        generate(folder, int(corpus))
        dataset = load_generic(folder / "questions.jsonl", folder / "pdfs")
    else:
        dataset = load_generic(SHARED / corpus / "questions.jsonl", None)
    names = sorted({s.primary_doc for s in dataset.samples})
    store = DocumentStore(work / "documents")
    documents = {}
    for path, outcome in store.ingest_many([dataset.pdf_dir / n for n in names]):
        if not isinstance(outcome, Exception):
            documents[path.name] = outcome
    ordered = [documents[n] for n in names if n in documents]
    data = {
        "entries": [IndexedDocument.of(d).model_dump() for d in ordered],
        "stores": [str(d.pages.store_path) for d in ordered],
        "texts": [t for d in ordered for t in page_texts(d, "heading+text+tables")],
        "samples": [
            (s.question, documents[s.primary_doc].id, sorted(set(s.gold_pages)))
            for s in dataset.samples
            if s.primary_doc in documents
        ],
    }
    target.write_bytes(pickle.dumps(data))
    return target


def generated(pages: int, seed: int = 0) -> dict[str, Any]:
    """``pages`` generated page texts (see the module docstring), as ``prepare`` pickles them
    (no page store: the ``scanrag-store`` contender needs PDFs)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scale_corpus import question_row, vocabulary

    from scanrag.hashing import stable_hash

    vocab = np.array(vocabulary(6000, seed), dtype=object)
    weights = 1.0 / np.arange(1, vocab.size + 1)
    rng = np.random.default_rng(seed)
    data: dict[str, Any] = {"entries": [], "stores": [], "texts": [], "samples": []}
    for index, first in enumerate(range(0, pages, PAGES_PER_DOC)):
        count = min(PAGES_PER_DOC, pages - first)
        name = f"doc{index:05d}.pdf"
        drawn = rng.choice(vocab.size, size=(count, 300), p=weights / weights.sum())
        texts = [f"Section {n}\n" + " ".join(vocab[row]) for n, row in enumerate(drawn, 1)]
        sha = stable_hash(f"{seed}:{name}", 64)
        entry = {"id": sha[:16], "name": name, "sha256": sha, "pages": count}
        data["entries"].append({**entry, "text_hash": stable_hash(texts)})
        data["texts"] += texts
        for q in range(2):
            page = int(rng.integers(1, count + 1))
            rare = vocab[np.unique(drawn[page - 1])[-6:]].tolist()
            row = question_row(f"q{index:05d}-{q}", name, rare, page)
            data["samples"].append((row["question"], entry["id"], [page]))
    return data


# ----------------------------------------------------------------------------- contenders


class ScanRAG:
    def __init__(self, data: dict[str, Any], tokenizer: dict[str, Any] | None = None) -> None:
        from scanrag.indexes.bm25 import BM25Index

        self.index = BM25Index(tokenizer=tokenizer)
        self.data = data

    def build(self) -> None:
        from scanrag.indexes.manifest import IndexedDocument

        entries = [IndexedDocument.model_validate(e) for e in self.data["entries"]]
        if hasattr(self.index, "add_texts"):
            self.index.add_texts(entries, self.data["texts"])
            return
        from scanrag.indexes.bm25 import _count  # type: ignore[attr-defined]  # before the engine

        tokenize = self.index.tokenizer
        counts, lengths, pages_with = _count(tokenize(t) for t in self.data["texts"])
        self.index._extend(counts, lengths, [pages_with])
        self.index._register(entries)

    def search(self, query: str, k: int, doc: str | None = None) -> list[int]:
        hits = self.index.search(query, k, [doc] if doc else None)
        return [self.index._doc_start[h.doc_id] + h.page - 1 for h in hits]


class ScanRAGStore(ScanRAG):
    def build(self) -> None:
        from scanrag.documents.pagestore import open_document

        self.index.add([open_document(path) for path in self.data["stores"]])


class Bm25s:
    def __init__(self, data: dict[str, Any]) -> None:
        import bm25s
        import Stemmer

        self.bm25s, self.stemmer, self.data = bm25s, Stemmer.Stemmer("english"), data

    def _tokens(self, texts: list[str]) -> Any:
        return self.bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)

    def build(self) -> None:
        self.retriever = self.bm25s.BM25()
        self.retriever.index(self._tokens(self.data["texts"]), show_progress=False)
        self.starts = _doc_starts(self.data)

    def search(self, query: str, k: int, doc: str | None = None) -> list[int]:
        tokens = self.bm25s.tokenize(
            [query], stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False
        )
        if not tokens[0]:
            return []
        mask = None
        if doc is not None:
            start, stop = self.starts[doc]
            mask = np.zeros(len(self.data["texts"]), dtype=np.float32)
            mask[start:stop] = 1
            k = min(k, stop - start)
        found, _ = self.retriever.retrieve(tokens, k=k, show_progress=False, weight_mask=mask)
        return [int(r) for r in found[0]]


class Tantivy:
    def __init__(self, data: dict[str, Any]) -> None:
        import tantivy

        self.tantivy, self.data = tantivy, data
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        builder.add_text_field("doc", stored=False, tokenizer_name="raw")
        builder.add_integer_field("row", stored=True)
        self.schema = builder.build()

    def build(self) -> None:
        t = self.tantivy
        self.index = t.Index(self.schema)
        writer = self.index.writer(num_threads=1)
        row = 0
        for entry in self.data["entries"]:
            for _ in range(entry["pages"]):
                text = self.data["texts"][row]
                writer.add_document(t.Document(body=text, doc=entry["id"], row=row))
                row += 1
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, query: str, k: int, doc: str | None = None) -> list[int]:
        t = self.tantivy
        parsed, _ = self.index.parse_query_lenient(query, ["body"])
        if doc is not None:
            scope = t.Query.term_query(self.schema, "doc", doc)
            parsed = t.Query.boolean_query([(t.Occur.Must, scope), (t.Occur.Must, parsed)])
        hits = self.searcher.search(parsed, k).hits
        return [int(self.searcher.doc(address)["row"][0]) for _, address in hits]


def _doc_starts(data: dict[str, Any]) -> dict[str, tuple[int, int]]:
    starts, row = {}, 0
    for entry in data["entries"]:
        starts[entry["id"]] = (row, row + entry["pages"])
        row += entry["pages"]
    return starts


def make(name: str, data: dict[str, Any]) -> Any:
    if name == "scanrag":
        return ScanRAG(data)
    if name == "scanrag-like-bm25s":
        return ScanRAG(data, {"numbers": False, "bigrams": False})
    if name == "scanrag-store":
        return ScanRAGStore(data)
    return {"bm25s": Bm25s, "tantivy": Tantivy}[name](data)


def available(name: str) -> bool:
    import importlib.util

    needs = {"bm25s": ("bm25s", "Stemmer"), "tantivy": ("tantivy",)}.get(name, ())
    return all(importlib.util.find_spec(module) is not None for module in needs)


# ----------------------------------------------------------------------------- child process


def child(name: str, data_path: Path, mode: str) -> dict[str, Any]:
    data = pickle.loads(data_path.read_bytes())
    contender = make(name, data)
    gc.collect()
    before = rss_mib("VmRSS")
    reset_peak_rss()
    if rss_mib("VmHWM") > before + 16:
        raise RuntimeError("VmHWM was not reset: the build's peak cannot be measured")
    start, cpu = time.perf_counter(), time.process_time()
    contender.build()
    build_s, build_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    build_cpu_s += children.ru_utime + children.ru_stime + pool_cpu_s()
    peak_growth = rss_mib("VmHWM") - before
    gc.collect()
    out: dict[str, Any] = {
        "build_s": build_s,
        "build_cpu_s": build_cpu_s,
        "growth_mib": rss_mib("VmRSS") - before,
        "peak_growth_mib": peak_growth,
    }
    if mode == "speed":
        latencies = []
        for question, _, _ in data["samples"][:QUERIES]:
            start = time.perf_counter()
            contender.search(question, K)
            latencies.append(time.perf_counter() - start)
        out["p50_ms"] = float(np.percentile(np.asarray(latencies) * 1000, 50))
    else:
        out["recall@5"] = recall_at_5(contender, data)
    out["rss_mib"] = rss_mib("VmHWM")
    return out


def pool_cpu_s() -> float:
    """CPU seconds of the ingestion pool's workers, which a spread BM25 build uses (children
    of the pool's forkserver, so not in this process's ``RUSAGE_CHILDREN``)."""
    parallel = sys.modules.get("scanrag.documents.parallel")
    pool = getattr(getattr(parallel, "_STATE", None), "pool", None)
    total = 0.0
    for pid in getattr(pool, "_processes", None) or {}:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mib(field: str) -> float:
    """This process's RSS now (``VmRSS``) or its peak (``VmHWM``: unlike ``ru_maxrss``, not
    inherited across the exec from the parent that started it, and reset by
    ``reset_peak_rss``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> None:
    """Start ``VmHWM`` again from the current RSS (Linux ``clear_refs``), so the build's peak
    is not the data loading's; a kernel without it fails the run (``peak+`` would be wrong)."""
    Path("/proc/self/clear_refs").write_text("5")


def recall_at_5(contender: Any, data: dict[str, Any]) -> float:
    from scanrag.evaluation.retrieval.metrics import evaluate_retrieval

    starts = _doc_starts(data)
    runs = []
    for i, (question, doc, gold) in enumerate(data["samples"]):
        rows = contender.search(question, 5, doc)
        pages = [row - starts[doc][0] + 1 for row in rows]
        runs.append((str(i), pages, gold))
    return float(evaluate_retrieval(runs, [5]).macro.get("recall@5", 0.0))


def run_child(name: str, data_path: Path, mode: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", name, "--data", str(data_path), "--mode", mode]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# ----------------------------------------------------------------------------- driver


def speed(
    corpora: list[str], work: Path, rounds: int, contenders: list[str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    names = [n for n in contenders or CONTENDERS if available(n)]
    table: dict[str, dict[str, dict[str, float]]] = {}
    for corpus in corpora:
        data_path = prepare(corpus, work)
        best: dict[str, dict[str, float]] = {}
        for round_ in range(rounds):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in order:
                figures = run_child(name, data_path, "speed")
                if "error" in figures:
                    print(f"{corpus} {name}: {figures['error']}", file=sys.stderr)
                    continue
                kept = best.setdefault(name, dict(figures))
                for key, value in figures.items():
                    kept[key] = min(kept[key], value)
        table[corpus] = best
        _print_corpus(corpus, best)
    return table


COLUMNS = (
    ("build_s", "build s", ".2f"),
    ("build_cpu_s", "cpu s", ".2f"),
    ("p50_ms", "p50 ms", ".2f"),
    ("rss_mib", "peak RSS", ".1f"),
    ("growth_mib", "grow", ".1f"),
    ("peak_growth_mib", "peak+", ".1f"),
)


def _print_corpus(corpus: str, best: dict[str, dict[str, float]]) -> None:
    print(f"\n{corpus} (best of rounds; MiB; grow: the index's RSS, peak+: the build's peak)")
    print("  " + " " * 14 + "".join(f"{title:>10s}" for _, title, _ in COLUMNS))
    for name, figures in best.items():
        cells = "".join(f"{figures.get(key, float('nan')):>10{fmt}}" for key, _, fmt in COLUMNS)
        print(f"  {name:14s}{cells}")
    for peer in ("bm25s", "tantivy"):
        if "scanrag" in best and peer in best:
            ratios = ratios_to(best["scanrag"], best[peer])
            cells = "".join(f"{ratios[key]:>9.2f}x" for key, _, _ in COLUMNS)
            print(f"  {'ScanRAG/' + peer:14s}{cells}")


def ratios_to(ours: dict[str, float], theirs: dict[str, float]) -> dict[str, float]:
    """ScanRAG's figure over a peer's, per column (nan where either lacks it)."""
    nan = float("nan")
    return {
        key: ours.get(key, nan) / theirs[key] if theirs.get(key) else nan for key, _, _ in COLUMNS
    }


def recall(work: Path) -> dict[str, dict[str, float]]:
    names = ["scanrag", "scanrag-like-bm25s", *(n for n in ("bm25s", "tantivy") if available(n))]
    out: dict[str, dict[str, float]] = {}
    for corpus in ("mmlb-dev", "financebench-dev"):
        data_path = prepare(corpus, work)
        out[corpus] = {}
        for name in names:
            figures = run_child(name, data_path, "recall")
            out[corpus][name] = figures.get("recall@5", float("nan"))
        print(f"\nR@5 on {corpus}: " + ", ".join(f"{n} {v:.3f}" for n, v in out[corpus].items()))
    return out


def check(work: Path, generated: list[str]) -> dict[str, int]:
    """Queries whose scores (every page) or best 10 differ from the reference (rank-bm25):
    on the dev sets each question against the whole corpus and each document alone; on the
    generated corpora the first ``QUERIES`` questions against the whole corpus and their own
    document."""
    from scanrag.documents.pagestore import open_document
    from scanrag.indexes.bm25 import BM25Index
    from scanrag.indexes.bm25_reference import mismatches

    found = {}
    for corpus in ("mmlb-dev", "financebench-dev"):
        data = pickle.loads(prepare(corpus, work).read_bytes())
        documents = [open_document(path) for path in data["stores"]]
        index = BM25Index()
        index.add(documents)
        found[corpus] = len(mismatches(index, documents, [q for q, _, _ in data["samples"]]))
        print(f"{corpus}: {found[corpus]} query/scope pairs differ from the reference")
    for corpus in generated:
        found[corpus] = check_texts(pickle.loads(prepare(corpus, work).read_bytes()))
        print(f"{corpus}: {found[corpus]} query/scope pairs differ from the reference")
    return found


def check_texts(data: dict[str, Any]) -> int:
    """``check`` on a corpus given as page texts (no page store)."""
    from scanrag.indexes.bm25 import BM25Index
    from scanrag.indexes.bm25_reference import mismatches, okapi_of_pages
    from scanrag.indexes.manifest import IndexedDocument

    index = BM25Index()
    index.add_texts([IndexedDocument.model_validate(e) for e in data["entries"]], data["texts"])
    tokenizer = index.tokenizer
    okapi = okapi_of_pages(index, (list(map(sys.intern, tokenizer(t))) for t in data["texts"]))
    own = {question: doc for question, doc, _ in data["samples"]}
    queries = [question for question, _, _ in data["samples"][:QUERIES]]
    return len(mismatches(index, [], queries, okapi=okapi, scopes=lambda q: [own[q]]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="financebench-dev")
    parser.add_argument(
        "--generated",
        default="18000,60000",
        help="page counts of corpora generated in memory (comma-separated; '' for none)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="comma-separated, of " + ", ".join(CONTENDERS),
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/scanrag-bm25-peers"))
    parser.add_argument("--recall", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="speed", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.data, args.mode)))
        return 0
    contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    unknown = sorted(set(contenders) - set(CONTENDERS))
    if unknown:
        parser.error(f"unknown contenders {unknown}; known: {', '.join(CONTENDERS)}")
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"load {_load()}, cpu {_cpu_flags()}")
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    corpora += [GENERATED + str(int(n)) for n in args.generated.split(",") if n.strip()]
    table = speed(corpora, args.work, args.rounds, contenders)
    recalls = recall(args.work) if args.recall else {}
    generated = [c for c in corpora if c.startswith(GENERATED)]
    checked = check(args.work, generated) if args.check else {}
    print(f"\nload after {_load()}")
    for corpus, best in table.items():
        for name, figures in best.items():
            for key, value in figures.items():
                print(f"{corpus}.{name}.{key}={value:.4g}")
        for peer in ("bm25s", "tantivy"):
            if "scanrag" in best and peer in best:
                for key, value in ratios_to(best["scanrag"], best[peer]).items():
                    print(f"{corpus}.scanrag_over_{peer}.{key}={value:.4g}")
    for corpus, values in recalls.items():
        for name, value in values.items():
            print(f"{corpus}.{name}.recall@5={value:.4f}")
    for corpus, count in checked.items():
        print(f"{corpus}.reference_mismatches={count}")
    return 0


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _cpu_flags() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    return next((f for f in ("amx_bf16", "avx512f", "avx2") if f in text), "none")


if __name__ == "__main__":
    sys.exit(main())
