"""Page localization: per-item counts, micro (headline) and macro averages, by hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.pages import PagesScorer, page_counts, prf

NO_CI = StatsOptions(n_resamples=0)


def test_page_counts_and_prf() -> None:
    assert page_counts({2, 3}, {2}) == (1, 1, 0)
    assert prf(1, 1, 0) == pytest.approx((0.5, 1.0, 2 / 3))
    assert prf(0, 0, 2) == (None, 0.0, 0.0)
    assert prf(0, 0, 0) == (None, None, None)


def test_items_and_aggregates(make_sample, make_traj) -> None:
    scorer = PagesScorer()
    cases = [  # (predicted, gold)
        ([2, 3], [2]),  # TP1 FP1 FN0: P .5, R 1, F1 2/3
        ([], [4, 5]),  # TP0 FP0 FN2: P 0 (nothing predicted), R 0, F1 0
        ([1, 4, 5], [4, 5, 6]),  # TP2 FP1 FN1: 2/3 each
    ]
    rows = []
    for i, (pred, gold) in enumerate(cases):
        sample = make_sample(id=f"q{i}", gold_pages=gold)
        rows.append(scorer.compute(make_traj(sample_id=f"q{i}", pages=pred), sample))
    assert rows[0].metrics == pytest.approx(
        {"precision": 0.5, "recall": 1.0, "f1": 2 / 3, "recall_complete": 1.0}
    )
    assert rows[1].metrics["precision"] == 0.0 and rows[1].metrics["f1"] == 0.0
    assert rows[1].metrics["recall_complete"] == 0.0
    assert rows[2].counts == {"tp": 2, "fp": 1, "fn": 1}
    skipped = scorer.compute(make_traj(pages=[1]), make_sample(answerable=False, answer=None))
    no_gold = scorer.compute(make_traj(pages=[1]), make_sample(gold_pages=[]))
    assert skipped.status == no_gold.status == "skipped"

    out = scorer.aggregate([*rows, skipped], RowGroup("cell", "s"), NO_CI).metrics
    # micro: TP 3, FP 2, FN 3
    assert out["precision"].value == pytest.approx(3 / 5)
    assert out["recall"].value == pytest.approx(3 / 6)
    assert out["f1"].value == pytest.approx(6 / 11)
    assert out["macro_precision"].value == pytest.approx((0.5 + 0 + 2 / 3) / 3)
    assert out["macro_recall"].value == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert out["macro_f1"].value == pytest.approx((2 / 3 + 0 + 2 / 3) / 3)
    assert out["f1"].n == 3 and out["f1"].skipped == 1 and out["f1"].headline


def test_bootstrap_interval_brackets_the_estimate(make_sample, make_traj) -> None:
    scorer = PagesScorer()
    rows = [
        scorer.compute(
            make_traj(sample_id=f"q{i}", pages=[1, 2] if i % 3 else [5]),
            make_sample(id=f"q{i}", gold_pages=[1, 2, 3]),
        )
        for i in range(30)
    ]
    m = scorer.aggregate(rows, RowGroup("c", "s"), StatsOptions(n_resamples=300)).metrics["f1"]
    assert m.low is not None and m.high is not None
    assert m.low <= m.value <= m.high and m.ci == 0.95


def test_empty_prediction_set_everywhere_gives_zero_f1(make_sample, make_traj) -> None:
    scorer = PagesScorer()
    rows = [scorer.compute(make_traj(pages=[]), make_sample(gold_pages=[1, 2]))]
    out = scorer.aggregate(rows, RowGroup("c", "s"), NO_CI).metrics
    assert out["precision"].value is None  # nothing predicted anywhere: undefined
    assert out["recall"].value == 0.0 and out["f1"].value == 0.0
