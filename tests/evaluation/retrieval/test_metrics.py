"""Retrieval metrics against hand-computed values."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from scanrag.evaluation.retrieval.metrics import (
    evaluate_retrieval,
    hit_at_k,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    question_metrics,
    recall_at_k,
)

RANKED = [4, 2, 9, 7, 1]  # gold pages 2 and 7 sit at positions 2 and 4
GOLD = {2, 7, 8}


@pytest.mark.parametrize(
    ("k", "recall", "precision", "hit", "mrr"),
    [
        (1, 0.0, 0.0, 0.0, 0.0),
        (2, 1 / 3, 1 / 2, 1.0, 1 / 2),
        (4, 2 / 3, 2 / 4, 1.0, 1 / 2),
        (10, 2 / 3, 2 / 5, 1.0, 1 / 2),  # only 5 returned: precision over what came back
    ],
)
def test_set_and_rank_metrics(k, recall, precision, hit, mrr):
    assert recall_at_k(RANKED, GOLD, k) == pytest.approx(recall)
    assert precision_at_k(RANKED, GOLD, k) == pytest.approx(precision)
    assert hit_at_k(RANKED, GOLD, k) == hit
    assert mrr_at_k(RANKED, GOLD, k) == pytest.approx(mrr)


def test_ndcg_by_hand():
    # DCG@4 = 1/log2(3) + 1/log2(5); IDCG@4 = 1 + 1/log2(3) + 1/log2(4) (3 gold items)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 0.5
    assert ndcg_at_k(RANKED, GOLD, 4) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(RANKED, GOLD, 1) == 0.0
    # k below the number of gold items: IDCG uses k positions only
    assert ndcg_at_k([2, 7], GOLD, 2) == pytest.approx(1.0)
    assert ndcg_at_k([2], {2}, 5) == pytest.approx(1.0)


def test_duplicates_count_once():
    assert precision_at_k([2, 2, 3], {2}, 2) == pytest.approx(1 / 2)
    assert recall_at_k([2, 2, 2], {2, 3}, 3) == pytest.approx(1 / 2)
    assert mrr_at_k([5, 5, 2], {2}, 2) == pytest.approx(1 / 2)


def test_empty_ranking_and_pairs():
    assert precision_at_k([], {1}, 3) == 0.0
    assert hit_at_k([], {1}, 3) == 0.0
    assert recall_at_k([("d", 1), ("e", 1)], {("e", 1)}, 2) == 1.0


def test_undefined_without_gold_and_bad_k():
    with pytest.raises(ValueError, match="gold"):
        recall_at_k([1], set(), 1)
    with pytest.raises(ValueError, match="gold"):
        ndcg_at_k([1], [], 1)
    with pytest.raises(ValueError, match="k"):
        hit_at_k([1], {1}, 0)


def test_question_metrics_names():
    names = set(question_metrics(RANKED, GOLD, [1, 5]))
    assert names == {
        f"{m}@{k}" for m in ("recall", "precision", "hit", "mrr", "ndcg") for k in (1, 5)
    }


def test_macro_micro_and_exclusion():
    report = evaluate_retrieval(
        [
            ("q1", [1, 2, 3], [1]),  # R@2 1, P@2 1/2
            ("q2", [5, 6, 7], [6, 7, 8, 9]),  # R@2 1/4, P@2 1/2
            ("q3", [1, 2], []),  # unanswerable: excluded
        ],
        ks=[2, 1],
    )
    assert report.ks == [1, 2]
    assert (report.n_questions, report.n_scored, report.n_without_gold) == (3, 2, 1)
    assert report.without_gold_ids == ["q3"]
    assert report.macro["recall@2"] == pytest.approx((1 + 1 / 4) / 2)
    assert report.micro["recall@2"] == pytest.approx(2 / 5)  # 2 found of 5 gold
    assert report.macro["precision@2"] == pytest.approx(1 / 2)
    assert report.micro["precision@2"] == pytest.approx(2 / 4)
    assert report.macro["mrr@2"] == pytest.approx((1 + 1 / 2) / 2)
    assert report.macro["hit@1"] == pytest.approx(1 / 2)
    assert [q.id for q in report.per_question] == ["q1", "q2"]
    assert report.per_question[1].gold == [6, 7, 8, 9]


def test_all_unanswerable_gives_empty_averages():
    report = evaluate_retrieval([("q", [1], [])], ks=[5])
    assert report.n_scored == 0 and report.macro == {} and report.micro == {}


def test_bad_ks():
    with pytest.raises(ValueError):
        evaluate_retrieval([], ks=[])
    with pytest.raises(ValueError):
        evaluate_retrieval([], ks=[0, 1])


def test_module_imports_nothing_heavy():
    code = (
        "import sys, scanrag.evaluation.retrieval.metrics; "
        "print([m for m in ('torch', 'faiss', 'indexes', 'retrievers') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
