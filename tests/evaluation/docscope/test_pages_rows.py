"""Page localization (paper profile): the row's fields, skip reasons, the aggregate's tables
and headline flags, and the F1 of a single wrong page, by hand."""

from __future__ import annotations

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.pages import PagesScorer, pages_official, prf
from scanrag.registry import SCORERS

NO_CI = StatsOptions(n_resamples=0)


def test_names() -> None:
    assert PagesScorer.name == "pages" and pages_official.name == "pages_official"
    assert SCORERS.get("pages") is PagesScorer
    assert SCORERS.get("pages_official") is pages_official
    assert SCORERS.create("pages_official").name == "pages_official"


def test_prf_of_one_wrong_page() -> None:
    # TP 0, FP 1, FN 0: F1 = 0 / 1 = 0 (defined), recall undefined.
    assert prf(0, 1, 0) == (0.0, None, 0.0)
    assert prf(0, 0, 1) == (None, 0.0, 0.0)
    assert prf(0, 0, 0) == (None, None, None)


def test_row_fields(make_sample, make_traj) -> None:
    row = PagesScorer().compute(make_traj(pages=[3, 2, 7]), make_sample(gold_pages=[2, 4]))
    assert row.details == {
        "profile": "paper",
        "predicted": [2, 3, 7],
        "gold": [2, 4],
        "correct": [2],
    }
    assert row.counts == {"tp": 1, "fp": 2, "fn": 1}
    assert row.metrics["recall_complete"] == 0.0
    assert row.metrics["f1"] == 2 / 5  # 2 * 1 / (2 + 2 + 1)


def test_skip_reasons(make_sample, make_traj) -> None:
    scorer = PagesScorer()
    unanswerable = scorer.compute(make_traj(), make_sample(answerable=False, answer=None))
    assert unanswerable.reason == "unanswerable question: no page metric"
    assert scorer.compute(make_traj(), make_sample(gold_pages=[])).reason == "no gold pages"


def test_official_profile_row(make_sample, make_traj) -> None:
    row = PagesScorer(profile="official").compute(
        make_traj(pages=[2], metadata={"parser": "json"}), make_sample(gold_pages=[2])
    )
    assert row.details["profile"] == "official" and row.counts == {"tp": 1, "fp": 0, "fn": 0}


def test_aggregate_tables_and_headlines(make_sample, make_traj) -> None:
    scorer = PagesScorer()
    rows = [
        scorer.compute(make_traj(pages=[2, 3]), make_sample(gold_pages=[2])),
        scorer.compute(
            make_traj(sample_id="q2", pages=[]), make_sample(id="q2", gold_pages=[1, 5])
        ),
    ]
    result = scorer.aggregate(rows, RowGroup("c", "s"), NO_CI)
    assert result.tables.pop("profile_label").startswith("paper")
    assert result.tables == {"counts": {"tp": 1, "fp": 1, "fn": 2}, "profile": "paper"}
    heads = {k for k, v in result.metrics.items() if v.headline}
    assert heads == {"precision", "recall", "f1"}
    m = result.metrics
    assert (m["precision"].value, m["recall"].value) == (0.5, 1 / 3)
    assert m["macro_precision"].value == 0.25  # (1/2 + 0) / 2: no page predicted counts 0
