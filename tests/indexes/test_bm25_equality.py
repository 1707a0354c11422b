"""The sparse BM25 engine against the reference (rank-bm25 over the reference tokenizer):
every score of every page equal, not close; the fast term counting equal to ``Counter`` of
the tokenizer's output. Generated pages here; mmlb-dev and financebench-dev under ``slow``."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from scanrag.indexes import bm25_sparse
from scanrag.indexes.bm25 import BM25Index
from scanrag.indexes.bm25_counts import Counts, count_texts
from scanrag.indexes.bm25_reference import mismatches
from scanrag.indexes.bm25_vocab import Vocabulary
from scanrag.indexes.tokenize import TokenizerConfig
from scanrag.schemas import Document

# Words chosen to meet every special case: stopwords, stems that merge words, numbers with
# separators, and underscores (a word "x_y" spells the bigram of x and y; "a_b" + "c" and
# "a" + "b_c" spell one string).
WORDS = (  # noqa: SIM905
    "the of and revenue revenues liability liabilities cash flow flows balance sheet sheets "
    "x y x_y a b c a_b b_c a_b_c _lead trail_ ___ 1,117,400 3.5 2023 12 q4 q4_2023 "
    "operating operations net income total"
).split()


def _pages(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    pages = []
    for _ in range(count):
        size = rng.choice([0, 1, 2, 5, 30, 80])
        pages.append(" ".join(rng.choice(WORDS) for _ in range(size)))
    return pages


def _documents(make_document: Callable[..., Document], seed: int) -> list[Document]:
    texts = _pages(seed, 60)
    return [make_document(f"d{i}.pdf", texts[i * 10 : (i + 1) * 10]) for i in range(6)]


@pytest.fixture(autouse=True, params=["stored", "computed"])
def contributions(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: small indexes keep each contribution, larger ones compute them at
    query time (``bm25_sparse.STORED_MAX_POSTINGS``); both must give the reference's scores."""
    if request.param == "computed":
        monkeypatch.setattr(bm25_sparse, "STORED_MAX_POSTINGS", -1)
    return str(request.param)


QUERIES = [
    "revenue",
    "x y",
    "x_y",
    "a b c",
    "a_b c",
    "cash flow cash flow",
    "What was the total net income in q4 2023?",
    "1,117,400 and 3.5",
    "the of and",
    "unseen words only",
    "___ _lead trail_",
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"k1": 1.2, "b": 1.0},  # b = 1: empty pages score nan, as in rank-bm25
        {"b": 0.0, "epsilon": 0.5},
        {"tokenizer": TokenizerConfig.plain()},
        {"tokenizer": {"bigrams": True, "stem": False, "stopwords": "none"}},
        {"tokenizer": {"min_length": 3, "numbers": False}},
    ],
)
def test_every_score_equals_the_reference(make_document, seed, params) -> None:
    documents = _documents(make_document, seed)
    index = BM25Index(**params)
    index.add(documents)
    assert mismatches(index, documents, QUERIES) == []


def test_incremental_adds_and_parts_equal_the_reference(make_document) -> None:
    documents = _documents(make_document, 7)
    stepwise = BM25Index()
    for document in documents:
        stepwise.add([document])
    assert mismatches(stepwise, documents, QUERIES) == []
    parts = BM25Index()
    pieces = [documents[:1], documents[1:4], documents[4:]]
    parts.add_parts(documents, [BM25Index().build_part(piece) for piece in pieces])
    assert mismatches(parts, documents, QUERIES) == []
    assert parts.postings_by_term() == stepwise.postings_by_term()


def test_saved_and_loaded_scores_are_equal(make_document, tmp_path: Path) -> None:
    documents = _documents(make_document, 3)
    index = BM25Index()
    index.add(documents)
    index.save(tmp_path / "i")
    for mmap in (False, True):
        loaded = BM25Index(mmap=mmap).load(tmp_path / "i")
        assert mismatches(loaded, documents, QUERIES) == []
        assert isinstance(loaded.engine.docs, np.memmap) == mmap


@pytest.mark.parametrize("seed", range(4))
def test_fast_counting_equals_counter_of_the_tokenizer(seed: int) -> None:
    texts = [
        *_pages(seed, 40),
        "Balance Sheets of 2015: 1,117,400 x_y x y a_b c a b_c",
        # runs of several tokens (one run: "company’s", "1\xa0000", "a12.5.6") and of none
        "The Company’s revenue of 1\xa0000 and a12.5.6, ΟΔΟΣ café … -- (…)",
        "Σ İ ﬁnal x² the the of 12,345abc 1,234,5678",
    ]
    tokenizers = (
        TokenizerConfig(),
        TokenizerConfig.plain(),
        TokenizerConfig(bigrams=False),
        TokenizerConfig(pattern=r"[^\W\d]+|\d+"),  # another pattern: words, not runs
    )
    for tokenizer in tokenizers:
        vocab = Vocabulary(tokenizer)
        counts = count_texts(vocab, texts[:25])
        counts.extend(count_texts(vocab, texts[25:], first_page=25))
        assert _counted_pages(counts, vocab) == [Counter(tokenizer(text)) for text in texts]
        lengths = np.concatenate(counts.lengths)
        assert lengths.tolist() == [len(tokenizer(text)) for text in texts]


def _counted_pages(counts: Counts, vocab: Vocabulary) -> list[Counter[str]]:
    """Each page's term counts, spelled, from chunks of term-major counts (each term's
    entries together, pages ascending within it: checked)."""
    spelled = vocab.term_strings()
    pages: list[Counter[str]] = []
    chunks = zip(counts.terms, counts.rows, counts.tf, counts.lengths, strict=True)
    for terms, rows, tf, lengths in chunks:
        first = len(pages)
        pages += [Counter() for _ in range(lengths.size)]
        for i in range(terms.size):
            if i and terms[i] == terms[i - 1]:
                assert rows[i] > rows[i - 1]
            else:
                assert terms[i] not in terms[:i]
            pages[first + int(rows[i])][spelled[terms[i]]] = int(tf[i])
    return pages


def _ingested(folder: Path, cache: Path) -> tuple[list[Document], list[str]]:
    from scanrag.datasets import load_generic
    from scanrag.documents import DocumentStore

    dataset = load_generic(folder / "questions.jsonl", None)
    names = sorted({s.primary_doc for s in dataset.samples})
    store = DocumentStore(cache)
    documents: Sequence[Document] = [
        outcome
        for _, outcome in store.ingest_many([dataset.pdf_dir / n for n in names])
        if isinstance(outcome, Document)
    ]
    return list(documents), [s.question for s in dataset.samples]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mmlb-dev", "financebench-dev"])
def test_every_score_equals_the_reference_on_real_pages(shared_dir, tmp_path, name) -> None:
    """Every question of the dev set against every page, corpus-wide and per document."""
    folder = shared_dir / "data" / name
    documents, questions = _ingested(folder, tmp_path / "documents")
    index = BM25Index()
    index.add(documents)
    assert mismatches(index, documents, questions) == []


def test_an_index_built_on_disk_scores_the_same(make_document, tmp_path: Path) -> None:
    """Past ``memory_mb`` the postings are assembled on disk and memory-mapped: the same
    scores, after an incremental add too, saved and loaded."""
    documents = _documents(make_document, 5)
    in_memory = BM25Index()
    in_memory.add(documents)
    on_disk = BM25Index(memory_mb=0, spill_dir=str(tmp_path))
    on_disk.add(documents[:2])
    on_disk.add(documents[2:])  # an add to an index on disk goes through the disk again
    assert isinstance(on_disk.engine.docs, np.memmap)
    assert mismatches(on_disk, documents, QUERIES) == []
    assert on_disk.postings_by_term() == in_memory.postings_by_term()
    loaded = BM25Index(mmap=True).load(on_disk.save(tmp_path / "saved"))
    assert mismatches(loaded, documents, QUERIES) == []


def test_memory_budget_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="memory_mb"):
        BM25Index(memory_mb=-1)


def test_a_spread_build_equals_a_whole_one(make_document, monkeypatch) -> None:
    """Counted here from the first slice on and by the pool's workers from the last one back,
    merged in order: the same postings, statistics and scores, from documents and from
    texts; a slice whose worker failed is counted here."""
    from concurrent.futures import Future

    import scanrag.indexes.bm25_spread as spread_module
    from scanrag.documents import parallel
    from scanrag.indexes.manifest import IndexedDocument

    documents = _documents(make_document, 6)
    whole = BM25Index()
    whole.add(documents)
    monkeypatch.setenv(parallel.ENV_WORKERS, "2")
    monkeypatch.setattr(spread_module, "SPREAD_MIN_PAGES", 1)
    monkeypatch.setattr(spread_module, "SLICE_PAGES", 15)
    assert len(spread_module.cut(documents, lambda d: d.num_pages)) == 3
    handed: list[int] = []
    real_submit = parallel.submit_task

    def spy(target: str, params: dict, piece: list) -> Future:
        handed.append(len(piece))
        if len(handed) == 2:  # one worker "fails": its slice is counted here
            failed: Future = Future()
            failed.set_exception(RuntimeError("worker lost"))
            return failed
        return real_submit(target, params, piece)

    monkeypatch.setattr(parallel, "submit_task", spy)
    try:
        assert parallel.warm_pool()
        assert parallel._STATE.ready.wait(60), "the worker pool did not start"
        spread = BM25Index()
        spread.add(documents)
        texts = BM25Index()
        entries = [IndexedDocument.of(d) for d in documents]
        texts.add_texts(entries, [t for d in documents for t in d.page_texts()])
    finally:
        parallel.shutdown_pool()
    assert handed, "no slice went to a worker"
    for built in (spread, texts):
        assert built.postings_by_term() == whole.postings_by_term()
        assert built.engine.average_idf == whole.engine.average_idf
        assert mismatches(built, documents, QUERIES) == []


def test_a_busy_machine_counts_every_slice_here(make_document, monkeypatch) -> None:
    """Fewer than two CPUs free: no worker gets a slice, and the index is the same."""
    import scanrag.indexes.bm25_spread as spread_module
    from scanrag.documents import parallel

    documents = _documents(make_document, 4)
    whole = BM25Index()
    whole.add(documents)
    monkeypatch.delenv(parallel.ENV_WORKERS, raising=False)
    monkeypatch.setattr(parallel, "available_cpus", lambda: 2)
    monkeypatch.setattr(parallel, "free_cpus", lambda window_s=0.1: 0.6)
    monkeypatch.setattr(spread_module, "SPREAD_MIN_PAGES", 1)
    monkeypatch.setattr(spread_module, "SLICE_PAGES", 15)
    handed: list[str] = []
    monkeypatch.setattr(parallel, "submit_task", lambda *args: handed.append(args[0]))
    built = BM25Index()
    try:
        built.add(documents)
        assert parallel._STATE.deciding is not None
        parallel._STATE.deciding.join(10)
    finally:
        parallel.shutdown_pool()
    assert handed == [] and parallel._STATE.pool is None
    assert built.postings_by_term() == whole.postings_by_term()


def test_each_run_takes_its_path(make_document, contributions: str) -> None:
    index = BM25Index()
    index.add(_documents(make_document, 0))
    assert (index.engine.weights is None) == (contributions == "computed")
