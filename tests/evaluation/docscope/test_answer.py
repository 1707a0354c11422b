"""Answer judge scorer and the rules scorer: accuracy on answerable / unanswerable / all."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope import answer_prompt
from scanrag.evaluation.docscope.answer import AnswerRulesScorer, AnswerScorer, says_unanswerable
from scanrag.llm import ModelError

NO_CI = StatsOptions(n_resamples=0)


def test_says_unanswerable() -> None:
    assert says_unanswerable("Unanswerable") and says_unanswerable(" unanswerable. ")
    assert says_unanswerable("Not answerable")
    assert not says_unanswerable("It is unanswerable because X") and not says_unanswerable(None)


async def test_judge_paths_and_accuracies(make_sample, make_traj, make_ctx) -> None:
    scorer = AnswerScorer()
    ctx = make_ctx(
        [
            '{"consistent": true, "reason": "same number"}',
            'Verdict: {"consistent": "false"}',
            "garbage",
            "more garbage",
        ]
    )
    answerable = make_sample(question="Revenue?", answer="12 million")
    unanswerable = make_sample(id="u", answer="Not answerable", answerable=False)
    right = await scorer.score(make_traj(answer="$12M"), answerable, judge=ctx)
    wrong = await scorer.score(make_traj(answer="13 million"), answerable, judge=ctx)
    failed = await scorer.score(make_traj(answer="twelve"), answerable, judge=ctx)
    refused = await scorer.score(make_traj(answer="Unanswerable"), answerable, judge=ctx)
    empty = await scorer.score(make_traj(answer=None), answerable, judge=ctx)
    u_ok = await scorer.score(make_traj(answer="Unanswerable"), unanswerable, judge=ctx)
    u_bad = await scorer.score(make_traj(answer="12"), unanswerable, judge=ctx)
    assert len(ctx.llm.requests) == 4  # rules decide refusals, empties and unanswerable gold
    request = ctx.llm.requests[0]
    assert request.prompt_hash == answer_prompt.PROMPT_HASH
    assert 'Reference answer: "12 million"' in request.messages[-1].text
    assert 'System answer: "$12M"' in request.messages[-1].text
    assert right.metrics["correct"] == 1.0 and wrong.metrics["correct"] == 0.0
    assert failed.status == "judge_parse_error" and failed.metrics["correct"] is None
    assert refused.details["method"] == "refused" and refused.metrics["correct"] == 0.0
    assert empty.details["method"] == "empty_answer"
    assert u_ok.metrics["correct"] == 1.0 and u_bad.metrics["correct"] == 0.0
    rows = [
        r.model_copy(update={"sample_id": f"q{i}"})
        for i, r in enumerate([right, wrong, failed, refused, empty, u_ok, u_bad])
    ]
    out = scorer.aggregate(rows, RowGroup("c", "s"), NO_CI).metrics
    assert out["accuracy_answerable"].value == pytest.approx(1 / 4)
    assert out["accuracy_answerable"].excluded == 1
    assert out["accuracy_unanswerable"].value == pytest.approx(1 / 2)
    assert out["accuracy"].value == pytest.approx(2 / 6) and out["accuracy"].n == 6


async def test_model_error_and_missing_judge(make_sample, make_traj, make_ctx) -> None:
    scorer = AnswerScorer()
    sample = make_sample()
    down = await scorer.score(
        make_traj(answer="twelve"), sample, judge=make_ctx([ModelError("m", "x")])
    )
    assert down.status == "judge_error" and down.metrics["correct"] is None
    none = await scorer.score(make_traj(answer="twelve"), sample, judge=None)
    assert none.status == "skipped"
    same = await scorer.score(make_traj(answer=" 12. "), sample, judge=None)
    assert same.metrics["correct"] == 1.0 and same.details["method"] == "exact_match"
    # unanswerable gold needs no judge at all
    u = make_sample(answer="Not answerable", answerable=False)
    assert (await scorer.score(make_traj(answer="Unanswerable"), u, judge=None)).status == "ok"


def test_rules_scorer(make_sample, make_traj) -> None:
    scorer = AnswerRulesScorer()
    rows = [
        scorer.compute(
            make_traj(sample_id="a", answer="0.21"),
            make_sample(id="a", answer="21%", answer_format="Float"),
        ),
        scorer.compute(
            make_traj(sample_id="b", answer="Paris"),
            make_sample(id="b", answer="Berlin", answer_format="Str"),
        ),
        scorer.compute(
            make_traj(sample_id="c", answer="Not answerable"),
            make_sample(id="c", answer="Not answerable", answerable=False, answer_format="None"),
        ),
        scorer.compute(make_traj(sample_id="d", answer="5"), make_sample(id="d", answer="5")),
    ]
    assert [r.metrics["correct"] for r in rows] == [1.0, 0.0, 1.0, 1.0]
    assert rows[3].details["format"] == "Int"  # inferred
    result = scorer.aggregate(rows, RowGroup("c", "s"), NO_CI)
    assert result.metrics["accuracy"].value == pytest.approx(3 / 4)
    assert result.metrics["accuracy_answerable"].value == pytest.approx(2 / 3)
    assert result.metrics["accuracy_unanswerable"].value == 1.0
    assert result.tables["accuracy_by_format"]["Str"] == {"n": 1, "accuracy": 0.0}
    skipped = scorer.compute(make_traj(answer="x"), make_sample(answer=None))
    assert skipped.status == "skipped"
