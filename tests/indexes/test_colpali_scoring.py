"""Packed multi-vector storage and batched MaxSim against a brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest

from indexes import colpali_scoring as scoring
from indexes.colpali_scoring import MaxSimScorer, PackedVectors


def reference(query: np.ndarray, page: np.ndarray) -> float:
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
    monkeypatch.setattr(scoring, "QUERY_ROWS", query_rows)  # 1: every query alone
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
