"""The ``mmlongbench`` scorer: raw and extracted predictions, judge failures as statuses,
and the aggregate headline numbers (accuracy, F1) with the official result-file groups."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions, get_scorer
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.mmlongbench import official_acc_f1, prompt
from scanrag.evaluation.mmlongbench.extraction import (
    FAIL_TO_ANSWER,
    Extraction,
    answer_as_text,
    canonical_prediction,
)
from scanrag.evaluation.mmlongbench.scorer import MMLongBenchScorer, evidence_sources, gold_answer
from scanrag.llm.scripted import ScriptedModel
from scanrag.schemas import Sample, Trajectory
from scanrag.tasks import default_scorer_names

NO_CI = StatsOptions(n_resamples=0)


def sample(
    sid: str = "s1",
    answer: str | None = "21%",
    fmt: str | None = "Float",
    *,
    answerable: bool = True,
    pages: tuple[int, ...] = (14,),
    sources: list[str] | None = None,
    doc_type: str | None = "Tutorial/Workshop",
) -> Sample:
    metadata: dict[str, Any] = {"evidence_sources": sources or ["Chart"]}
    if doc_type is not None:
        metadata["doc_type"] = doc_type
    return Sample(
        id=sid,
        doc_ids=["doc.pdf"],
        question="How much time was spent with family and friends in 2010?",
        answer=answer,
        answerable=answerable,
        answer_format=fmt,
        gold_pages=list(pages),
        metadata=metadata,
    )


def unanswerable(sid: str = "u1", answer: str | None = "Not answerable") -> Sample:
    return sample(sid, answer, "None", answerable=False, pages=(), sources=["Pure-text"])


def trajectory(answer: str | None, sid: str = "s1") -> Trajectory:
    return Trajectory(sample_id=sid, strategy="full_doc", answer=answer)


def context(model: ScriptedModel) -> JudgeContext:
    return JudgeContext(llm=model, config=JudgeConfig(default_model="scripted/extractor"))


# --------------------------------------------------------------------------- extraction helpers


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("  21% ", "21%"),
        (21, "21"),
        (0.5, "0.5"),
        (["Jun", "Aug"], "['Jun', 'Aug']"),
        ([1, "it's"], '[1, "it\'s"]'),
    ],
)
def test_answer_as_text(value: Any, text: str) -> None:
    assert answer_as_text(value) == text


@pytest.mark.parametrize("value", [None, True, {"a": 1}, ("a",)])
def test_answer_as_text_refuses_other_values(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^expected a string, a number or a list, got \w+$"):
        answer_as_text(value)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Unanswerable", "Not answerable"),
        (" not answerable. ", "Not answerable"),
        ("'NOT ANSWERABLE'", "Not answerable"),
        ("  Paris ", "Paris"),
        ("The question is not answerable", "The question is not answerable"),
        ("Not answerable at all", "Not answerable at all"),
        ("Fail to answer", "Fail to answer"),
    ],
)
def test_canonical_prediction(text: str, canonical: str) -> None:
    assert canonical_prediction(text) == canonical


def test_extraction_schema() -> None:
    parsed = Extraction.model_validate({"answer": ["a", "b"], "format": "List"})
    assert (parsed.answer, parsed.format) == ("['a', 'b']", "List")
    assert Extraction.model_validate({"answer": 3}).format is None
    with pytest.raises(ValueError):
        Extraction.model_validate({"answer": None})


def test_prompt_sees_question_and_response_only() -> None:
    messages = prompt.build_messages(question="Q-TEXT?", response="R-TEXT")
    assert [m.role for m in messages] == ["system", "user"]
    user = messages[1].text
    assert "Question: Q-TEXT?" in user and "Response: R-TEXT" in user
    assert user.startswith(prompt.INSTRUCTIONS)
    assert '"Not answerable"' in prompt.INSTRUCTIONS and '"Fail to answer"' in prompt.INSTRUCTIONS
    assert messages[0].text == prompt.SYSTEM and len(prompt.PROMPT_HASH) == 16


# --------------------------------------------------------------------------- scoring


def test_registered_and_applies_to_samples_with_a_format() -> None:
    scorer = get_scorer("mmlongbench", extract=True)
    assert isinstance(scorer, MMLongBenchScorer) and scorer.extract is True
    assert "mmlongbench" in default_scorer_names(["qa"])
    assert scorer.applies(sample())
    assert not scorer.applies(sample(fmt=None))
    assert not scorer.applies(sample().model_copy(update={"task": "find"}))
    with pytest.raises(TypeError, match="^extract must be true or false, got 'yes'$"):
        MMLongBenchScorer(extract="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "names"),
    [
        (["Chart", "Table"], ["Chart", "Table"]),
        ("['Chart', 'Pure-text (Plain-text)']", ["Chart", "Pure-text (Plain-text)"]),
        (" ('Chart',) ", [" ('Chart',) "]),
        ("[Chart", ["[Chart"]),
        ("Chart", ["Chart"]),
        (("Chart", 3), ["Chart", "3"]),
        (None, []),
    ],
)
def test_evidence_sources(value: Any, names: list[str]) -> None:
    item = sample()
    item.metadata["evidence_sources"] = value
    assert evidence_sources(item) == names


def test_gold_answer() -> None:
    assert gold_answer(sample()) == "21%"
    assert gold_answer(unanswerable(answer=None)) == "Not answerable"
    assert gold_answer(unanswerable(answer="Unanswerable")) == "Not answerable"
    assert gold_answer(sample(answer=None)) is None


async def test_raw_answer_is_scored_as_it_is() -> None:
    row = await MMLongBenchScorer().score(trajectory(" 0.21 "), sample())
    assert row.status == "ok" and row.scorer == "mmlongbench"
    assert row.metrics == {"score": 1.0, "correct": 1.0} and row.outcome == "correct"
    assert row.details["prediction"] == "0.21" and row.details["method"] == "raw"
    assert row.details["gold"] == "21%" and row.details["format"] == "Float"
    assert row.details["n_evidence_pages"] == 1 and row.details["evidence_sources"] == ["Chart"]
    assert row.details["doc_type"] == "Tutorial/Workshop" and row.details["answerable"] is True
    assert "answer" not in row.details
    wordy = await MMLongBenchScorer().score(trajectory("It was 21%."), sample())
    assert wordy.metrics["score"] == 0.0 and wordy.metrics["correct"] == 0.0


async def test_lenient_raw_refusal_becomes_the_benchmark_refusal() -> None:
    lenient = MMLongBenchScorer(profile="lenient")
    row = await lenient.score(trajectory("Unanswerable", "u1"), unanswerable())
    assert row.details["prediction"] == "Not answerable" and row.metrics["score"] == 1.0
    none_gold = await lenient.score(trajectory(None, "u1"), unanswerable(answer=None))
    assert none_gold.details["gold"] == "Not answerable" and none_gold.metrics["score"] == 0.0
    assert none_gold.details["prediction"] == ""


async def test_missing_gold_is_skipped() -> None:
    row = await MMLongBenchScorer().score(trajectory("x"), sample(answer=None))
    assert row.status == "skipped" and row.reason == "no gold answer"


async def test_extraction_through_the_judge() -> None:
    reply = json.dumps({"answer": ["Smartfren", "Esia"], "format": "List"})
    model = ScriptedModel([reply])
    gold = sample(answer="['Esia', 'Smartfren']", fmt="List")
    long_answer = "The two operators are Smartfren and Esia [page=3]."
    row = await MMLongBenchScorer(extract=True).score(
        trajectory(long_answer), gold, judge=context(model)
    )
    assert row.status == "ok" and row.metrics["score"] == 1.0
    assert row.details["prediction"] == "['Smartfren', 'Esia']"
    assert row.details["method"] == "extracted" and row.details["extracted_format"] == "List"
    assert row.details["answer"] == long_answer
    assert row.judges[0].model == "scripted/extractor" and row.judges[0].role == "extractor"
    assert row.judges[0].prompt_hash == prompt.PROMPT_HASH
    assert row.usage["judge.extractor"].calls == 1
    sent = "\n".join(m.text for m in model.requests[0].messages)
    assert long_answer in sent and gold.question in sent
    assert "['Esia', 'Smartfren']" not in sent


async def test_lenient_extracted_refusal_and_number() -> None:
    model = ScriptedModel(['{"answer": "not answerable", "format": "String"}', '{"answer": 21}'])
    scorer = MMLongBenchScorer(extract=True, profile="lenient")
    refused = await scorer.score(trajectory("No idea", "u1"), unanswerable(), judge=context(model))
    assert refused.details["prediction"] == "Not answerable" and refused.metrics["score"] == 1.0
    number = await scorer.score(trajectory("About 21 percent"), sample(), judge=context(model))
    assert number.details["prediction"] == "21" and number.metrics["score"] == 1.0
    assert number.details["extracted_format"] is None


async def test_lenient_empty_answer_fails_to_answer_without_a_call() -> None:
    model = ScriptedModel([])
    row = await MMLongBenchScorer(extract=True, profile="lenient").score(
        trajectory("  "), sample(), judge=context(model)
    )
    assert model.requests == [] and row.judges == []
    assert row.status == "ok" and row.details["prediction"] == FAIL_TO_ANSWER == "Fail to answer"
    assert row.details["method"] == "empty" and row.metrics["score"] == 0.0


async def test_no_judge_skips() -> None:
    scorer = MMLongBenchScorer(extract=True)
    row = await scorer.score(trajectory("21%"), sample())
    assert row.status == "skipped" and row.reason == "no judge context"
    no_model = await scorer.score(trajectory("21%"), sample(), judge=JudgeContext())
    assert no_model.status == "skipped" and "no judge model" in (no_model.reason or "")
    assert no_model.details["answer"] == "21%"


async def test_lenient_judge_failures_are_statuses_not_zeros() -> None:
    scorer = MMLongBenchScorer(extract=True, profile="lenient")
    broken = ScriptedModel([RuntimeError("boom")])
    row = await scorer.score(trajectory("21%"), sample(), judge=context(broken))
    assert row.status == "judge_error" and row.metrics == {"score": None}
    assert "boom" in (row.reason or "") and len(row.judges) == 1
    garbled = ScriptedModel(["no json here", '{"answer": null}'])
    row = await scorer.score(trajectory("21%"), sample(), judge=context(garbled))
    assert row.status == "judge_parse_error" and row.metrics == {"score": None}
    assert row.judges[0].attempts == 2 and "prediction" not in row.details


# --------------------------------------------------------------------------- aggregate


async def _rows() -> list:
    scorer = MMLongBenchScorer(profile="lenient")
    pairs = [
        (trajectory("21%", "a"), sample("a")),  # 1.0, single page, Chart
        (trajectory("Berlim", "b"), sample("b", "Berlin", "Str", pages=(2, 3), doc_type=None)),
        (
            trajectory("Unanswerable", "c"),
            sample("c", "4", "Int", pages=(1, 2), sources=["Table", "Chart"]),
        ),
        (trajectory("Not answerable", "d"), sample("d", "7", "Int")),  # refused answerable
        (trajectory("Unanswerable", "u1"), unanswerable("u1")),  # 1.0
        (trajectory("Not answerabel", "u2"), unanswerable("u2")),  # 12/14, but "answered"
    ]
    rows = [await scorer.score(t, s) for t, s in pairs]
    broken = await MMLongBenchScorer(extract=True, profile="lenient").score(
        trajectory("x", "e"), sample("e"), judge=context(ScriptedModel([RuntimeError("down")]))
    )
    skipped = await scorer.score(trajectory("x", "f"), sample("f", answer=None))
    return [*rows, broken, skipped]


async def test_aggregate_reports_the_official_numbers() -> None:
    rows = await _rows()
    result = MMLongBenchScorer().aggregate(rows, RowGroup("g", "full_doc"), NO_CI)
    assert result.tables["profile"] == "lenient"  # the rows' profile, whatever the scorer's
    triples = [(r.details["gold"], r.details["prediction"], r.metrics["score"]) for r in rows[:6]]
    accuracy, f1 = official_acc_f1(triples)
    m = result.metrics
    assert m["accuracy"].value == pytest.approx(accuracy) and m["f1"].value == pytest.approx(f1)
    assert m["accuracy"].value == pytest.approx((1 + 5 / 6 + 0 + 0 + 1 + 12 / 14) / 6)
    assert m["recall"].value == pytest.approx((1 + 5 / 6) / 4)
    assert m["precision"].value == pytest.approx((1 + 5 / 6) / 3)  # a, b, u2 answered
    assert m["accuracy"].headline and m["f1"].headline
    assert not m["recall"].headline and not m["precision"].headline
    assert (m["accuracy"].n, m["accuracy"].excluded, m["accuracy"].skipped) == (6, 1, 1)
    assert (m["f1"].n, m["f1"].excluded, m["f1"].skipped) == (6, 1, 1)
    assert m["accuracy_single_page"].value == pytest.approx(0.5)  # a, d
    assert m["accuracy_cross_page"].value == pytest.approx(5 / 12)  # b, c
    assert m["accuracy_unanswerable"].value == pytest.approx((1 + 12 / 14) / 2)  # u1, u2
    assert m["accuracy_single_page"].n == 2 and m["accuracy_unanswerable"].n == 2
    sources = result.tables["by_evidence_source"]
    assert list(sources) == ["Chart", "Pure-text", "Table"]
    assert sources["Chart"] == {"n": 4, "accuracy": pytest.approx((1 + 5 / 6) / 4)}
    assert sources["Table"] == {"n": 1, "accuracy": 0.0}
    assert result.tables["by_doc_type"] == {
        "Tutorial/Workshop": {"n": 5, "accuracy": pytest.approx((2 + 12 / 14) / 5)}
    }


async def test_aggregate_without_answerable_items_or_rows() -> None:
    scorer = MMLongBenchScorer(profile="lenient")
    rows = [await scorer.score(trajectory("Unanswerable", "u1"), unanswerable("u1"))]
    result = scorer.aggregate(rows, RowGroup("g", "full_doc"), NO_CI)
    assert result.metrics["accuracy"].value == 1.0
    assert result.metrics["f1"].value == 0.0
    assert result.metrics["recall"].value is None and result.metrics["precision"].value is None
    assert result.metrics["accuracy_cross_page"].value is None
    empty = scorer.aggregate([], RowGroup("g", "full_doc"), NO_CI)
    assert empty.metrics["accuracy"].value is None and empty.metrics["f1"].value is None


async def test_aggregate_intervals() -> None:
    rows = await _rows()
    stats = StatsOptions(n_resamples=200, seed=1)
    result = MMLongBenchScorer().aggregate(rows, RowGroup("g", "full_doc"), stats)
    for name in ("accuracy", "f1"):
        summary = result.metrics[name]
        assert summary.low is not None and summary.high is not None
        assert summary.low <= (summary.value or 0.0) <= summary.high
        assert summary.low < summary.high
