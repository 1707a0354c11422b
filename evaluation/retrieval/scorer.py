"""Retrieval recall@k of each trajectory's ``retrieve`` steps against the gold pages.

``retrieval`` scores what a strategy retrieved, next to what it finally cited (``pages``):
the pages of its ``retrieve`` steps in rank order (later steps appended, repeats counted once)
against the sample's gold pages. Per item: ``recall@k`` for each k of ``ks`` and ``mrr@k`` at
``mrr_k``; the aggregates are their means over items (macro, as ScholScan and
``scanrag retrieve eval`` report them) with bootstrap intervals, ``recall@<headline_k>`` as
the headline, and a ``curve`` table of macro recall@k for k = 1 .. the longest ranking (at
most :data:`MAX_K`) for plots.

Items without gold pages are skipped; so are items of a cell without a retriever. An item of
a cell with a retriever whose trajectory holds no ranking (it failed before retrieving) counts
as recall 0, like every error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scanrag.evaluation.base import PureScorer, RowGroup, StatsOptions, mean_metric, split_rows
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.retrieval.metrics import mrr_at_k, recall_at_k
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory

MAX_K = 20


def ranked_pages(trajectory: Trajectory) -> list[int] | None:
    """Pages of the ``retrieve`` steps in rank order, or ``None`` when there is none."""
    ranked: list[int] = []
    found = False
    for step in trajectory.steps:
        hits = step.data.get("hits") if step.kind == "retrieve" else None
        if not isinstance(hits, list):
            continue
        found = True
        ordered = sorted(
            (h for h in hits if isinstance(h, dict) and isinstance(h.get("page"), int)),
            key=lambda h: h.get("rank", 0),
        )
        ranked += [h["page"] for h in ordered if h["page"] not in ranked]
    return ranked if found else None


class RetrievalScorer(PureScorer):
    """Recall@k and MRR@k of the retrieved pages against the gold pages."""

    name = "retrieval"
    tasks = frozenset({"qa", "error_detection"})

    def __init__(
        self, ks: Sequence[int] = (1, 3, 5, 10), mrr_k: int = 5, headline_k: int = 5
    ) -> None:
        values = [*ks, mrr_k, headline_k]
        if not ks or any(not isinstance(k, int) or k < 1 for k in values):
            raise ValueError(f"k values must be positive integers, got {values}")
        self.ks = tuple(sorted(set(ks) | {headline_k}))
        self.mrr_k = mrr_k
        self.headline_k = headline_k

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        gold = sorted(set(sample.gold_pages))
        if not sample.answerable or not gold:
            return self.skip(trajectory, sample, "no gold pages")
        ranked = ranked_pages(trajectory)
        if ranked is None:
            if not trajectory.metadata.get("retriever"):
                return self.skip(trajectory, sample, "no retrieval in this grid cell")
            ranked = []
        metrics: dict[str, float | None] = {
            f"recall@{k}": recall_at_k(ranked, gold, k) for k in self.ks
        }
        metrics[f"mrr@{self.mrr_k}"] = mrr_at_k(ranked, gold, self.mrr_k)
        details = {"ranked": ranked[:MAX_K], "gold": gold}
        return self.new_row(trajectory, sample, metrics=metrics, details=details)

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        names = [f"recall@{k}" for k in self.ks] + [f"mrr@{self.mrr_k}"]
        result = AggregateResult()
        if not usable:
            return result
        for name in names:
            values = [v for r in usable if (v := r.metrics.get(name)) is not None]
            result.metrics[name] = mean_metric(
                values,
                stats,
                excluded=failed,
                skipped=skipped,
                headline=name == f"recall@{self.headline_k}",
            )
        result.tables["curve"] = recall_curve(usable)
        return result


def recall_curve(rows: Sequence[ScoreRow]) -> dict[str, Any]:
    """Macro recall@k for k = 1 .. the longest stored ranking (at most :data:`MAX_K`)."""
    pairs = [(r.details.get("ranked") or [], r.details.get("gold") or []) for r in rows]
    pairs = [(ranked, gold) for ranked, gold in pairs if gold]
    if not pairs:
        return {}
    longest = min(MAX_K, max(1, max(len(ranked) for ranked, _ in pairs)))
    return {
        str(k): sum(recall_at_k(ranked, gold, k) for ranked, gold in pairs) / len(pairs)
        for k in range(1, longest + 1)
    }
