"""Page localization: exact page match of the predicted pages P against the gold pages P*.

Per item: TP = |P ∩ P*|, FP = |P − P*|, FN = |P* − P|. The headline is micro-averaged
(P = ΣTP / Σ(TP+FP), R = ΣTP / Σ(TP+FN), F1 = 2PR/(P+R)); macro averages the per-item values.

What the profile decides (:mod:`scanrag.evaluation.docscope.profiles`):

* paper: answerable items with gold pages; P is the trajectory's valid evidence pages; an
  item predicting no page has precision 0; a micro value without a denominator is undefined;
* official (``score_pages.py`` + ``summarize_eval.py``): every item whose inference
  succeeded, a repeated record again, an item missing from the benchmark with no gold pages;
  P is every cited page of the reply; per item both sets empty gives P = R = F1 = 1, no gold
  gives P = 0, R = 1, F1 = 0, no prediction gives P = 1, R = 0, F1 = 0; micro values are 0
  without a denominator; the table ``official_summary`` holds the ``pages`` block of
  ``summarize_eval.py`` (``n``, ``macro``, ``micro`` with the summed counts).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from scanrag.evaluation.base import (
    PureScorer,
    StatsOptions,
    count_column,
    mean_metric,
    metric_values,
    safe_ratio,
    split_rows,
    statistic_metric,
)
from scanrag.evaluation.docscope.profiled import Opening, ProfileBinding, ProfiledScorer
from scanrag.evaluation.docscope.profiles import OFFICIAL, Profile
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory


def page_counts(predicted: Collection[Any], gold: Collection[Any]) -> tuple[int, int, int]:
    """(TP, FP, FN) of a predicted page set against the gold one."""
    p, g = set(predicted), set(gold)
    return len(p & g), len(p - g), len(g - p)


def prf(tp: float, fp: float, fn: float) -> tuple[float | None, float | None, float | None]:
    """Precision, recall, F1 from counts (``None`` where the denominator is 0)."""
    precision = safe_ratio(tp, tp + fp)
    recall = safe_ratio(tp, tp + fn)
    denominator = 2 * tp + fp + fn
    return precision, recall, (2 * tp / denominator if denominator > 0 else None)


def micro(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """Micro precision, recall and F1 of summed counts, 0 where a denominator is 0 (the
    released summary's rule)."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def page_prf(predicted: Collection[Any], gold: Collection[Any]) -> dict[str, float | None]:
    """TP/FP/FN and precision/recall/F1 of one item with the released edge cases."""
    p, g = set(predicted), set(gold)
    tp, fp, fn = page_counts(p, g)
    if not g and not p:
        precision = recall = value = 1.0
    elif not g:
        precision, recall, value = 0.0, 1.0, 0.0
    elif not p:
        precision, recall, value = 1.0, 0.0, 0.0
    else:
        precision, recall = tp / len(p), tp / len(g)
        total = precision + recall
        value = 2 * precision * recall / total if total > 0 else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": value}


def paper_prf(predicted: Collection[Any], gold: Collection[Any]) -> dict[str, float | None]:
    """TP/FP/FN and precision/recall/F1 of one item; precision 0 without a prediction."""
    tp, fp, fn = page_counts(predicted, gold)
    precision, recall, value = prf(tp, fp, fn)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": precision if precision is not None else 0.0,
        "recall": recall,
        "f1": value,
    }


def _page_list(pages: Collection[Any]) -> list[Any]:
    return sorted(pages, key=lambda p: (isinstance(p, str), str(p) if isinstance(p, str) else p))


class PagesScorer(ProfiledScorer, PureScorer):
    name = "pages"
    stage = "page"

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        opening = self.open_item(trajectory, sample, judge)
        if isinstance(opening, ScoreRow):
            return opening
        gold = set(opening.gold.pages)
        if not gold and not opening.profile.scores_without_gold_pages:
            return self.skip(trajectory, sample, "no gold pages", details=opening.details)
        return self._row(trajectory, sample, opening, set(opening.view.pages), gold)

    def _row(
        self, trajectory: Trajectory, sample: Sample, opening: Opening, predicted: set, gold: set
    ) -> ScoreRow:
        released = opening.profile.page_edges == "released"
        rates = page_prf(predicted, gold) if released else paper_prf(predicted, gold)
        details = opening.details | {
            "predicted": _page_list(predicted),
            "gold": _page_list(gold),
            "correct": _page_list(predicted & gold),
        }
        if opening.profile.reads_reply:
            details["answerable"] = sample.answerable
        return self.new_row(
            trajectory,
            sample,
            metrics={
                "precision": rates["precision"],
                "recall": rates["recall"],
                "f1": rates["f1"],
                "recall_complete": 1.0 if rates["fn"] == 0 else 0.0,
            },
            counts={"tp": rates["tp"], "fp": rates["fp"], "fn": rates["fn"]},
            details=details,
        )

    def summarize(
        self, rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        tp, fp, fn = (count_column(usable, k) for k in ("tp", "fp", "fn"))
        rates = micro if profile.page_edges == "released" else prf

        def stat(which: int) -> Callable[[np.ndarray], float | None]:
            def compute(idx: np.ndarray) -> float | None:
                return rates(tp[idx].sum(), fp[idx].sum(), fn[idx].sum())[which]

            return compute

        metrics = {
            name: statistic_metric(
                stat(i), len(usable), stats, headline=True, excluded=failed, skipped=skipped
            )
            for i, name in enumerate(("precision", "recall", "f1"))
        }
        macro: dict[str, float] = {}
        for name in ("precision", "recall", "f1"):
            summary = mean_metric(
                metric_values(usable, name), stats, excluded=failed, skipped=skipped
            )
            metrics[f"macro_{name}"] = summary
            macro[name] = summary.value if summary.value is not None else 0.0
        sums = {"tp": int(tp.sum()), "fp": int(fp.sum()), "fn": int(fn.sum())}
        tables: dict[str, Any] = {"counts": sums}
        if profile.summary_blocks:
            p, r, f = micro(sums["tp"], sums["fp"], sums["fn"])
            block: dict[str, Any] = {"n": len(usable)}
            if usable:
                block |= {"macro": macro, "micro": {"precision": p, "recall": r, "f1": f, **sums}}
            tables["official_summary"] = block
            tables["inference_errors"] = skipped
        return AggregateResult(metrics=metrics, tables=tables)


pages_official = ProfileBinding(PagesScorer, OFFICIAL, "pages_official")

__all__ = ["PagesScorer", "micro", "page_counts", "page_prf", "pages_official", "prf"]
