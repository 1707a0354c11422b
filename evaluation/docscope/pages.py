"""Page localization: exact page match of P against P*, answerable questions only.

Per item: TP = |P ∩ P*|, FP = |P − P*|, FN = |P* − P|. The headline is micro-averaged
(P = ΣTP / Σ(TP+FP), R = ΣTP / Σ(TP+FN), F1 = 2PR/(P+R) = 2ΣTP / (2ΣTP+ΣFP+ΣFN)); macro
averages the per-item values, where an item that predicts no page has precision 0.
An answerable item without gold pages is skipped (there is nothing to localize), and so is
every unanswerable item. ``profile: official`` scores DocScope's released population and
edge cases instead (:mod:`evaluation.docscope.official_pages`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from evaluation.base import (
    PureScorer,
    RowGroup,
    StatsOptions,
    count_column,
    f1,
    mean_metric,
    metric_values,
    safe_ratio,
    split_rows,
    statistic_metric,
)
from evaluation.docscope.common import predicted_pages
from evaluation.docscope.official_pages import aggregate_pages, score_pages
from evaluation.docscope.profiles import (
    OFFICIAL,
    PAPER,
    Profile,
    aggregate_by_profile,
    apply_profile,
    official_twin,
)
from evaluation.judging import JudgeContext
from evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory


def page_counts(predicted: set[int], gold: set[int]) -> tuple[int, int, int]:
    """(TP, FP, FN) of a predicted page set against the gold one."""
    tp = len(predicted & gold)
    return tp, len(predicted - gold), len(gold - predicted)


def prf(tp: float, fp: float, fn: float) -> tuple[float | None, float | None, float | None]:
    """Precision, recall, F1 from counts (``None`` where the denominator is 0)."""
    precision = safe_ratio(tp, tp + fp)
    recall = safe_ratio(tp, tp + fn)
    denominator = 2 * tp + fp + fn
    return precision, recall, (2 * tp / denominator if denominator > 0 else None)


class PagesScorer(PureScorer):
    name = "pages"
    profile: Profile = PAPER

    def __init__(self, profile: Profile = PAPER) -> None:
        apply_profile(self, profile)

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if self.profile == OFFICIAL:
            return score_pages(self, trajectory, sample)
        if not sample.answerable:
            return self.skip(trajectory, sample, "unanswerable question: no page metric")
        if not sample.gold_pages:
            return self.skip(trajectory, sample, "no gold pages")
        predicted = predicted_pages(trajectory)
        gold = set(sample.gold_pages)
        tp, fp, fn = page_counts(predicted, gold)
        precision, recall, f1_value = prf(tp, fp, fn)
        return self.new_row(
            trajectory,
            sample,
            metrics={
                "precision": precision if precision is not None else 0.0,
                "recall": recall,
                "f1": f1_value,
                "recall_complete": 1.0 if fn == 0 else 0.0,
            },
            counts={"tp": tp, "fp": fp, "fn": fn},
            details={
                "profile": PAPER,
                "predicted": sorted(predicted),
                "gold": sorted(gold),
                "correct": sorted(predicted & gold),
            },
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        return aggregate_by_profile(
            rows,
            self.profile,
            lambda kept: self._paper(kept, stats),
            lambda kept: aggregate_pages(kept, stats),
        )

    @staticmethod
    def _paper(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        tp, fp, fn = (count_column(usable, k) for k in ("tp", "fp", "fn"))

        def micro(which: int) -> Callable[[np.ndarray], float | None]:
            def stat(idx: np.ndarray) -> float | None:
                return prf(tp[idx].sum(), fp[idx].sum(), fn[idx].sum())[which]

            return stat

        metrics = {
            "precision": statistic_metric(
                micro(0), len(usable), stats, headline=True, excluded=failed, skipped=skipped
            ),
            "recall": statistic_metric(
                micro(1), len(usable), stats, headline=True, excluded=failed, skipped=skipped
            ),
            "f1": statistic_metric(
                micro(2), len(usable), stats, headline=True, excluded=failed, skipped=skipped
            ),
        }
        for name in ("precision", "recall", "f1"):
            values = metric_values(usable, name)
            metrics[f"macro_{name}"] = mean_metric(values, stats, excluded=failed, skipped=skipped)
        return AggregateResult(
            metrics=metrics,
            tables={"counts": {"tp": int(tp.sum()), "fp": int(fp.sum()), "fn": int(fn.sum())}},
        )


PagesOfficialScorer = official_twin(PagesScorer, "pages_official")


__all__ = ["PagesOfficialScorer", "PagesScorer", "f1", "page_counts", "prf"]
