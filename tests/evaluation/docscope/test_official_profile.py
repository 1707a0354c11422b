"""The official profile rule by rule: what it reads from a trajectory, how it reads a judge
reply, its populations and policies, and how profiles sit beside each other."""

from __future__ import annotations

import json

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.answer import AnswerScorer
from scanrag.evaluation.docscope.completeness import CompletenessScorer
from scanrag.evaluation.docscope.fact import FactScorer
from scanrag.evaluation.docscope.official.summary import official_summary
from scanrag.evaluation.docscope.official.view import (
    INFER_KEY,
    labels_by_id,
    official_view,
    reply_object,
    verdict,
)
from scanrag.evaluation.docscope.pages import PagesScorer, micro, page_prf, pages_official
from scanrag.evaluation.docscope.region import RegionScorer
from scanrag.evaluation.schemas import GroupSummary
from scanrag.evaluation.stage import row_basis
from scanrag.llm import ModelError
from scanrag.schemas import BBox, Citation, Fact, Region, Status
from scanrag.tasks import default_scorer_names

NO_CI = StatsOptions(n_resamples=0)
CITE2 = '[page=2, doc_page="1", bbox=[0.1, 0.1, 0.5, 0.5]]'


# --------------------------------------------------------------------------- the view


def test_view_of_a_free_text_trajectory_reparses_the_raw_reply(make_traj) -> None:
    raw = f"Revenue was 12 `{CITE2}`. More [page=9,\n doc_page=none, bbox=[0, 0, 1, 1]].\n"
    traj = make_traj(raw_output=raw, answer="12", pages=[2], metadata={"parser": "citations"})
    view = official_view(traj)
    assert view.source == "official_parser" and view.ok
    assert view.predicted_pages == [2, 9]  # out-of-range page 9 and the backticked one count
    assert view.answer is None and not view.has_answer_tag  # no tag: the answer field is unused
    assert view.model_answer == raw


def test_view_adds_evidence_adopted_from_earlier_steps(make_traj) -> None:
    traj = make_traj(
        raw_output="<answer>12</answer>",
        citations=[Citation(sentence="x", page=3, bbox=[0.1, 0.1, 0.2, 0.2])],
        metadata={"parser": "citations", "evidence_source": "reading steps"},
    )
    view = official_view(traj)
    assert view.source == "official_parser+adopted_evidence"
    assert view.predicted_pages == [3] and view.answer == "12" and view.has_answer_tag


def test_view_of_a_json_trajectory_uses_its_fields(make_traj) -> None:
    traj = make_traj(
        raw_output='{"answer": "12"}',
        answer="12",
        pages=[4],
        citations=[Citation(sentence="", page=2, bbox=[0.1, 0.1, 1.2, 0.5])],
        metadata={"parser": "json"},
    )
    view = official_view(traj)
    assert view.source == "trajectory" and view.predicted_pages == [2, 4]
    assert view.boxes_on(2) == ([[0.1, 0.1, 1.2, 0.5]], [])  # within [-0.01, 1.5]: drawn
    assert view.has_answer_tag and view.model_answer == "12"


@pytest.mark.parametrize(
    ("status", "ok"),
    [
        (Status.OK, True),
        (Status.UNPARSED, True),
        (Status.MODEL_ERROR, False),
        (Status.INPUT_ERROR, False),
        (Status.INTERNAL_ERROR, False),
    ],
)
def test_only_failed_model_calls_are_inference_errors(make_traj, status, ok) -> None:
    assert official_view(make_traj(status=status)).ok is ok


def test_view_of_an_imported_record(make_traj) -> None:
    parsed = {
        "answer": "",
        "has_answer_tag": True,
        "predicted_pages": [3],
        "citations": [{"page": 3, "bbox": [200, 100, 300, 150], "is_normalized": False}],
    }
    traj = make_traj(
        raw_output="whole reply", metadata={INFER_KEY: {"status": "ok", "parsed": parsed}}
    )
    view = official_view(traj)
    assert view.source == "infer_jsonl" and view.boxes_on(3) == ([], [[200, 100, 300, 150]])
    assert view.model_answer == "whole reply"  # an empty tag sends the whole reply
    error = make_traj(metadata={INFER_KEY: {"status": "error: timeout"}})
    assert not official_view(error).ok


# --------------------------------------------------------------------------- judge replies


def test_reply_object_follows_the_released_order() -> None:
    assert reply_object('{"consistent": true}') == {"consistent": True}
    assert reply_object('Sure.\n```json\n{"a": 1}\n```\nbye') == {"a": 1}
    assert reply_object('note {"a": 1} and {"b": 2}') == {}  # first { to last }: not JSON
    assert reply_object('prefix {"a": {"b": 2}} suffix') == {"a": {"b": 2}}
    assert reply_object("[1, 2]") == {} and reply_object("") == {} and reply_object(None) == {}


def test_labels_need_exact_ids_and_labels() -> None:
    reply = {
        "items": [
            {"id": "g1", "label": "covered", "reason": "r"},
            {"id": "g2", "label": "Covered"},
            {"id": 3, "label": "covered"},
            {"id": "g4", "label": ["covered"]},
        ]
    }
    allowed = frozenset({"covered", "imprecise", "not_covered"})
    got = labels_by_id(reply, ["g1", "g2", "g3", "g4", "g5"], allowed)
    assert got == [("covered", "r"), (None, None), (None, None), (None, None), (None, None)]
    assert labels_by_id({"items": "x"}, ["g1"], allowed) == [(None, None)]


def test_verdict_needs_a_json_boolean() -> None:
    assert verdict({"consistent": True, "reason": "same"}) == (True, "same")
    assert verdict({"consistent": False, "reasoning": "no"}) == (False, "no")
    assert verdict({"consistent": "true"})[0] is None
    assert verdict({"consistent": 1})[0] is None


# --------------------------------------------------------------------------- pages


@pytest.mark.parametrize(
    ("pred", "gold", "prf"),
    [
        (set(), set(), (1.0, 1.0, 1.0)),
        ({1}, set(), (0.0, 1.0, 0.0)),
        (set(), {1}, (1.0, 0.0, 0.0)),
        ({1, 2}, {2, 3, 4}, (0.5, 1 / 3, 0.4)),
        ({5}, {2}, (0.0, 0.0, 0.0)),
    ],
)
def test_page_prf_edge_cases(pred, gold, prf) -> None:
    got = page_prf(pred, gold)
    assert (got["precision"], got["recall"], got["f1"]) == pytest.approx(prf)


def test_micro_is_zero_without_denominators() -> None:
    assert micro(0, 0, 0) == (0.0, 0.0, 0.0)
    assert micro(3, 1, 2) == pytest.approx((0.75, 0.6, 2 / 3))


def test_pages_official_population(make_sample, make_traj) -> None:
    scorer = PagesScorer(profile="official")
    unanswerable = make_sample(answerable=False, answer=None, gold_pages=[])
    row = scorer.compute(make_traj(pages=[3], metadata={"parser": "json"}), unanswerable)
    assert row.status == "ok" and row.counts == {"tp": 0, "fp": 1, "fn": 0}
    assert row.metrics["precision"] == 0.0 and row.metrics["recall"] == 1.0
    error = scorer.compute(make_traj(status=Status.MODEL_ERROR), make_sample())
    assert error.status == "skipped" and "inference status" in (error.reason or "")
    paper = PagesScorer().compute(make_traj(status=Status.MODEL_ERROR), make_sample())
    assert paper.status == "ok" and paper.counts["fn"] == 1  # paper: scored as wrong


# --------------------------------------------------------------------------- profiles


def test_profile_parameter_checks() -> None:
    with pytest.raises(ValueError, match="known profiles: paper, official"):
        PagesScorer(profile="offical")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use 'pages' with profile: paper"):
        pages_official(profile="paper")
    assert "profile" not in vars(PagesScorer())  # the default leaves row bases unchanged
    assert vars(PagesScorer(profile="official"))["profile"] == "official"
    assert row_basis("c", PagesScorer()) != row_basis("c", PagesScorer(profile="official"))


def test_official_bindings_are_opt_in() -> None:
    names = default_scorer_names(["qa"])
    assert "pages" in names and "completeness" in names
    assert not any(name.endswith("_official") for name in names)


def test_summary_follows_the_rows_profile(make_sample, make_traj) -> None:
    sample = make_sample(gold_pages=[2])
    rows = [PagesScorer(profile="official").compute(make_traj(pages=[2]), sample)]
    result = PagesScorer().aggregate(rows, RowGroup("c", "s"), NO_CI)  # built without params
    assert result.tables["profile"] == "official" and "official_summary" in result.tables
    mixed = [*rows, PagesScorer().compute(make_traj(pages=[2, 5]), sample)]
    result = PagesScorer().aggregate(mixed, RowGroup("c", "s"), NO_CI)
    assert result.tables["profile"] == "paper" and result.tables["rows_of_other_profile"] == 1
    assert result.metrics["precision"].value == 0.5


def test_official_summary_of_unscored_stages() -> None:
    out = official_summary(GroupSummary(group="c", strategy="s", items=3))
    assert out["infer"] == {"n": 3} and out["pages"] == {"n": 0}
    assert out["bbox"] == {"n": 0, "by_label": {}}
    assert out["answer"]["n_total"] == 0


# --------------------------------------------------------------------------- judge policies


async def test_region_has_no_validity_gate(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([json.dumps({"items": [{"id": "GOLD[1]", "label": "not_covered"}]})])
    sample = make_sample(
        gold_regions=[Region(page=2, bbox=BBox(x1=0.1, y1=0.1, x2=0.5, y2=0.5))],
    )
    traj = make_traj(
        citations=[Citation(sentence="x", page=2, bbox=[40, 40, 90, 90])],
        metadata={"parser": "json"},
    )
    row = await RegionScorer(profile="official").score(traj, sample, judge=ctx)
    assert len(ctx.llm.requests) == 1  # paper: gated, no call
    assert ctx.llm.requests[0].max_tokens == 2048
    unit = row.details["units"][0]
    assert (unit["status"], unit["label"], unit["n_pred_drawn"]) == ("ok", "not_covered", 0)
    assert unit["skipped_pred_bboxes"] == [[40.0, 40.0, 90.0, 90.0]]
    paper_ctx = make_ctx([])
    paper = await RegionScorer().score(
        traj.model_copy(update={"pages": [2]}), sample, judge=paper_ctx
    )
    assert paper_ctx.llm.requests == [] and paper.details["pages"]["2"]["gated"]


async def test_region_render_failure_is_per_box(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([])
    sample = make_sample(
        doc_ids=["missing.pdf"],
        gold_regions=[Region(page=2, bbox=BBox(x1=0, y1=0, x2=1, y2=1))] * 2,
    )
    traj = make_traj(citations=[Citation(sentence="x", page=2, bbox=[0, 0, 1, 1])])
    row = await RegionScorer(profile="official").score(traj, sample, judge=ctx)
    assert row.status == "render_failed" and ctx.llm.requests == []
    assert [u["status"] for u in row.details["units"]] == ["render_failed"] * 2


async def test_fact_judge_reads_the_whole_reply(make_sample, make_traj, make_ctx) -> None:
    reply = json.dumps({"items": [{"id": "f2", "label": "consistent"}]})
    ctx = make_ctx([reply])
    sample = make_sample(
        gold_pages=[2, 3],
        gold_facts=[Fact(page=3, text="Costs were 3."), Fact(page=2, text="Revenue was 12.")],
    )
    raw = f"Intro without citations. Revenue was twelve {CITE2}.\n<answer>12</answer>"
    traj = make_traj(raw_output=raw, metadata={"parser": "citations"})
    row = await FactScorer(profile="official").score(traj, sample, judge=ctx)
    text = ctx.llm.requests[0].messages[-1].text
    assert raw in text and "Costs were 3." in text  # whole reply, other pages' facts as context
    assert "id=f2 :: Revenue was 12." in text
    assert row.metrics["consistency"] == 1.0 and row.counts["facts_all"] == 2


async def test_fact_judge_error_marks_every_fact(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([ModelError("scripted/judge", "down")])
    sample = make_sample(
        gold_facts=[Fact(page=2, text="a"), Fact(page=2, text="b")], gold_pages=[2]
    )
    traj = make_traj(raw_output=f"A {CITE2}.", metadata={"parser": "citations"})
    row = await FactScorer(profile="official").score(traj, sample, judge=ctx)
    assert row.status == "judge_error" and len(ctx.llm.requests) == 1
    assert [u["status"] for u in row.details["units"]] == ["judge_error"] * 2


async def test_answer_judge_is_always_called(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx(['{"consistent": true, "reason": "same"}', "no json at all"])
    exact = make_traj(
        raw_output="<answer>12</answer>", answer="12", metadata={"parser": "citations"}
    )
    row = await AnswerScorer(profile="official").score(exact, make_sample(), judge=ctx)
    assert row.metrics["correct"] == 1.0 and len(ctx.llm.requests) == 1  # paper: exact match
    unanswerable = make_sample(answerable=False, answer=None, gold_pages=[])
    refused = make_traj(
        raw_output="<answer>Unanswerable</answer>", metadata={"parser": "citations"}
    )
    row = await AnswerScorer(profile="official").score(refused, unanswerable, judge=ctx)
    assert 'Reference answer: "Unanswerable"' in ctx.llm.requests[1].messages[-1].text
    assert row.status == "judge_parse_error" and len(ctx.llm.requests) == 2  # no second try


def test_completeness_with_no_correct_page_is_all_fail(make_sample) -> None:
    from scanrag.evaluation.schemas import ScoreRow

    def row(scorer: str, **counts: float) -> ScoreRow:
        return ScoreRow(sample_id="q1", strategy="s", scorer=scorer, counts=counts)

    answer = row("answer")
    answer.metrics = {"correct": 1.0}
    rows = {
        "pages": row("pages", fn=1),
        "region": row("region", gold=0, covered=0, gold_all=2),
        "region_geometry": row("region_geometry", gold=0, covered_geo=0, gold_all=2),
        "fact": row("fact", facts=0, consistent=0, facts_all=2),
        "answer": answer,
    }
    group = RowGroup("c", "s", {k: {"q1": v} for k, v in rows.items()}, {"q1": make_sample()})
    result = CompletenessScorer().aggregate([], group, NO_CI)
    assert result.tables["judge"]["combinations"] == {"P✗B✗F✗": 1}
