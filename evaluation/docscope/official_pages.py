"""Page localization under the official profile (DocScope's ``score_pages.py``).

Population: every item whose inference succeeded, answerable or not; an item whose model
call failed is left out (a ``skipped`` row). Predicted pages: every page cited in the reply
(:func:`evaluation.docscope.official.official_view`), gold pages: the pages of the item's
evidence boxes. Per item (``page_prf``): with both sets empty P = R = F1 = 1; with no gold
page and some predicted, P = 0, R = 1, F1 = 0; with no predicted page and some gold,
P = 1, R = 0, F1 = 0; otherwise the usual ratios. The summary prints the macro means of those
and the micro P/R/F1 of the summed TP/FP/FN, 0 where a denominator is 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from evaluation.base import (
    Scorer,
    StatsOptions,
    count_column,
    mean_metric,
    metric_values,
    split_rows,
    statistic_metric,
)
from evaluation.docscope.official import inference_skip, official_view
from evaluation.docscope.profiles import OFFICIAL
from evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory


def page_prf(predicted: set[int], gold: set[int]) -> dict[str, float]:
    """TP/FP/FN and precision/recall/F1 of one item with the released edge cases."""
    tp, fp, fn = len(predicted & gold), len(predicted - gold), len(gold - predicted)
    if not gold and not predicted:
        precision = recall = f1 = 1.0
    elif not gold:
        precision, recall, f1 = 0.0, 1.0, 0.0
    elif not predicted:
        precision, recall, f1 = 1.0, 0.0, 0.0
    else:
        precision, recall = tp / len(predicted), tp / len(gold)
        total = precision + recall
        f1 = 2 * precision * recall / total if total > 0 else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def micro(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """Micro precision, recall and F1 of summed counts, 0 where a denominator is 0."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def score_pages(scorer: Scorer, trajectory: Trajectory, sample: Sample) -> ScoreRow:
    view = official_view(trajectory)
    details: dict[str, Any] = {"profile": OFFICIAL, "view": view.source}
    if not view.ok:
        return inference_skip(scorer, trajectory, sample, view)
    predicted, gold = set(view.predicted_pages), set(sample.gold_pages)
    prf = page_prf(predicted, gold)
    return scorer.new_row(
        trajectory,
        sample,
        metrics={
            "precision": prf["precision"],
            "recall": prf["recall"],
            "f1": prf["f1"],
            "recall_complete": 1.0 if prf["fn"] == 0 else 0.0,
        },
        counts={"tp": prf["tp"], "fp": prf["fp"], "fn": prf["fn"]},
        details=details
        | {
            "predicted": sorted(predicted),
            "gold": sorted(gold),
            "correct": sorted(predicted & gold),
            "answerable": sample.answerable,
        },
    )


def aggregate_pages(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
    usable, failed, skipped = split_rows(rows)
    tp, fp, fn = (count_column(usable, k) for k in ("tp", "fp", "fn"))

    def stat(which: int) -> Callable[[np.ndarray], float | None]:
        def compute(idx: np.ndarray) -> float | None:
            return micro(tp[idx].sum(), fp[idx].sum(), fn[idx].sum())[which]

        return compute

    metrics = {
        name: statistic_metric(
            stat(i), len(usable), stats, headline=True, excluded=failed, skipped=skipped
        )
        for i, name in enumerate(("precision", "recall", "f1"))
    }
    macro: dict[str, float] = {}
    for name in ("precision", "recall", "f1"):
        values = metric_values(usable, name)
        summary = mean_metric(values, stats, excluded=failed, skipped=skipped)
        metrics[f"macro_{name}"] = summary
        macro[name] = summary.value if summary.value is not None else 0.0
    sums = {"tp": int(tp.sum()), "fp": int(fp.sum()), "fn": int(fn.sum())}
    p, r, f = micro(sums["tp"], sums["fp"], sums["fn"])
    official: dict[str, Any] = {"n": len(usable)}
    if usable:
        official |= {"macro": macro, "micro": {"precision": p, "recall": r, "f1": f, **sums}}
    return AggregateResult(
        metrics=metrics,
        tables={"counts": sums, "official_summary": official, "inference_errors": skipped},
    )
