"""The ``mmlongbench`` scorer's official profile and extraction call shapes: refusals scored as
written, failed extractions and raising rules as "Failed to extract" scoring 0 (and counting
in F1's denominators), the official call shape with a prompt file, and profile selection."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.mmlongbench import official_acc_f1, prompt
from scanrag.evaluation.mmlongbench.extraction import analysis_turn, read_free_text
from scanrag.evaluation.mmlongbench.profiles import LENIENT, OFFICIAL, get_profile
from scanrag.evaluation.mmlongbench.scorer import MMLongBenchScorer, gold_answer
from scanrag.llm import ModelError, ScriptedModel
from scanrag.schemas import Sample, Status, Trajectory

NO_CI = StatsOptions(n_resamples=0)
PROMPT_FILE = "Pull the answer out. {not a field}\nExtracted answer: ...\nAnswer format: ..."


def sample(sid: str = "s1", answer: str | None = "21%", fmt: str = "Float", **extra: Any) -> Sample:
    return Sample(
        id=sid,
        doc_ids=["doc.pdf"],
        question="How much time was spent with family?",
        answer=answer,
        answer_format=fmt,
        gold_pages=[3],
        **extra,
    )


def unanswerable(sid: str = "u1", answer: str = "Not answerable") -> Sample:
    return sample(sid, answer, "None", answerable=False)


def traj(answer: str | None, sid: str = "s1", **fields: Any) -> Trajectory:
    return Trajectory(sample_id=sid, strategy="s", answer=answer, **fields)


def ctx(model: ScriptedModel, prompts: dict[str, str] | None = None) -> JudgeContext:
    config = JudgeConfig(default_model="scripted/x", prompts=prompts or {})
    return JudgeContext(llm=model, config=config)


# --------------------------------------------------------------------------- profiles


def test_profiles_are_data() -> None:
    assert get_profile("official") is OFFICIAL and get_profile("lenient") is LENIENT
    with pytest.raises(ValueError, match="known profiles: official, lenient"):
        get_profile("paper")
    assert OFFICIAL.failures_score_zero and not LENIENT.failures_score_zero
    assert LENIENT.canonical_refusals and not OFFICIAL.canonical_refusals
    with pytest.raises(ValueError, match="call_shape must be one of json, official"):
        MMLongBenchScorer(call_shape="xml")


def test_the_profile_comes_from_the_scorer_then_the_sample() -> None:
    scorer = MMLongBenchScorer()
    assert vars(scorer)["profile"] is None  # in the row basis: rows of the old rules rescore
    assert scorer.profile_for(sample()) is OFFICIAL
    assert scorer.profile_for(sample(metadata={"scoring_profile": "lenient"})) is LENIENT
    forced = MMLongBenchScorer(profile="official")
    assert forced.profile_for(sample(metadata={"scoring_profile": "lenient"})) is OFFICIAL


def test_official_gold_is_the_answer_as_written() -> None:
    written = unanswerable(answer="Unanswerable")
    assert gold_answer(written, OFFICIAL) == "Unanswerable"
    assert gold_answer(written, LENIENT) == gold_answer(written) == "Not answerable"
    assert gold_answer(sample(answer=None, answerable=False), OFFICIAL) == "Not answerable"


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("prediction", "official", "lenient"),
    [
        ("Not answerable", 1.0, 1.0),
        ("Unanswerable", pytest.approx(10 / 14), 1.0),  # 4 edits of 14 characters
        ("(Not answerable)", 0.0, 1.0),  # the parenthetical is removed: nothing left
        ("**Not answerable**", pytest.approx(14 / 18), 1.0),
        ("not answerable.", pytest.approx(14 / 15), 1.0),
    ],
)
async def test_refusal_spellings(prediction: str, official: Any, lenient: float) -> None:
    row = await MMLongBenchScorer().score(traj(prediction, "u1"), unanswerable())
    assert row.metrics["score"] == official and row.details["prediction"] == prediction
    row = await MMLongBenchScorer(profile="lenient").score(traj(prediction, "u1"), unanswerable())
    assert row.metrics["score"] == lenient and row.details["prediction"] == "Not answerable"


# --------------------------------------------------------------------------- failures


async def test_failed_json_extraction_scores_zero_and_counts() -> None:
    model = ScriptedModel([ModelError("scripted/x", "down"), "not json", '{"answer": null}'])
    scorer = MMLongBenchScorer(extract=True)
    down = await scorer.score(traj("21%"), sample(), judge=ctx(model))
    assert down.status == "ok" and down.metrics == {"score": 0.0, "correct": 0.0}
    assert down.details["prediction"] == "Failed to extract"
    assert "down" in down.details["failure"] and down.judges[0].status == "judge_error"
    garbled = await scorer.score(traj("21%"), sample(), judge=ctx(model))
    assert garbled.status == "ok" and garbled.details["prediction"] == "Failed to extract"
    rows = [down, garbled, await MMLongBenchScorer().score(traj("21%"), sample())]
    result = scorer.aggregate(rows, RowGroup("g", "s"), NO_CI)
    assert result.metrics["accuracy"].value == pytest.approx(1 / 3)
    assert result.metrics["precision"].value == pytest.approx(1 / 3)  # failures "answered"
    assert result.tables["profile"] == "official"
    assert result.tables["profile_label"].startswith("official")


async def test_a_raising_rule_is_failed_to_extract() -> None:
    row = await MMLongBenchScorer().score(traj("Not answerable"), sample(answer="N/A"))
    assert row.metrics["score"] == 0.0 and row.details["prediction"] == "Failed to extract"
    assert row.details["rule_failure"] == "the Float gold 'N/A' is no number"
    lenient = await MMLongBenchScorer(profile="lenient").score(
        traj("Not answerable"), sample(answer="N/A")
    )
    assert lenient.details["prediction"] == "Not answerable"
    both_empty = await MMLongBenchScorer().score(traj("[]"), sample(answer="[]", fmt="List"))
    assert both_empty.details["prediction"] == "Failed to extract"


@pytest.mark.parametrize(
    ("gold", "prediction", "score"),
    [
        ("['White', '10%']", "['White'] + ['10%']", 1.0),
        ("['a', 'b']", "[['a', 'b']][0]", 1.0),
        ("['a']", "[f'a']", 1.0),
        ("['b', 'a']", "['a', 'b'][::-1]", 1.0),
    ],
)
async def test_expression_lists_score_as_eval_computes_them(
    gold: str, prediction: str, score: float
) -> None:
    row = await MMLongBenchScorer().score(traj(prediction), sample(answer=gold, fmt="List"))
    assert row.metrics["score"] == score and row.details["prediction"] == prediction


async def test_a_refused_expression_scores_zero_with_its_reason() -> None:
    row = await MMLongBenchScorer().score(traj("[str(1)]"), sample(answer="['1']", fmt="List"))
    assert (
        row.metrics["score"] == 0.0 and row.details["refused"] == "call is outside the safe subset"
    )
    assert row.details["prediction"] == "[str(1)]"  # eval would compute ['1']: not a failure


# --------------------------------------------------------------------------- call shapes


def test_free_text_reading() -> None:
    assert read_free_text("Extracted answer: 21%\nAnswer format: Float") == "21%"
    assert read_free_text("noise Extracted answer:  ['a']  ") == "['a']"
    assert read_free_text("Answer format: Float\nExtracted answer: 21%") is None
    assert read_free_text("Failed") is None
    assert read_free_text("Extracted answer: a\nExtracted answer: b\nAnswer format: x") == "a"
    assert analysis_turn("Q?", "R") == "\n\nQuestion:Q?\nAnalysis:R\n"


async def test_official_call_shape_with_a_prompt_file() -> None:
    model = ScriptedModel(["Extracted answer: 21%\nAnswer format: Float"])
    reply = "The chart shows 21% [page=3]. <answer>21%</answer>"
    t = traj("21%", raw_output=reply)
    row = await MMLongBenchScorer(extract=True).score(
        t, sample(), judge=ctx(model, {"extractor": PROMPT_FILE})
    )
    assert row.metrics["score"] == 1.0 and row.details["call_shape"] == "official"
    assert row.details["extracted_format"] == "Float" and row.details["answer"] == reply
    request = model.requests[0]
    assert [m.role for m in request.messages] == ["user", "assistant"]
    assert request.messages[0].text == PROMPT_FILE  # as it is, braces and all
    assert request.messages[1].text == analysis_turn(sample().question, reply)
    assert (request.max_tokens, request.top_p, request.temperature) == (256, 1.0, 0.0)
    assert request.json_schema is None


async def test_official_call_shape_failures() -> None:
    model = ScriptedModel(["I cannot tell.", ModelError("scripted/x", "down")])
    scorer = MMLongBenchScorer(extract=True, call_shape="official")
    no_tag = await scorer.score(traj("21%"), sample(), judge=ctx(model))
    assert no_tag.details["prediction"] == "Failed to extract" and no_tag.metrics["score"] == 0.0
    assert no_tag.judges[0].status == "judge_parse_error"
    assert model.requests[0].messages[0].text == prompt.FREE_TEXT  # ours without a file
    assert no_tag.judges[0].prompt_hash == prompt.FREE_TEXT_HASH
    down = await scorer.score(traj("21%"), sample(), judge=ctx(model))
    assert (
        down.details["prediction"] == "Failed to extract" and down.judges[0].status == "judge_error"
    )
    lenient = MMLongBenchScorer(extract=True, call_shape="official", profile="lenient")
    again = ScriptedModel(["I cannot tell."])
    row = await lenient.score(traj("21%"), sample(), judge=ctx(again))
    assert row.status == "judge_parse_error" and row.metrics == {"score": None}


async def test_official_extraction_reads_the_whole_reply_and_failed_calls() -> None:
    model = ScriptedModel(["Extracted answer: Fail to answer\nAnswer format: String"] * 2)
    scorer = MMLongBenchScorer(extract=True, call_shape="official")
    failed = traj(None, status=Status.MODEL_ERROR)
    row = await scorer.score(failed, sample(), judge=ctx(model))
    assert row.details["answer"] == "Failed"  # what the released pipeline records
    assert model.requests[0].messages[1].text.endswith("Analysis:Failed\n")
    empty = await scorer.score(traj(""), sample(), judge=ctx(model))
    assert len(model.requests) == 2 and empty.details["prediction"] == "Fail to answer"


async def test_a_prompt_file_needs_the_official_call_shape() -> None:
    row = await MMLongBenchScorer(extract=True, call_shape="json").score(
        traj("21%"), sample(), judge=ctx(ScriptedModel([]), {"extractor": PROMPT_FILE})
    )
    assert row.status == "skipped"
    assert row.reason == "an extractor prompt file is read with call_shape: official only"


async def test_json_shape_sends_our_prompt() -> None:
    model = ScriptedModel([json.dumps({"answer": "21%", "format": "Float"})])
    row = await MMLongBenchScorer(extract=True).score(traj("21%"), sample(), judge=ctx(model))
    assert row.details["call_shape"] == "json" and row.judges[0].prompt_hash == prompt.PROMPT_HASH
    assert [m.role for m in model.requests[0].messages] == ["system", "user"]


def test_official_acc_f1_of_failures() -> None:
    triples = [
        ("21%", "Failed to extract", 0.0),
        ("Not answerable", "Unanswerable", 0.0),
        ("Not answerable", "Not answerable", 1.0),
        ("7", "7", 1.0),
    ]
    accuracy, f1 = official_acc_f1(triples)
    assert accuracy == 0.5
    recall, precision = 1 / 2, 1 / 3  # answered: everything but the exact refusal
    assert f1 == pytest.approx(2 * recall * precision / (recall + precision))
