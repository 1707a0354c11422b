"""Page localization under the official profile (DocScope's ``score_pages.py`` and the
``pages`` block of ``summarize_eval.py``): rows, micro and macro numbers, by hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.docscope.pages import PagesScorer, micro
from scanrag.evaluation.docscope.profiles import OFFICIAL
from scanrag.evaluation.schemas import ScoreRow
from scanrag.schemas import Status

NO_CI = StatsOptions(n_resamples=0)


def test_micro_with_equal_counts() -> None:
    assert micro(1, 1, 1) == (0.5, 0.5, 0.5)
    assert micro(2, 0, 2) == (1.0, 0.5, pytest.approx(2 / 3))


def test_row_fields(make_sample, make_traj) -> None:
    traj = make_traj(pages=[2, 5], metadata={"parser": "json"})
    row = PagesScorer(profile="official").compute(traj, make_sample(gold_pages=[2, 3]))
    assert row.status == "ok"
    assert row.metrics == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "recall_complete": 0.0}
    assert row.counts == {"tp": 1, "fp": 1, "fn": 1}
    assert row.details == {
        "profile": "official",
        "view": "trajectory",
        "predicted": [2, 5],
        "gold": [2, 3],
        "correct": [2],
        "answerable": True,
    }
    full = PagesScorer(profile="official").compute(
        make_traj(pages=[2], metadata={"parser": "json"}), make_sample()
    )
    assert full.metrics["recall_complete"] == 1.0 and full.metrics["f1"] == 1.0


def rows(make_sample, make_traj) -> list[ScoreRow]:
    scorer = PagesScorer(profile="official")
    json_traj = {"metadata": {"parser": "json"}}
    return [
        # q1: predicted {2, 5}, gold {2}: P 1/2, R 1, F1 2/3
        scorer.compute(make_traj(pages=[2, 5], **json_traj), make_sample(gold_pages=[2])),
        # q2: unanswerable, nothing predicted: P = R = F1 = 1
        scorer.compute(
            make_traj(sample_id="q2", **json_traj),
            make_sample(id="q2", answerable=False, answer=None, gold_pages=[]),
        ),
        # q3: predicted nothing, gold {4}: P 1, R 0, F1 0
        scorer.compute(
            make_traj(sample_id="q3", **json_traj), make_sample(id="q3", gold_pages=[4])
        ),
        # q4: the model call failed: left out, counted
        scorer.compute(
            make_traj(sample_id="q4", status=Status.MODEL_ERROR),
            make_sample(id="q4", gold_pages=[1]),
        ),
    ]


def test_aggregate_numbers(make_sample, make_traj) -> None:
    result = PagesScorer().summarize(rows(make_sample, make_traj), NO_CI, OFFICIAL)
    m = result.metrics
    # micro: TP 1, FP 1, FN 1 -> 0.5 each
    assert (m["precision"].value, m["recall"].value, m["f1"].value) == (0.5, 0.5, 0.5)
    assert {k for k, v in m.items() if v.headline} == {"precision", "recall", "f1"}
    assert m["precision"].n == 3 and m["precision"].skipped == 1
    assert m["macro_precision"].value == pytest.approx((0.5 + 1 + 1) / 3)
    assert m["macro_recall"].value == pytest.approx((1 + 1 + 0) / 3)
    assert m["macro_f1"].value == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert result.tables["counts"] == {"tp": 1, "fp": 1, "fn": 1}
    assert result.tables["inference_errors"] == 1
    assert result.tables["official_summary"] == {
        "n": 3,
        "macro": {
            "precision": pytest.approx(2.5 / 3),
            "recall": pytest.approx(2 / 3),
            "f1": pytest.approx(5 / 9),
        },
        "micro": {"precision": 0.5, "recall": 0.5, "f1": 0.5, "tp": 1, "fp": 1, "fn": 1},
    }


def test_aggregate_without_items() -> None:
    result = PagesScorer().summarize([], NO_CI, OFFICIAL)
    assert result.tables["official_summary"] == {"n": 0}
    assert result.metrics["precision"].value is None


def test_macro_of_rows_without_values_prints_zero() -> None:
    bare = ScoreRow(sample_id="a", strategy="s", scorer="pages", counts={"tp": 0, "fp": 0, "fn": 0})
    summary = PagesScorer().summarize([bare], NO_CI, OFFICIAL).tables["official_summary"]
    assert summary["macro"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert summary["micro"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "tp": 0,
        "fp": 0,
        "fn": 0,
    }
