"""Packed multi-vector storage and batched MaxSim against a brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest

from scanrag.indexes import colpali_blocks
from scanrag.indexes.colpali_packed import PackedVectors
from scanrag.indexes.colpali_scoring import MaxSimScorer


def reference(query: np.ndarray, page: np.ndarray) -> float:
    if len(page) == 0:  # a page without vectors scores 0
        return 0.0
    return float((query @ page.astype(np.float32).T).max(axis=1).sum())


@pytest.fixture
def pages() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    lengths = [5, 9, 9, 1, 7, 9, 3]
    return [rng.normal(size=(n, 8)).astype(np.float16) for n in lengths]


@pytest.fixture
def store(pages) -> PackedVectors:
    packed = PackedVectors(8)
    packed.extend(pages[:3])
    packed.extend(pages[3:])  # incremental
    return packed


def test_packing_keeps_every_page(store, pages):
    assert len(store) == len(pages)
    assert store.lengths.tolist() == [len(p) for p in pages]
    for i, page in enumerate(pages):
        assert np.array_equal(store.page(i), page)


@pytest.mark.parametrize("batch_pages", [1, 2, 3, 100])
def test_maxsim_matches_reference_with_padding(store, pages, batch_pages):
    rng = np.random.default_rng(1)
    queries = [rng.normal(size=(n, 8)).astype(np.float32) for n in (4, 1, 6)]
    scores = MaxSimScorer("cpu", batch_pages).scores(queries, store)
    want = [[reference(q, p) for p in pages] for q in queries]
    assert scores.shape == (3, len(pages)) and scores.dtype == np.float32
    assert scores == pytest.approx(np.array(want), rel=1e-5, abs=1e-5)


def test_negative_scores_are_not_lifted_by_padding():
    packed = PackedVectors(2)
    packed.extend([np.array([[-1.0, 0.0]], np.float16), np.array([[-1, 0]] * 4, np.float16)])
    score = MaxSimScorer("cpu", 8).scores([np.array([[1.0, 0.0]], np.float32)], packed)
    assert score.tolist() == [[-1.0, -1.0]]  # padding zeros would have given 0


def test_scoped_rows_and_cache_follow_additions(store, pages):
    scorer = MaxSimScorer("cpu", 2)
    query = [np.ones((2, 8), np.float32)]
    full = scorer.scores(query, store)
    rows = np.array([5, 0, 3])
    assert scorer.scores(query, store, rows)[0] == pytest.approx(full[0, rows], rel=1e-6)
    extra = np.full((2, 8), 0.5, np.float16)
    store.extend([extra])
    grown = scorer.scores(query, store)  # cached batches are extended, not stale
    assert grown.shape == (1, len(pages) + 1)
    assert grown[0, -1] == pytest.approx(reference(query[0], extra))
    assert grown[0, :-1] == pytest.approx(full[0], rel=1e-6)


@pytest.mark.parametrize("query_rows", [1, 5, 128])
def test_stacked_queries_score_like_single_queries(store, pages, monkeypatch, query_rows):
    monkeypatch.setattr(colpali_blocks, "QUERY_ROWS", query_rows)  # 1: every query alone
    rng = np.random.default_rng(2)
    queries = [rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 2, 7, 1)]
    scorer = MaxSimScorer("cpu", 3)
    together = scorer.scores(queries, store)
    alone = np.concatenate([scorer.scores([q], store) for q in queries])
    assert together == pytest.approx(alone, rel=1e-6)
    want = [[reference(q, p) for p in pages] for q in queries]
    assert together == pytest.approx(np.array(want), rel=1e-5, abs=1e-5)


def test_empty_inputs(store):
    scorer = MaxSimScorer("cpu")
    assert scorer.scores([], store).shape == (0, len(store))
    assert scorer.scores([np.ones((1, 8), np.float32)], store, np.zeros(0, np.int64)).shape == (
        1,
        0,
    )
    assert scorer.scores([np.ones((1, 8), np.float32)], PackedVectors(8)).shape == (1, 0)


def test_bad_shapes_raise():
    packed = PackedVectors(4)
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        packed.extend([np.zeros((3, 5), np.float16)])
    with pytest.raises(ValueError, match="offsets"):
        packed.replace(np.zeros((3, 4), np.float16), np.array([0, 2]))
    with pytest.raises(ValueError, match="float16"):
        packed.replace(np.zeros((3, 4), np.float32), np.array([0, 3]))
    with pytest.raises(ValueError, match="at least one token"):
        MaxSimScorer("cpu").scores([np.zeros((0, 4), np.float32)], packed)
    with pytest.raises(ValueError, match="batch_pages"):
        MaxSimScorer("cpu", 0)


# -- blocks: per document, kept, selected by index --------------------------------------------
def _docs_store(seed: int = 3) -> tuple[PackedVectors, list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    lengths = [6, 2, 9, 0, 4, 7, 7, 3, 5, 1, 8]
    pages = [rng.normal(size=(n, 8)).astype(np.float16) for n in lengths]
    store = PackedVectors(8)
    store.extend(pages)
    return store, pages, np.array([0, 3, 4, 9])  # four documents


def test_blocks_never_straddle_a_document():
    store, _, breaks = _docs_store()
    scorer = MaxSimScorer("cpu", batch_pages=4)
    scorer.scores([np.ones((2, 8), np.float32)], store, None, breaks)
    spans = [(b.start, b.stop) for b in scorer.reference._blocks]
    assert spans == [(0, 3), (3, 4), (4, 8), (8, 9), (9, 11)]
    for start, stop in spans:
        assert not any(start < cut < stop for cut in breaks)


@pytest.mark.parametrize("share", [0.0, 2.0])  # always the whole block / always select pages
def test_scoped_searches_select_blocks_and_match_the_whole_store(monkeypatch, share):
    store, pages, breaks = _docs_store()
    scorer = MaxSimScorer("cpu", batch_pages=4)
    monkeypatch.setattr(scorer.reference, "_whole_share", share)
    rng = np.random.default_rng(4)
    queries = [rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 5)]
    full = scorer.scores(queries, store, None, breaks)
    built = [id(b.pages) for b in scorer.reference._blocks]
    for rows in (np.arange(4, 9), np.array([10, 0, 5, 3]), np.array([7]), np.array([2, 2])):
        scoped = scorer.scores(queries, store, rows, breaks)
        assert scoped == pytest.approx(full[:, rows], rel=1e-6)
    assert [id(b.pages) for b in scorer.reference._blocks] == built  # no re-packing
    want = [[reference(q, p) for p in pages] for q in queries]
    assert full == pytest.approx(np.array(want), rel=1e-5, abs=1e-5)


def test_a_cpu_scoped_search_alone_builds_no_blocks():
    store, pages, breaks = _docs_store()
    scorer = MaxSimScorer("cpu")
    query = [np.ones((2, 8), np.float32)]
    scoped = scorer.scores(query, store, np.array([1, 2]), breaks)
    assert scorer.reference.cached_pages == 0
    assert scoped[0] == pytest.approx([reference(query[0], pages[i]) for i in (1, 2)], rel=1e-5)


def test_blocks_follow_additions_and_replacements():
    store, _, breaks = _docs_store()
    scorer = MaxSimScorer("cpu", batch_pages=4)
    query = [np.ones((1, 8), np.float32)]
    scorer.scores(query, store, None, breaks)
    kept = [id(b.pages) for b in scorer.reference._blocks]
    store.extend([np.full((3, 8), 0.25, np.float16)])
    grown = scorer.scores(query, store, None, np.append(breaks, 11))
    blocks = scorer.reference._blocks
    assert [id(b.pages) for b in blocks][: len(kept)] == kept  # only new pages packed
    assert grown[0, -1] == pytest.approx(0.25 * 8)
    store.replace(np.ones((2, 8), np.float16), np.array([0, 1, 2]))  # contents replaced
    assert scorer.scores(query, store, None).tolist() == [[8.0, 8.0]]
    other = PackedVectors(8)
    other.extend([np.full((1, 8), 0.5, np.float16)])
    assert scorer.scores(query, other).tolist() == [[4.0]]  # another store


def test_scores_equal_colpali_engines_scorer():
    """Positive vectors: the engine pads with zeros, which would lift a negative best match."""
    torch = pytest.importorskip("torch")
    engine = pytest.importorskip("colpali_engine.utils.processing_utils")
    _, pages, breaks = _docs_store(5)
    pages = [np.abs(p) for p in pages]
    store = PackedVectors(8)
    store.extend(pages)
    rng = np.random.default_rng(6)
    queries = [np.abs(rng.normal(size=(n, 8))).astype(np.float32) for n in (4, 2, 7)]
    ours = MaxSimScorer("cpu", batch_pages=3).scores(queries, store, None, breaks)
    theirs = engine.BaseVisualRetrieverProcessor.score_multi_vector(
        [torch.from_numpy(q) for q in queries],
        [torch.from_numpy(p.astype(np.float32)) for p in pages if len(p)],
        batch_size=4,
        device="cpu",
    ).numpy()
    filled = [i for i, p in enumerate(pages) if len(p)]
    assert np.abs(ours[:, filled] - theirs).max() <= 1e-3 * np.abs(theirs).max()
