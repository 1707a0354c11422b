"""ContextCheck's label set, error taxonomy and judge meta-evaluation (spec §5).

Labels: Attributable / Not Attributable / Contradicted, scored binary (Attributable = 1).
Error types R1–R14 group into seven criteria C1–C7 (ContextCheck, Tables 11–13).

Meta-evaluation of a faithfulness judge against gold sentence labels reports Macro-F1 and
balanced accuracy, each as the point estimate, the 95% percentile interval of 1,000 paired
(gold, prediction) bootstrap resamples, and the interval's midpoint — ContextCheck's
stabilized estimate. With rewritten (decontextualized) twins, the debiased rule applies: a
base prediction that is right on the ambiguous sentence but wrong on its twin counts as wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

import numpy as np
from pydantic import BaseModel

from scanrag.evaluation.stats import BootstrapResult, bootstrap_statistic
from scanrag.evaluation.stats_agreement import balanced_accuracy, macro_f1


class Label(StrEnum):
    ATTRIBUTABLE = "Attributable"
    NOT_ATTRIBUTABLE = "Not Attributable"
    CONTRADICTED = "Contradicted"


def parse_label(value: object) -> Label:
    """Read a label from loose spellings ("not_attributable", "CONTRADICTED", True/1)."""
    if isinstance(value, Label):
        return value
    if isinstance(value, bool | int) and value in (0, 1):
        return Label.ATTRIBUTABLE if value else Label.NOT_ATTRIBUTABLE
    if not isinstance(value, str):
        raise ValueError(f"not a faithfulness label: {value!r}")
    simple = "".join(ch for ch in value.lower() if ch.isalpha())
    for label in Label:
        if simple == label.value.lower().replace(" ", ""):
            return label
    if simple in {"supported", "entailed", "faithful", "yes"}:
        return Label.ATTRIBUTABLE
    if simple in {"unsupported", "notsupported", "no"}:
        return Label.NOT_ATTRIBUTABLE
    if simple in {"refuted", "contradiction", "contradicts"}:
        return Label.CONTRADICTED
    raise ValueError(
        f"not a faithfulness label: {value!r}; expected one of {[lb.value for lb in Label]}"
    )


def binary(label: object) -> int:
    """Attributable = 1; Not Attributable and Contradicted = 0."""
    return int(parse_label(label) is Label.ATTRIBUTABLE)


# Short names of the 14 error types; the paper's Table 11 gives one-line definitions.
ERROR_TYPES: dict[str, str] = {
    "R1": "Direct contradiction/opposition",
    "R2": "Quantitative/measurement errors",
    "R3": "Temporal/spatial/sequential inconsistencies",
    "R4": "Scope expansion/over-generalization",
    "R5": "Unsupported specification/concretization",
    "R6": "Logical relationship errors",
    "R7": "Invented mechanism/process/explanation",
    "R8": "Entity/attribute/source misidentification",
    "R9": "Normative/prescriptive claims added",
    "R10": "Modality/intensity/frequency alteration",
    "R11": "Subjective value judgment added",
    "R12": "External knowledge enrichment",
    "R13": "Context/qualifier/emphasis alteration",
    "R14": "Invalid logical inference/composition",
}

CRITERIA: dict[str, str] = {
    "C1": "Scope & Quantification",
    "C2": "Causality & Logic",
    "C3": "Certainty & Modality",
    "C4": "Context & Qualifiers",
    "C5": "Subjective & Normative Claims",
    "C6": "Temporal & Spatial Consistency",
    "C7": "Entity Integrity",
}

# Table 13: which criterion each error type falls under.
CRITERION_OF: dict[str, str] = {
    "R4": "C1",
    "R5": "C1",
    "R6": "C2",
    "R14": "C2",
    "R10": "C3",
    "R13": "C4",
    "R7": "C5",
    "R9": "C5",
    "R11": "C5",
    "R3": "C6",
    "R1": "C7",
    "R2": "C7",
    "R8": "C7",
    "R12": "C7",
}


def normalize_error_type(value: str | None) -> str | None:
    """ "r5", "R5.", "R5: Unsupported ..." -> "R5"; ``None`` for empty; ValueError if unknown."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip().upper()
    digits = ""
    if text.startswith("R"):
        for ch in text[1:]:
            if not ch.isdigit():
                break
            digits += ch
    code = f"R{int(digits)}" if digits else ""
    if code not in ERROR_TYPES:
        raise ValueError(f"unknown error type {value!r}; expected R1–R14")
    return code


# -- meta-evaluation -------------------------------------------------------------------------


class MetaEvaluation(BaseModel):
    """Agreement of a faithfulness judge with gold sentence labels."""

    n: int
    macro_f1: BootstrapResult
    balanced_accuracy: BootstrapResult
    debiased: bool
    flipped: int  # base predictions turned wrong by the debiased rule


def debias(
    pred: Sequence[int], gold: Sequence[int], rewritten: Mapping[int, int]
) -> tuple[list[int], int]:
    """ContextCheck eq. 4: ŷ_d = 1 − y where ŷ_a = y but ŷ_r ≠ y, else ŷ_a."""
    out = list(pred)
    flipped = 0
    for i, twin in rewritten.items():
        if not 0 <= i < len(out):
            raise IndexError(f"rewritten twin for sentence {i}, but only {len(out)} sentences")
        if out[i] == gold[i] and twin != gold[i]:
            out[i] = 1 - gold[i]
            flipped += 1
    return out, flipped


def meta_evaluate(
    pred_labels: Sequence[object],
    gold_labels: Sequence[object],
    rewritten_pairs: Mapping[int, object] | Sequence[tuple[int, object]] | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> MetaEvaluation:
    """Macro-F1 and balanced accuracy of judge labels against gold labels.

    Labels may be the three label names or 0/1. ``rewritten_pairs`` maps a sentence index to
    the judge's label on that sentence's rewritten twin; when given, the debiased rule is
    applied before scoring. Intervals come from paired resampling of (gold, prediction).
    """
    if len(pred_labels) != len(gold_labels):
        raise ValueError(
            f"predicted and gold labels differ in length: {len(pred_labels)} vs {len(gold_labels)}"
        )
    pred = [binary(p) for p in pred_labels]
    gold = [binary(g) for g in gold_labels]
    flipped = 0
    if rewritten_pairs is not None:
        pairs = (
            dict(rewritten_pairs) if not isinstance(rewritten_pairs, Mapping) else rewritten_pairs
        )
        pred, flipped = debias(pred, gold, {int(i): binary(v) for i, v in pairs.items()})
    gold_arr, pred_arr = np.asarray(gold), np.asarray(pred)

    def on(metric: Callable[[list[int], list[int]], float | None]) -> BootstrapResult:
        return bootstrap_statistic(
            lambda idx: metric(gold_arr[idx].tolist(), pred_arr[idx].tolist()),
            len(gold),
            n_resamples=n_resamples,
            seed=seed,
        )

    return MetaEvaluation(
        n=len(gold),
        macro_f1=on(macro_f1),
        balanced_accuracy=on(balanced_accuracy),
        debiased=rewritten_pairs is not None,
        flipped=flipped,
    )
