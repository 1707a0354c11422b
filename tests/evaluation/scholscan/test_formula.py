"""ScholScan's S formula (spec §3, paper eq. 1–6): the edges the golden vectors in
test_scholscan.py leave out, each worked out by hand."""

from __future__ import annotations

import dataclasses
import math

import pytest
from pydantic import ValidationError

from scanrag.evaluation.scholscan.formula import (
    OFFICIAL,
    LocationCounts,
    ReasoningCounts,
    ScholScanConstants,
    ScholScanCounts,
    location_score,
    reasoning_score,
    scholscan_score,
    score_components,
    unrelated_penalty,
)


def test_official_constants() -> None:
    assert dataclasses.astuple(OFFICIAL) == (0.8, 2.0, 2.0, 0.9, 0.6, 1.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        OFFICIAL.lam = 0.0  # type: ignore[misc]


def test_missing_steps_are_recomputed() -> None:
    rea = ReasoningCounts.model_validate({"gold": 5, "reached": 2, "missing": 0})
    assert rea.missing == 3
    assert LocationCounts(gold=3, hit=1, extra=2).pred == 3


def test_no_location_predicted_for_a_gold_location() -> None:
    # gold 2, nothing predicted: Dice = 0, no over-reporting (0 / max(0, 1)) -> Loc = 0.
    assert location_score(LocationCounts(gold=2, hit=0, extra=0)) == 0.0


def test_location_without_extras_is_plain_dice() -> None:
    # Dice = 2 * 1 / (3 + 1) = 0.5, nothing extra.
    assert location_score(LocationCounts(gold=3, hit=1, extra=0)) == 0.5


def test_location_penalty_uses_lambda_and_p() -> None:
    loc = LocationCounts(gold=4, hit=2, extra=2)  # Dice = 4 / 8 = 0.5, over = 2 / 4
    assert location_score(loc) == pytest.approx(0.5 - 0.8 * 0.25)
    assert location_score(loc, ScholScanConstants(lam=0.4, p=1.0)) == pytest.approx(0.3)


def test_reasoning_score_exponent() -> None:
    rea = ReasoningCounts(gold=3, reached=2)
    assert reasoning_score(rea) == pytest.approx(4 / 9)
    assert reasoning_score(rea, ScholScanConstants(beta=1.0)) == pytest.approx(2 / 3)
    assert reasoning_score(ReasoningCounts(gold=2, reached=0)) == 0.0


def test_penalty_constants() -> None:
    custom = ScholScanConstants(mu=0.5, gamma=1.0, q=1.0)
    assert unrelated_penalty(2, custom) == 0.25
    assert unrelated_penalty(3, custom) == pytest.approx(0.25 * math.exp(-1.0))
    assert unrelated_penalty(5, custom) == pytest.approx(0.25 * math.exp(-3.0))


def full(**over: object) -> dict:
    base: dict = {
        "existence": 1,
        "contains_target_error": 1,
        "location": {"gold": 2, "hit": 1, "extra": 0},
        "reasoning": {"gold": 2, "reached": 1},
        "unrelated_errors": 1,
    }
    return base | over


def test_components_of_one_item() -> None:
    # Loc = 2 / 3, Rea = 1 / 4, pen = 0.9 -> S = sqrt(1 / 6) * 0.9
    parts = score_components(full())
    assert set(parts) == {"S", "location", "reasoning", "penalty"}
    assert parts["location"] == pytest.approx(2 / 3)
    assert parts["reasoning"] == pytest.approx(0.25)
    assert parts["penalty"] == pytest.approx(0.9)
    assert parts["S"] == pytest.approx(math.sqrt(1 / 6) * 0.9)
    assert scholscan_score(ScholScanCounts.model_validate(full())) == parts["S"]


def test_only_one_empty_gold_count_still_scores() -> None:
    # Location gold 0 but reasoning gold 2: not the "both empty" zero; Loc = 1, Rea = 1.
    counts = full(location={"gold": 0, "hit": 0, "extra": 0}, reasoning={"gold": 2, "reached": 2})
    assert scholscan_score(counts, ScholScanConstants()) == pytest.approx(0.9)
    # Reasoning gold 0 but a location to find: Rea = 1, Loc = Dice = 2/3.
    counts = full(reasoning={"gold": 0, "reached": 0}, unrelated_errors=0)
    assert scholscan_score(counts) == pytest.approx(math.sqrt(2 / 3))


def test_existence_spellings_and_flags() -> None:
    data = full()
    del data["existence"]
    assert ScholScanCounts.model_validate(data | {"exist": 1}).existence == 1
    assert ScholScanCounts.model_validate(data | {"existance": 0}).existence == 0
    with pytest.raises(ValidationError):
        ScholScanCounts.model_validate(full(contains_target_error=2))
    with pytest.raises(ValidationError):
        ScholScanCounts.model_validate(full(contains_target_error=-1))
    assert scholscan_score(full(existence=0)) == 0.0
    assert scholscan_score(full(contains_target_error=0)) == 0.0
