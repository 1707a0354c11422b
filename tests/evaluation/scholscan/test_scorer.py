"""ScholScan: golden vectors of the S score (computed by hand) and the extractor judge."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.scholscan.formula import (
    ScholScanConstants,
    ScholScanCounts,
    location_score,
    scholscan_score,
    score_components,
    unrelated_penalty,
)
from scanrag.evaluation.scholscan.scorer import (
    ScholScanScorer,
    gold_explanation,
    render_answer,
    sample_family,
)
from scanrag.llm.scripted import ScriptedModel
from scanrag.schemas import BBox, GoldError, Region, ReportedIssue, Sample, Trajectory
from scanrag.schemas.families import family_code


def counts(
    loc: tuple[int, int, int] = (2, 2, 0),
    rea: tuple[int, int] = (3, 3),
    n: int = 0,
    existence: int = 1,
    contains: int = 1,
) -> dict:
    return {
        "existence": existence,
        "contains_target_error": contains,
        "location": {"gold": loc[0], "hit": loc[1], "extra": loc[2]},
        "reasoning": {"gold": rea[0], "reached": rea[1], "missing": rea[0] - rea[1]},
        "unrelated_errors": n,
    }


def test_perfect_answer_scores_one() -> None:
    assert scholscan_score(counts()) == 1.0


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, 1.0),
        (1, 0.9),
        (2, 0.81),
        (3, 0.81 * math.exp(-0.6)),  # 0.4445374...
        (4, 0.81 * math.exp(-0.6 * 2**1.5)),  # 0.1484392...
    ],
)
def test_unrelated_error_penalty(n: int, expected: float) -> None:
    assert unrelated_penalty(n) == pytest.approx(expected)
    assert scholscan_score(counts(n=n)) == pytest.approx(expected)


def test_penalty_values_spelled_out() -> None:
    assert unrelated_penalty(3) == pytest.approx(0.444537, abs=1e-6)
    with pytest.raises(ValueError):
        unrelated_penalty(-1)


def test_gold_location_zero_with_predictions_scores_zero() -> None:
    # Dice = 0 when gold = 0 < pred, so Loc = 0 and S = 0 whatever the reasoning.
    assert scholscan_score(counts(loc=(0, 0, 2), rea=(2, 2))) == 0.0


def test_gold_location_zero_without_predictions() -> None:
    # gold = pred = 0: Dice = 1, Loc = 1; Rea = (1/2)^2 -> S = sqrt(0.25) = 0.5
    assert scholscan_score(counts(loc=(0, 0, 0), rea=(2, 1))) == pytest.approx(0.5)


def test_both_gold_counts_zero_scores_zero() -> None:
    assert scholscan_score(counts(loc=(0, 0, 0), rea=(0, 0))) == 0.0


def test_partial_location_and_reasoning() -> None:
    # pred = 2, Dice = 2*1/(2+2) = 0.5, over = 1/2 -> 0.8 * 0.25 = 0.2, Loc = 0.3
    # Rea = (2/4)^2 = 0.25 -> S = sqrt(0.075)
    parts = score_components(counts(loc=(2, 1, 1), rea=(4, 2)))
    assert parts["location"] == pytest.approx(0.3)
    assert parts["reasoning"] == pytest.approx(0.25)
    assert parts["S"] == pytest.approx(math.sqrt(0.075))  # 0.27386


def test_location_clipped_at_zero() -> None:
    # Dice = 0, penalty 0.8 * (3/3)^2 -> max(0, -0.8) = 0
    assert scholscan_score(counts(loc=(1, 0, 3))) == 0.0


def test_empty_reasoning_gold_counts_as_one() -> None:
    assert scholscan_score(counts(loc=(1, 1, 0), rea=(0, 0))) == 1.0


def test_existence_or_target_missing_scores_zero() -> None:
    assert scholscan_score(counts(existence=0)) == 0.0
    assert scholscan_score(counts(contains=0)) == 0.0


def test_constants_are_configurable() -> None:
    lenient = ScholScanConstants(lam=0.0)
    assert (
        location_score(ScholScanCounts.model_validate(counts(loc=(2, 1, 1))).location, lenient)
        == 0.5
    )


def test_official_field_spellings_accepted() -> None:
    official = {
        "existance": 1,
        "contains_target_error": 1,
        "location": {"gold_steps": 1, "hit_steps": 1, "extra_steps": 0},
        "reasoning": {"gold_steps": 2, "reached_steps": 2, "missing_steps": 0},
        "unrelated_errors": 0,
    }
    assert scholscan_score(official) == 1.0


@pytest.mark.parametrize(
    "bad",
    [
        counts(loc=(1, 2, 0)),  # hit > gold
        counts(rea=(1, 2)),  # reached > gold
        counts(n=-1),
        counts(existence=2),
        {"existence": 1},  # missing fields
    ],
)
def test_inconsistent_counts_rejected(bad: dict) -> None:
    with pytest.raises(ValidationError):
        ScholScanCounts.model_validate(bad)


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("DHP", "DHP"),
        ("dhp", "DHP"),
        ("E", "DHP"),
        ("I", "LE"),
        ("Research Question & Definitions", "RQD"),
        ("Referential and Citation Alignment;", "RCA"),
        ("Computation & Formulae", "CF"),
        ("unknown family", None),
        (None, None),
        ("", None),
    ],
)
def test_family_code(value: str | None, code: str | None) -> None:
    assert family_code(value) == code


# -- the scorer with a scripted extractor ------------------------------------------------------

GOOD = json.dumps(counts(loc=(2, 1, 1), rea=(4, 2)))
PERFECT = json.dumps(counts())


def sample(
    sid: str = "s1", *, error: bool = True, family: str = "Computation & Formulae"
) -> Sample:
    return Sample(
        id=sid,
        doc_ids=["paper.pdf"],
        question="Check the totals in Table 2 for arithmetic consistency.",
        gold_explanation="Table 2 totals do not add up: 12 + 30 is reported as 52."
        if error
        else None,
        gold_errors=[GoldError(family=family)] if error else [],
        task="error_detection",
        metadata={} if error else {"has_error": False},
    )


def trajectory(
    sid: str = "s1", answer: str | None = "The total in Table 2 is wrong."
) -> Trajectory:
    return Trajectory(
        sample_id=sid,
        strategy="scan",
        answer=answer,
        raw_output="SECRET RAW OUTPUT",
        issues=[
            ReportedIssue(
                description="Sum of Table 2 row is inconsistent",
                family="CF",
                pages=[4],
                locations=[
                    Region(page=4, bbox=BBox.from_list([0, 0, 1, 0.5]), text="12 + 30 = 52")
                ],
                reasoning_steps=["12 + 30 = 42", "the paper says 52"],
            )
        ]
        if answer
        else [],
    )


def context(model: ScriptedModel) -> JudgeContext:
    return JudgeContext(llm=model, config=JudgeConfig(default_model="scripted/extractor"))


def test_render_answer_and_explanation() -> None:
    text = render_answer(trajectory())
    assert text.startswith("The total in Table 2 is wrong.")
    assert "Reported issue 1: Sum of Table 2 row is inconsistent" in text
    assert 'Where: page 4 ("12 + 30 = 52")\n' in text and "Reasoning 2: the paper says 52" in text
    s = sample()
    assert gold_explanation(s) == s.gold_explanation
    s2 = Sample(
        id="x",
        doc_ids=["p.pdf"],
        question="q",
        gold_errors=[GoldError(description="Wrong sum", pages=[3], reasoning_steps=["a", "b"])],
    )
    assert gold_explanation(s2) == "Wrong sum\nLocations: page 3.\nStep 1: a\nStep 2: b"
    assert sample_family(sample()) == "CF"


async def test_scorer_extracts_and_scores() -> None:
    model = ScriptedModel([GOOD])
    row = await ScholScanScorer().score(trajectory(), sample(), judge=context(model))
    assert row.status == "ok"
    assert row.metrics["S"] == pytest.approx(math.sqrt(0.075))
    assert row.metrics["existence_correct"] == 1.0
    assert row.details["family"] == "CF"
    assert row.judges[0].prompt_hash and row.judges[0].model == "scripted/extractor"
    assert row.usage["judge.extractor"].calls == 1
    # The extractor sees Q, E and A only.
    sent = "\n".join(m.text for m in model.requests[0].messages)
    assert "Check the totals in Table 2" in sent and "reported as 52" in sent
    assert "Sum of Table 2 row is inconsistent" in sent
    assert "SECRET RAW OUTPUT" not in sent and "paper.pdf" not in sent


async def test_malformed_json_is_retried_once() -> None:
    model = ScriptedModel(["I think the counts are fine", f"```json\n{PERFECT}\n```"])
    row = await ScholScanScorer().score(trajectory(), sample(), judge=context(model))
    assert row.status == "ok" and row.metrics["S"] == 1.0
    assert row.judges[0].attempts == 2 and len(model.requests) == 2


async def test_inconsistent_counts_count_as_parse_failure() -> None:
    bad = json.dumps(counts(loc=(1, 3, 0)))  # hit > gold
    model = ScriptedModel([bad, "{not json"])
    row = await ScholScanScorer().score(trajectory(), sample(), judge=context(model))
    assert row.status == "judge_parse_error"
    assert "S" not in row.metrics
    assert row.judges[0].attempts == 2


async def test_empty_answer_needs_no_call() -> None:
    model = ScriptedModel([])
    empty = trajectory(answer=None)
    row = await ScholScanScorer().score(empty, sample(), judge=context(model))
    assert row.metrics["S"] == 0.0 and row.metrics["existence_correct"] == 0.0
    negative = await ScholScanScorer().score(empty, sample(error=False), judge=context(model))
    assert negative.metrics == {"existence_correct": 1.0}
    assert model.requests == []


async def test_no_judge_is_skipped() -> None:
    row = await ScholScanScorer().score(trajectory(), sample(), judge=None)
    assert row.status == "skipped"
    row = await ScholScanScorer().score(trajectory(), sample(), judge=JudgeContext())
    assert row.status == "skipped" and "extractor" in (row.reason or "")


async def test_aggregate_means_families_and_existence() -> None:
    scorer = ScholScanScorer()
    negative_reply = json.dumps(counts(loc=(0, 0, 0), rea=(0, 0), existence=0, contains=0, n=1))
    model = ScriptedModel([PERFECT, GOOD, "bad", "still bad", negative_reply])
    rows = [
        await scorer.score(trajectory("a"), sample("a"), judge=context(model)),
        await scorer.score(trajectory("b"), sample("b", family="DHP"), judge=context(model)),
        await scorer.score(trajectory("c"), sample("c"), judge=context(model)),
        await scorer.score(trajectory("d"), sample("d", error=False), judge=context(model)),
    ]
    assert [r.status for r in rows] == ["ok", "ok", "judge_parse_error", "ok"]
    result = scorer.aggregate(rows, None, StatsOptions(n_resamples=0))  # type: ignore[arg-type]
    s = result.metrics["S"]
    # The failed item is excluded, not scored 0; the negative item has no S.
    assert s.value == pytest.approx((1.0 + math.sqrt(0.075)) / 2)
    assert (s.n, s.excluded) == (2, 1)
    assert result.metrics["S.CF"].value == 1.0
    assert result.metrics["S.DHP"].value == pytest.approx(math.sqrt(0.075))
    assert result.metrics["S.LE"].value is None
    assert result.tables["families"]["CF"] == {"S": 1.0, "n": 1}
    assert result.metrics["existence_accuracy_no_error"].value == 0.0
    assert result.metrics["existence_accuracy"].value == pytest.approx(2 / 3)
