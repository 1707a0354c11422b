"""Evidence-chain buckets and evidence-layout factors, golden values by hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.completeness import CompletenessScorer, bucket_of
from scanrag.evaluation.docscope.layout import LayoutScorer, bin_label, layout_factors
from scanrag.evaluation.schemas import ScoreRow

NO_CI = StatsOptions(n_resamples=0)


def row(scorer: str, sid: str, status: str = "ok", **counts: float) -> ScoreRow:
    return ScoreRow(sample_id=sid, strategy="s", scorer=scorer, status=status, counts=counts)


def answer(sid: str, correct: float | None, status: str = "ok") -> ScoreRow:
    r = row("answer", sid, status)
    r.metrics = {"correct": correct}
    return r


def chain(sid: str, p: bool, b: bool, f: bool) -> list[ScoreRow]:
    """Rows of an item with 3 gold boxes and 4 gold facts; with P✗ one gold page (1 box,
    1 fact) was missed and only the rest was judged."""
    judged_boxes, judged_facts = (3, 4) if p else (2, 3)
    return [
        row("pages", sid, fn=0 if p else 1),
        row("region", sid, gold=judged_boxes, covered=judged_boxes - (0 if b else 1), gold_all=3),
        row(
            "region_geometry",
            sid,
            gold=judged_boxes,
            covered_geo=judged_boxes if b else 0,
            gold_all=3,
            degenerate=0,
        ),
        row(
            "fact", sid, facts=judged_facts, consistent=judged_facts - (0 if f else 2), facts_all=4
        ),
        answer(sid, 1.0),
    ]


def group_of(rows: list[ScoreRow]) -> RowGroup:
    by: dict[str, dict[str, ScoreRow]] = {}
    for r in rows:
        by.setdefault(r.scorer, {})[r.sample_id] = r
    return RowGroup("c", "s", by)


def test_bucket_names() -> None:
    assert bucket_of(True, True, True) == "complete"
    assert bucket_of(False, False, False) == "p_fail_b_fail_f_fail"
    assert bucket_of(False, True, True) == "p_fail_b_ok_f_ok"
    assert bucket_of(True, False, True) == "p_ok_b_fail_f_ok"
    # the paper's table has no P✗B✓F✗ / P✗B✗F✓ column: they count as P✗B✗F✗
    assert bucket_of(False, True, False) == "p_fail_b_fail_f_fail"
    assert bucket_of(False, False, True) == "p_fail_b_fail_f_fail"


def test_buckets_among_answer_correct_items() -> None:
    rows = [
        *chain("a", True, True, True),
        *chain("b", True, True, True),
        *chain("c", False, False, False),
        *chain("d", False, True, True),
        *chain("e", True, False, False),
        *chain("f", True, False, True),
        *chain("g", True, True, False),
        *chain("h", False, True, False),  # folded into P✗B✗F✗
    ]
    rows += [*chain("wrong", True, True, True)[:-1], answer("wrong", 0.0)]  # not counted
    rows += [*chain("fail", True, True, True)[:-1], answer("fail", None, "judge_error")]
    rows += [
        row("pages", "x", fn=0),
        row("region", "x", "skipped"),
        row("region_geometry", "x", gold=2, covered_geo=2, gold_all=2),
        row("fact", "x", facts=1, consistent=1, facts_all=1),
        answer("x", 1.0),
    ]
    result = CompletenessScorer().aggregate([], group_of(rows), NO_CI)
    table = result.tables["judge"]
    counts = {k: v["count"] for k, v in table["buckets"].items()}
    assert counts == {
        "complete": 2,
        "p_fail_b_fail_f_fail": 2,
        "p_fail_b_ok_f_ok": 1,
        "p_ok_b_fail_f_fail": 1,
        "p_ok_b_fail_f_ok": 1,
        "p_ok_b_ok_f_fail": 1,
    }
    assert sum(counts.values()) == table["n"]  # as in the paper: the buckets add up
    assert table["combinations"] == {
        "P✓B✓F✓": 2,
        "P✗B✗F✗": 1,
        "P✗B✓F✓": 1,
        "P✓B✗F✗": 1,
        "P✓B✗F✓": 1,
        "P✓B✓F✗": 1,
        "P✗B✓F✗": 1,
    }
    assert table["n"] == 8 and table["excluded"] == 1  # "x": region judge skipped
    assert result.metrics["complete_rate"].value == pytest.approx(2 / 8)
    assert result.metrics["complete_rate_geometric"].value == pytest.approx(3 / 9)  # x counts there
    assert result.tables["answer_correct"] == 9  # a..h and x; "fail" has no verdict


def test_rules_answer_used_when_no_judge_row() -> None:
    rows = chain("a", True, True, True)[:-1]
    rules = row("answer_rules", "a")
    rules.metrics = {"correct": 1.0}
    result = CompletenessScorer().aggregate([], group_of([*rows, rules]), NO_CI)
    assert result.metrics["complete_rate"].value == 1.0


def test_layout_factors_by_hand() -> None:
    f = layout_factors([9, 3, 4], num_pages=20)
    assert f == pytest.approx(
        {
            "count": 3,
            "span": 6,
            "max_gap": 5,
            "mean_pairwise": 4.0,
            "clusters": 2,
            "position": 16 / 60,
        }
    )
    one = layout_factors([5], num_pages=10)
    assert one == {
        "count": 1,
        "span": 0,
        "max_gap": 0,
        "mean_pairwise": 0.0,
        "clusters": 1,
        "position": 0.5,
    }
    assert layout_factors([1, 2, 3, 10, 11, 20])["clusters"] == 3
    assert layout_factors([2])["position"] is None
    with pytest.raises(ValueError):
        layout_factors([])
    assert [
        bin_label(k, f[k])
        for k in ("count", "span", "max_gap", "mean_pairwise", "clusters", "position")
    ] == [
        "3",
        "6-10",
        "4-7",
        "(2,5]",
        "2",
        "(0.2,0.4]",
    ]
    assert bin_label("count", 9) == "6+" and bin_label("position", 1.0) == "(0.8,1]"


def test_layout_scorer_and_accuracy_per_bin(make_sample, make_traj) -> None:
    scorer = LayoutScorer()
    samples = {
        "a": make_sample(id="a", gold_pages=[2], metadata={"num_pages": 10}),
        "b": make_sample(id="b", gold_pages=[3], metadata={"num_pages": 10}),
        "c": make_sample(id="c", gold_pages=[1, 9], metadata={"num_pages": 10}),
    }
    rows = [scorer.compute(make_traj(sample_id=k), s) for k, s in samples.items()]
    assert rows[0].metrics["position"] == pytest.approx(0.2)
    assert (
        scorer.compute(make_traj(), make_sample(answerable=False, answer=None)).status == "skipped"
    )
    group = group_of([*rows, answer("a", 1.0), answer("b", 0.0), answer("c", 1.0)])
    result = scorer.aggregate(rows, group, NO_CI)
    count_bins = result.tables["bins"]["count"]
    assert count_bins["1"] == {"n": 2, "answered": 2, "correct": 1, "accuracy": 0.5}
    assert count_bins["2"]["accuracy"] == 1.0 and count_bins["3"]["accuracy"] is None
    assert result.tables["bins"]["max_gap"]["8-15"]["n"] == 1
    assert result.metrics["mean_count"].value == pytest.approx(4 / 3)


def test_layout_reads_page_count_from_the_pdf(make_sample, make_traj, make_ctx) -> None:
    row_ = LayoutScorer().compute(make_traj(), make_sample(gold_pages=[3]), make_ctx([]))
    assert row_.metrics["position"] == pytest.approx(1.0)  # page 3 of the 3-page test PDF
