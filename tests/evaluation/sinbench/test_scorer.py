"""SIN-Bench: anchor normalization, chain metrics by hand, and the scorer with scripted judges."""

from __future__ import annotations

import json

import pytest

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.sinbench.metrics import (
    anchor_keys,
    chain_metrics,
    find_anchors,
    kendall_tau_order,
    normalize_anchor,
)
from scanrag.evaluation.sinbench.scorer import (
    SinBenchScorer,
    expand_pairs,
    gold_verdict,
    recover_chain,
)
from scanrag.llm.scripted import ScriptedModel
from scanrag.llm.types import ChatRequest
from scanrag.parsing import parse_verdict
from scanrag.schemas import EvidencePair, Sample, Trajectory


@pytest.mark.parametrize(
    "written",
    ["Fig. 2", "Figure 2", "fig 2", "<x2>", "x2", "Fig.2", "FIGURE 2", "Fig. 2b", "Figure 2(a)",
     "Image: <x2>", "figure-2", " 2 "],
)  # fmt: skip
def test_figure_variants_share_a_key(written: str) -> None:
    assert normalize_anchor(written) == "fig:2"


@pytest.mark.parametrize("written", ["Tab. 3", "Table 3", "table3", "Tab 3", "TABLE 3"])
def test_table_variants_share_a_key(written: str) -> None:
    assert normalize_anchor(written) == "table:3"


def test_tables_and_figures_stay_apart() -> None:
    assert normalize_anchor("Table 2") != normalize_anchor("Figure 2")
    assert normalize_anchor("Fig. S2") == "fig:s2" != normalize_anchor("Fig. 2")
    assert normalize_anchor("<x12>") == "fig:12"


def test_unrecoverable_anchor() -> None:
    assert normalize_anchor("the left panel") is None
    assert normalize_anchor("") is None
    assert normalize_anchor(None) is None


def test_aliases() -> None:
    aliases = {"Figure 3": "<x5>"}
    assert normalize_anchor("Fig. 3", aliases) == "fig:5"
    assert normalize_anchor("Fig. 4", aliases) == "fig:4"


def test_anchor_keys_and_running_text() -> None:
    assert anchor_keys("<x1>, <x3>") == ["fig:1", "fig:3"]
    assert anchor_keys("nothing") == []
    text = "As Fig. 3 and Table 2 show, <x4> and x5 agree; 2x2 and x 2 are not anchors."
    assert find_anchors(text) == ["fig:3", "table:2", "fig:4", "fig:5"]


def test_chain_metrics_by_hand() -> None:
    gold = ["fig:1", "fig:2", "fig:3"]
    pred = ["fig:2", "fig:1", "table:1", "fig:3"]
    grades = {(0, 1): 3, (1, 0): 2, (3, 2): 1}
    m = chain_metrics(pred, gold, grades)
    # Match = (3/3 + 2/3 + 1/3) / 3
    assert m.match == pytest.approx(2 / 3)
    # TP = 2 (grades 3 and 2 reach tau = 2/3); P = 2/4, R = 2/3
    assert m.true_positives == 2
    assert (m.precision, m.recall) == pytest.approx((0.5, 2 / 3))
    assert m.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # gold positions in predicted order: [1, 0, 2] -> 1 inversion of 3 -> tau = 1/3
    assert m.kendall_tau == pytest.approx(1 / 3)
    assert m.kt_sim == pytest.approx(2 / 3)
    assert m.hits == 3 and m.n_pred == 4 and m.n_gold == 3


def test_single_matched_anchor_gives_zero_logic() -> None:
    m = chain_metrics(["fig:1"], ["fig:1", "fig:2"], {(0, 0): 3})
    assert m.kendall_tau is None
    assert m.kt_sim == 0.0
    assert m.match == 1.0
    assert (m.precision, m.recall) == pytest.approx((1.0, 0.5))


def test_no_evidence_no_score() -> None:
    for pred in ([], [None, None], ["fig:9"]):
        m = chain_metrics(pred, ["fig:1", "fig:2"], {})
        assert (m.match, m.f1, m.kt_sim) == (0.0, 0.0, 0.0)


def test_reversed_order() -> None:
    grades = {(0, 2): 3, (1, 1): 3, (2, 0): 3}
    m = chain_metrics(["fig:3", "fig:2", "fig:1"], ["fig:1", "fig:2", "fig:3"], grades)
    assert m.kendall_tau == pytest.approx(-1.0)
    assert m.kt_sim == 0.0
    assert m.f1 == 1.0


def test_repeated_gold_anchor_assigned_one_to_one() -> None:
    gold = ["fig:1", "fig:2", "fig:1"]
    pred = ["fig:1", "fig:1", "fig:2"]
    grades = {(0, 0): 3, (0, 2): 0, (1, 0): 0, (1, 2): 3, (2, 1): 3}
    m = chain_metrics(pred, gold, grades)
    assert m.assignment == {0: 0, 1: 2, 2: 1}
    assert (m.match, m.f1) == (1.0, 1.0)
    assert m.kendall_tau == pytest.approx(1 / 3)  # gold order [0, 2, 1]


def test_extra_duplicate_hit_is_a_false_positive() -> None:
    m = chain_metrics(["fig:1", "fig:1"], ["fig:1"], {(0, 0): 3, (1, 0): 3})
    assert m.match == 1.0  # both are hits
    assert m.true_positives == 1
    assert (m.precision, m.recall) == pytest.approx((0.5, 1.0))


def test_grade_below_threshold_is_not_relevant() -> None:
    m = chain_metrics(["fig:1"], ["fig:1"], {(0, 0): 1})
    assert m.match == pytest.approx(1 / 3)
    assert m.true_positives == 0 and m.f1 == 0.0


def test_chain_metrics_requires_all_grades() -> None:
    with pytest.raises(ValueError, match="no grade"):
        chain_metrics(["fig:1"], ["fig:1"], {})
    with pytest.raises(ValueError, match="0..3"):
        chain_metrics(["fig:1"], ["fig:1"], {(0, 0): 4})


def test_kendall_tau_order() -> None:
    assert kendall_tau_order({0: 0, 1: 1}) == 1.0
    assert kendall_tau_order({0: 1, 5: 0}) == -1.0
    assert kendall_tau_order({3: 0}) is None


@pytest.mark.parametrize(
    ("value", "verdict"),
    [(True, True), ("True", True), ("yes.", True), ("No, the chain misses a premise", False),
     ("false", False), ("insufficient", False), ("maybe", None), ("", None), (None, None)],
)  # fmt: skip
def test_parse_verdict(value: object, verdict: bool | None) -> None:
    assert parse_verdict(value) is verdict


# -- the scorer with scripted judges -----------------------------------------------------------

GOLD_CHAIN = [
    EvidencePair(anchor="<x1>", text="ALPHA panel shows growth"),
    EvidencePair(anchor="<x2>", text="BETA curve flattens"),
    EvidencePair(anchor="<x3>", text="GAMMA table of errors"),
]


def grader(request: ChatRequest) -> str:
    """Grades by keyword: the matching judge's reply depends on the predicted text."""
    text = request.messages[1].text  # the original prompt, also on a retry
    if "System answer:" in text:
        return json.dumps({"grade": 2})
    system_text = text.split("System text:")[1].split("References:")[0]
    for word, grade in (("BETA", 3), ("ALPHA", 2), ("GAMMA", 1)):
        if word in system_text:
            return json.dumps({"scores": [grade]})
    return json.dumps({"scores": [0]})


def make_sample(task: str = "find", **fields: object) -> Sample:
    base: dict = {
        "id": "p1",
        "doc_ids": ["paper.pdf"],
        "question": "What supports the claim?",
        "answer": "Growth then saturation.",
        "gold_chain": GOLD_CHAIN,
        "task": task,
    }
    base.update(fields)
    return Sample.model_validate(base)


def predicted(*pairs: tuple[str, str], answer: str | None = None, **fields: object) -> Trajectory:
    chain = [EvidencePair(anchor=a, text=t) for a, t in pairs]
    return Trajectory(
        sample_id="p1", strategy="agentic_rag", evidence_chain=chain, answer=answer, **fields
    )


def ctx(model: ScriptedModel) -> JudgeContext:
    return JudgeContext(llm=model, config=JudgeConfig(default_model="scripted/judge"))


async def test_find_task_end_to_end() -> None:
    model = ScriptedModel(responder=grader)
    traj = predicted(
        ("Figure 2", "BETA flattening"),
        ("Fig. 1", "ALPHA growth"),
        ("Table 1", "unrelated"),
        ("x3", "GAMMA"),
    )
    row = await SinBenchScorer().score(traj, make_sample(), judge=ctx(model))
    assert row.status == "ok"
    # the same numbers as test_chain_metrics_by_hand
    assert row.metrics["match"] == pytest.approx(2 / 3)
    assert row.metrics["relevance_f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert row.metrics["logic_kt"] == pytest.approx(2 / 3)
    overall = (2 / 3 + row.metrics["relevance_f1"] + 2 / 3) / 3
    assert row.metrics["overall"] == pytest.approx(overall)
    assert len(model.requests) == 3  # one call per hit; the table anchor is not a hit
    assert row.usage["judge.matching"].calls == 3


async def test_chain_qa_adds_answer_accuracy() -> None:
    model = ScriptedModel(responder=grader)
    traj = predicted(("<x1>", "ALPHA"), ("<x2>", "BETA"), answer="Growth, then a plateau.")
    row = await SinBenchScorer().score(traj, make_sample("chain_qa"), judge=ctx(model))
    assert row.metrics["answer_acc"] == pytest.approx(2 / 3)
    # match (2/3 + 1)/2; TP = 2 -> P = 1, R = 2/3; order kept -> KT-sim 1
    m, f1 = 5 / 6, 2 * 1 * (2 / 3) / (1 + 2 / 3)
    assert (row.metrics["match"], row.metrics["relevance_f1"]) == pytest.approx((m, f1))
    assert row.metrics["logic_kt"] == 1.0
    assert row.metrics["overall"] == pytest.approx((m + f1 + 1.0 + 2 / 3) / 4)


async def test_no_evidence_no_score_without_calls() -> None:
    model = ScriptedModel([])
    traj = predicted(("the left panel", "ALPHA"), ("Fig. 9", "BETA"))
    row = await SinBenchScorer().score(traj, make_sample(), judge=ctx(model))
    assert row.status == "ok" and model.requests == []
    assert (row.metrics["match"], row.metrics["relevance_f1"], row.metrics["logic_kt"]) == (0, 0, 0)
    assert row.details["no_evidence"] is True


async def test_anchors_recovered_from_answer_text() -> None:
    pairs = recover_chain("Fig. 1: ALPHA rises. Then <x2> shows BETA; finally Table 3 lists it.")
    assert [(p.anchor, p.text) for p in pairs] == [
        ("Fig. 1", "ALPHA rises. Then"),
        ("<x2>", "shows BETA; finally"),
        ("Table 3", "lists it"),
    ]
    model = ScriptedModel(responder=grader)
    traj = predicted(answer="Fig. 1 shows ALPHA growth and Figure 2 the BETA plateau.")
    row = await SinBenchScorer().score(traj, make_sample(), judge=ctx(model))
    assert row.metrics["match"] == pytest.approx((2 / 3 + 1) / 2)


async def test_single_matched_anchor_scores_zero_logic() -> None:
    model = ScriptedModel(responder=grader)
    row = await SinBenchScorer().score(predicted(("<x2>", "BETA")), make_sample(), judge=ctx(model))
    assert row.metrics["logic_kt"] == 0.0 and row.details["kendall_tau"] is None
    assert row.metrics["match"] == 1.0


async def test_malformed_grades_are_excluded_not_zero() -> None:
    model = ScriptedModel(["no json here", '{"scores": [3, 3]}'])  # wrong count on the retry
    row = await SinBenchScorer().score(predicted(("<x2>", "BETA")), make_sample(), judge=ctx(model))
    assert row.status == "judge_parse_error"
    assert row.metrics.get("match") is None and row.metrics["overall"] is None
    assert row.judges[0].attempts == 2


async def test_chain_qa_partial_when_only_the_answer_judge_fails() -> None:
    def flaky(request: ChatRequest) -> str:
        return "garbled" if "System answer:" in request.messages[1].text else grader(request)

    model = ScriptedModel(responder=flaky)
    traj = predicted(("<x1>", "ALPHA"), answer="Growth.")
    row = await SinBenchScorer().score(traj, make_sample("chain_qa"), judge=ctx(model))
    assert row.status == "partial"
    assert row.metrics["answer_acc"] is None and row.metrics["match"] == pytest.approx(2 / 3)
    assert row.metrics["overall"] is None


async def test_verify_task_needs_no_judge() -> None:
    scorer = SinBenchScorer()
    gold_true = make_sample("verify", answer="True")
    row = await scorer.score(predicted(verdict=True), gold_true)
    assert row.metrics == {"verify_accuracy": 1.0, "overall": 1.0}
    row = await scorer.score(predicted(answer="No, a premise is missing."), gold_true)
    assert row.metrics["verify_accuracy"] == 0.0
    row = await scorer.score(predicted(), gold_true)  # no decision at all counts as wrong
    assert row.metrics["verify_accuracy"] == 0.0
    assert gold_verdict(make_sample("verify", answer=None, metadata={"label": "False"})) is False
    row = await scorer.score(predicted(verdict=True), make_sample("verify", answer=None))
    assert row.status == "skipped"


async def test_missing_judge_skips_evidence_tasks() -> None:
    row = await SinBenchScorer().score(predicted(("<x1>", "ALPHA")), make_sample(), judge=None)
    assert row.status == "skipped"


def test_expand_pairs_splits_multi_anchor_fields() -> None:
    keys, texts = expand_pairs([EvidencePair(anchor="<x1>, <x3>", text="t")], None)
    assert keys == ["fig:1", "fig:3"] and texts == ["t", "t"]


async def test_aggregate_per_task() -> None:
    scorer = SinBenchScorer()
    model = ScriptedModel(responder=grader)
    rows = [
        await scorer.score(predicted(("<x2>", "BETA")), make_sample(), judge=ctx(model)),
        await scorer.score(predicted(("Fig. 9", "x")), make_sample(), judge=ctx(model)),
        await scorer.score(predicted(verdict=False), make_sample("verify", answer="False")),
    ]
    bad = ScriptedModel(["x", "y"])
    rows.append(await scorer.score(predicted(("<x2>", "BETA")), make_sample(), judge=ctx(bad)))
    result = scorer.aggregate(rows, None, StatsOptions(n_resamples=0))  # type: ignore[arg-type]
    find_overall = result.metrics["find.overall"]
    # row 1: (1 + F1 0.5 + 0) / 3; row 2: 0; the failed row is excluded
    assert find_overall.value == pytest.approx(0.5 / 2)
    assert (find_overall.n, find_overall.excluded) == (2, 1)
    assert result.metrics["verify.verify_accuracy"].value == 1.0
    assert result.tables["find.no_evidence_items"] == 1
    assert result.tables["avg_overall"] == pytest.approx((0.25 + 1.0) / 2)
