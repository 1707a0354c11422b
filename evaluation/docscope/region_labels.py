"""The region judge's labels: the tolerant reply schema (paper profile) and the counts a page's
labels add to the region metrics.

With h = covered (strict) or covered + imprecise (lenient) and n_pred the predicted boxes of
a page, summed over items and pages: R = Σh / Σ|G|, P = Σ min(h, n_pred) / Σ n_pred.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, JsonValue, field_validator

from scanrag.evaluation.base import safe_ratio

RegionLabel = Literal["covered", "imprecise", "not_covered"]
LABELS: tuple[str, ...] = ("covered", "imprecise", "not_covered")
ROLE = "region"
_ID_NUMBER = re.compile(r"(\d+)")
# A gold item's id is short (``g2``, ``GOLD[2]``): the schema says so, which sizes the judge's
# token cap (:mod:`scanrag.evaluation.reply_budget`) and bounds a constrained reply.
ID_HINT: dict[str, JsonValue] = {"maxLength": 24}


def normalize_label(value: object) -> str:
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    return {"notcovered": "not_covered", "uncovered": "not_covered"}.get(text, text)


class RegionItem(BaseModel):
    id: str | int = Field(json_schema_extra=ID_HINT)
    label: RegionLabel
    reason: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: object) -> str:
        return normalize_label(value)


class RegionJudgment(BaseModel):
    items: list[RegionItem]


def gold_index(value: str | int) -> int | None:
    """0-based gold index from ``GOLD[2]``, ``g2``, ``"2"`` or ``2`` (all → 1)."""
    if isinstance(value, int):
        return value - 1
    match = _ID_NUMBER.search(value)
    return int(match.group(1)) - 1 if match else None


def labels_from(judgment: RegionJudgment, n_gold: int) -> list[str]:
    """One label per gold box, in order; ``ValueError`` if any is missing or repeated."""
    labels: list[str | None] = [None] * n_gold
    indices = [gold_index(item.id) for item in judgment.items]
    if all(i is None for i in indices) and len(judgment.items) == n_gold:
        return [item.label for item in judgment.items]  # ids unusable: take them in order
    for index, item in zip(indices, judgment.items, strict=True):
        if index is None or not 0 <= index < n_gold:
            raise ValueError(f"unknown gold id {item.id!r}; expected GOLD[1]..GOLD[{n_gold}]")
        if labels[index] is not None and labels[index] != item.label:
            raise ValueError(f"gold id {item.id!r} labelled twice")
        labels[index] = item.label
    missing = [f"GOLD[{i + 1}]" for i, label in enumerate(labels) if label is None]
    if missing:
        raise ValueError(f"no label for {', '.join(missing)}")
    return [label for label in labels if label is not None]


def region_counts(labels: Sequence[str], n_pred: int) -> dict[str, float]:
    """Additive counts of one page: label counts and the capped hits."""
    covered = sum(1 for label in labels if label == "covered")
    imprecise = sum(1 for label in labels if label == "imprecise")
    return {
        "gold": len(labels),
        "n_pred": n_pred,
        "covered": covered,
        "imprecise": imprecise,
        "not_covered": len(labels) - covered - imprecise,
        "hit_strict_capped": min(covered, n_pred),
        "hit_lenient_capped": min(covered + imprecise, n_pred),
    }


def region_prf(counts: dict[str, float], mode: str) -> tuple[float | None, float | None]:
    """(precision, recall) of summed counts; ``mode`` is ``strict`` or ``lenient``."""
    hits = counts["covered"] + (counts["imprecise"] if mode == "lenient" else 0)
    capped = counts[f"hit_{mode}_capped"]
    return safe_ratio(capped, counts["n_pred"]), safe_ratio(hits, counts["gold"])
