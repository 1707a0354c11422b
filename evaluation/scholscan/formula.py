"""ScholScan's end-to-end score S from the extractor's integer counts (spec §3, paper eq. 1–6).

Pure arithmetic, no judge. The constants are those of the official evaluation code
(``evaluation/evaluation_cal.py`` of the ScholScan repository): λ = 0.8, P = 2, β = 2,
μ = 0.9, γ = 0.6, q = 1.5.

    pred = hit + extra
    Dice = 2·hit / (gold + pred)      (1 if gold = pred = 0; 0 if gold = 0 < pred)
    Loc  = max(0, Dice − λ·(extra / max(pred, 1))^P)
    Rea  = (reached / gold)^β         (1 if gold = 0)
    pen  = μ^n if n ≤ 2 else μ²·exp(−γ·(n − 2)^q)
    S    = sqrt(Loc·Rea)·pen, and S = 0 when existence = 0, contains_target_error = 0,
           or location gold = reasoning gold = 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, NonNegativeInt, model_validator


@dataclass(frozen=True)
class ScholScanConstants:
    """The score's constants; the defaults are the official ones."""

    lam: float = 0.8  # λ, weight of the over-reporting penalty in Loc
    p: float = 2.0  # P, exponent of the over-reporting fraction
    beta: float = 2.0  # β, exponent of the reasoning prefix ratio
    mu: float = 0.9  # μ, per-item decay for up to two unrelated errors
    gamma: float = 0.6  # γ, rate of the exponential decay beyond two
    q: float = 1.5  # q, exponent of the excess count


OFFICIAL = ScholScanConstants()


class LocationCounts(BaseModel):
    """Evidence locations of the target error: gold, predicted-and-matching, predicted-extra."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    gold: NonNegativeInt = Field(validation_alias=AliasChoices("gold", "gold_steps"))
    hit: NonNegativeInt = Field(validation_alias=AliasChoices("hit", "hit_steps"))
    extra: NonNegativeInt = Field(validation_alias=AliasChoices("extra", "extra_steps"))

    @model_validator(mode="after")
    def _hit_within_gold(self) -> Self:
        if self.hit > self.gold:
            raise ValueError(f"location hit ({self.hit}) exceeds gold ({self.gold})")
        return self

    @property
    def pred(self) -> int:
        return self.hit + self.extra


class ReasoningCounts(BaseModel):
    """Reasoning steps of the target error: gold chain length and the matched prefix.

    ``missing`` is redundant (gold − reached); it is recomputed, never trusted.
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    gold: NonNegativeInt = Field(validation_alias=AliasChoices("gold", "gold_steps"))
    reached: NonNegativeInt = Field(validation_alias=AliasChoices("reached", "reached_steps"))

    @model_validator(mode="after")
    def _reached_within_gold(self) -> Self:
        if self.reached > self.gold:
            raise ValueError(f"reasoning reached ({self.reached}) exceeds gold ({self.gold})")
        return self

    @property
    def missing(self) -> int:
        return self.gold - self.reached


class ScholScanCounts(BaseModel):
    """What the extractor judge returns for one answer (field names as in our prompt;
    the official spellings ``existance`` and ``*_steps`` are accepted too)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    existence: int = Field(
        ge=0, le=1, validation_alias=AliasChoices("existence", "existance", "exist")
    )
    contains_target_error: int = Field(ge=0, le=1)
    location: LocationCounts
    reasoning: ReasoningCounts
    unrelated_errors: NonNegativeInt


def _counts(counts: ScholScanCounts | Mapping[str, Any]) -> ScholScanCounts:
    if isinstance(counts, ScholScanCounts):
        return counts
    return ScholScanCounts.model_validate(counts)


def location_score(loc: LocationCounts, c: ScholScanConstants = OFFICIAL) -> float:
    """Dice of predicted vs gold locations minus the squared over-reporting penalty."""
    pred = loc.pred
    if loc.gold == 0:  # no gold location: perfect only when nothing is predicted either
        return 1.0 if pred == 0 else 0.0
    dice = 2.0 * loc.hit / (loc.gold + pred)
    over = loc.extra / max(pred, 1)
    return max(0.0, dice - c.lam * over**c.p)


def reasoning_score(rea: ReasoningCounts, c: ScholScanConstants = OFFICIAL) -> float:
    """(reached / gold)^β, or 1 when the gold chain is empty."""
    if rea.gold == 0:
        return 1.0
    return float((rea.reached / rea.gold) ** c.beta)


def unrelated_penalty(n: int, c: ScholScanConstants = OFFICIAL) -> float:
    """μ^n for n ≤ 2, then μ²·exp(−γ·(n − 2)^q)."""
    if n < 0:
        raise ValueError(f"unrelated error count must be non-negative; got {n}")
    if n <= 2:
        return float(c.mu**n)
    return float(c.mu**2 * math.exp(-c.gamma * (n - 2) ** c.q))


def scholscan_score(
    counts: ScholScanCounts | Mapping[str, Any], constants: ScholScanConstants = OFFICIAL
) -> float:
    """The item score S ∈ [0, 1] from the extractor counts."""
    m = _counts(counts)
    if m.existence == 0 or m.contains_target_error == 0:
        return 0.0
    if m.location.gold == 0 and m.reasoning.gold == 0:
        return 0.0
    loc, rea = location_score(m.location, constants), reasoning_score(m.reasoning, constants)
    core = math.sqrt(loc * rea)
    return core * unrelated_penalty(m.unrelated_errors, constants)


def score_components(
    counts: ScholScanCounts | Mapping[str, Any], constants: ScholScanConstants = OFFICIAL
) -> dict[str, float]:
    """S with its parts (location, reasoning, penalty), for the per-item score row."""
    m = _counts(counts)
    return {
        "S": scholscan_score(m, constants),
        "location": location_score(m.location, constants),
        "reasoning": reasoning_score(m.reasoning, constants),
        "penalty": unrelated_penalty(m.unrelated_errors, constants),
    }
