"""Answer verification under the official profile: the judge's messages (ours or a user
prompt file), the row it gives for every kind of reply, and the released summary block."""

from __future__ import annotations

from typing import Any

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.docscope import answer_prompt as prompt
from scanrag.evaluation.docscope.answer import (
    ROLE,
    AnswerScorer,
    answer_messages,
    official_answer_summary,
)
from scanrag.evaluation.docscope.profiles import OFFICIAL
from scanrag.evaluation.judge_prompts import template_hash
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.schemas import ScoreRow
from scanrag.llm import ModelError, ScriptedModel
from scanrag.schemas import Status

TEMPLATE = "Q={question}|GOLD={gold_answer}|GOT={model_answer}"
TAGGED = {"raw_output": "Some words. <answer>12</answer>", "metadata": {"parser": "citations"}}


def _ctx(replies: list[Any], prompts: dict[str, str] | None = None) -> JudgeContext:
    config = JudgeConfig(default_model="scripted/judge", prompts=prompts or {})
    return JudgeContext(llm=ScriptedModel(replies), config=config)


def test_the_role_is_the_answer_judge() -> None:
    assert ROLE == "answer"
    assert ROLE in AnswerScorer.roles


def test_messages_are_ours_unless_a_prompt_file_is_given() -> None:
    ours, ours_hash = answer_messages(_ctx([]), "Q?", "12", "twelve")
    assert ours_hash == prompt.PROMPT_HASH
    assert [m.text for m in ours] == [
        m.text for m in prompt.build_messages(question="Q?", gold="12", answer="twelve")
    ]
    custom, custom_hash = answer_messages(_ctx([], {"answer": TEMPLATE}), "Q?", "12", "twelve")
    assert custom_hash == template_hash(TEMPLATE) != ours_hash
    assert [m.text for m in custom] == ["Q=Q?|GOLD=12|GOT=twelve"]


async def test_a_consistent_reply_is_correct_with_every_detail(make_sample, make_traj) -> None:
    ctx = _ctx(['{"consistent": true, "reason": "same number"}'])
    row = await AnswerScorer(profile="official").score(
        make_traj(**TAGGED), make_sample(), judge=ctx
    )
    assert row.status == "ok" and row.metrics == {"correct": 1.0}
    assert row.details == {
        "profile": "official",
        "call_shape": "json",
        "view": "official_parser",
        "answerable": True,
        "has_answer_tag": True,
        "gold": "12",
        "predicted": "12",
        "method": "judge",
        "judge_reason": "same number",
    }
    assert len(row.judges) == 1
    assert "12" in ctx.llm.requests[0].messages[-1].text


async def test_an_inconsistent_reply_is_wrong(make_sample, make_traj) -> None:
    ctx = _ctx(['{"consistent": false}'])
    row = await AnswerScorer(profile="official").score(
        make_traj(**TAGGED), make_sample(), judge=ctx
    )
    assert row.status == "ok" and row.metrics == {"correct": 0.0}
    assert row.details["judge_reason"] == ""


async def test_unanswerable_gold_and_missing_answer(make_sample, make_traj) -> None:
    ctx = _ctx(['{"consistent": true}', '{"consistent": true}'])
    unanswerable = make_sample(answerable=False, answer=None, gold_pages=[])
    row = await AnswerScorer(profile="official").score(make_traj(**TAGGED), unanswerable, judge=ctx)
    assert row.details["gold"] == "Unanswerable" == OFFICIAL.unanswerable_gold
    assert row.details["answerable"] is False
    no_answer = make_sample(answer=None)
    row = await AnswerScorer(profile="official").score(make_traj(**TAGGED), no_answer, judge=ctx)
    assert row.details["gold"] == "" and row.status == "ok"


async def test_without_a_tag_the_whole_reply_is_judged(make_sample, make_traj) -> None:
    ctx = _ctx(['{"consistent": false}'])
    traj = make_traj(raw_output="It was 12 million.", metadata={"parser": "citations"})
    row = await AnswerScorer(profile="official").score(traj, make_sample(), judge=ctx)
    assert row.details["has_answer_tag"] is False
    assert row.details["predicted"] == "It was 12 million."


async def test_a_failed_inference_is_left_out_without_a_call(make_sample, make_traj) -> None:
    ctx = _ctx([])
    traj = make_traj(status=Status.MODEL_ERROR, **TAGGED)
    row = await AnswerScorer(profile="official").score(traj, make_sample(), judge=ctx)
    assert row.status == "skipped" and "inference status" in (row.reason or "")
    assert ctx.llm.requests == []


async def test_no_judge_is_a_skip_with_the_reason(make_sample, make_traj) -> None:
    row = await AnswerScorer(profile="official").score(
        make_traj(**TAGGED), make_sample(), judge=None
    )
    assert row.status == "skipped" and row.reason == "no judge context"
    assert row.details["predicted"] == "12" and row.details["profile"] == "official"
    no_model = JudgeContext(llm=ScriptedModel([]), config=JudgeConfig())
    row = await AnswerScorer(profile="official").score(
        make_traj(**TAGGED), make_sample(), judge=no_model
    )
    assert row.status == "skipped" and row.reason == no_model.why_not(ROLE)


async def test_unreadable_and_failed_judge_replies(make_sample, make_traj) -> None:
    ctx = _ctx(['{"consistent": "yes"}', ModelError("scripted/judge", "down")])
    scorer = AnswerScorer(profile="official")
    row = await scorer.score(make_traj(**TAGGED), make_sample(), judge=ctx)
    assert row.status == "judge_parse_error" and row.metrics == {"correct": None}
    assert row.reason == "no JSON boolean 'consistent' in the reply"
    assert "judge_reason" not in row.details
    row = await scorer.score(make_traj(**TAGGED), make_sample(), judge=ctx)
    assert row.status == "judge_error" and row.metrics == {"correct": None}
    assert row.reason and "down" in row.reason
    assert len(row.judges) == 1


def _row(status: str, correct: float | None, tag: bool, reason: str = "") -> ScoreRow:
    row = ScoreRow(sample_id="q", strategy="s", scorer="answer_official", status=status)
    row.metrics = {"correct": correct}
    row.details = {"has_answer_tag": tag}
    row.reason = reason or None
    return row


ROWS = [
    _row("ok", 1.0, True),
    _row("ok", 0.0, True),
    _row("ok", 1.0, False),
    _row("judge_parse_error", None, True),
    _row("skipped", None, True, "inference status 'error': left out under the official profile"),
    _row("skipped", None, False, "no judge context"),
    _row("skipped", None, False, "no gold answer"),
]


def test_the_released_summary_block() -> None:
    assert official_answer_summary(ROWS) == {
        "n_judged": 3,
        "n_correct": 2,
        "accuracy": 2 / 3,
        "n_with_answer_tag": 3,
        "n_total": 4,
    }
    assert official_answer_summary([]) == {
        "n_judged": 0,
        "n_correct": 0,
        "accuracy": 0.0,
        "n_with_answer_tag": 0,
        "n_total": 0,
    }
    half = [_row("ok", 0.5, True)]  # only a 1.0 counts as correct
    assert official_answer_summary(half)["n_correct"] == 0


def test_aggregate_adds_the_summary_and_inference_errors() -> None:
    result = AnswerScorer().summarize(ROWS, StatsOptions(n_resamples=0), OFFICIAL)
    assert result.tables["official_summary"] == official_answer_summary(ROWS)
    assert result.tables["inference_errors"] == 1
