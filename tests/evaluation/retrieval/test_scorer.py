"""The retrieval scorer: recall@k and MRR@k of the retrieve steps, skips, errors count as 0."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.retrieval.scorer import RetrievalScorer, ranked_pages, recall_curve
from scanrag.schemas import Sample, Status, Step, Trajectory


def sample(gold: list[int], answerable: bool = True) -> Sample:
    return Sample(
        id="q", doc_ids=["d.pdf"], question="?", answer="1", gold_pages=gold, answerable=answerable
    )


def retrieve(*pages: int, index: int = 0) -> Step:
    hits = [{"page": p, "rank": r, "score": 1.0 / r} for r, p in enumerate(pages, start=1)]
    return Step(index=index, kind="retrieve", data={"hits": list(reversed(hits))})


def traj(*steps: Step, retriever: str | None = "bm25", **kw) -> Trajectory:
    meta = {"retriever": retriever} if retriever else {}
    return Trajectory(sample_id="q", strategy="s", steps=list(steps), metadata=meta, **kw)


def test_rankings_follow_rank_order_and_append_later_steps() -> None:
    t = traj(retrieve(4, 2, 9), Step(index=1, kind="read"), retrieve(2, 7, index=2))
    assert ranked_pages(t) == [4, 2, 9, 7]
    assert ranked_pages(traj()) is None


def test_recall_and_mrr_per_item() -> None:
    scorer = RetrievalScorer(ks=(1, 3), mrr_k=5, headline_k=2)
    row = scorer.compute(traj(retrieve(4, 2, 9)), sample([2, 9]))
    assert row.metrics == {
        "recall@1": 0.0,
        "recall@2": 0.5,
        "recall@3": 1.0,
        "mrr@5": pytest.approx(0.5),
    }
    assert row.details == {"ranked": [4, 2, 9], "gold": [2, 9]}


def test_skips_and_errors() -> None:
    scorer = RetrievalScorer()
    assert scorer.compute(traj(retrieve(1)), sample([])).status == "skipped"
    assert scorer.compute(traj(retrieve(1)), sample([1], answerable=False)).status == "skipped"
    assert scorer.compute(traj(retriever=None), sample([1])).reason == (
        "no retrieval in this grid cell"
    )
    failed = traj(status=Status.RETRIEVER_ERROR)  # the cell retrieves, this item never did
    row = scorer.compute(failed, sample([1]))
    assert row.status == "ok" and row.metrics["recall@5"] == 0.0 and row.outcome == "error"
    with pytest.raises(ValueError, match="positive integers"):
        RetrievalScorer(ks=(0, 5))


def test_aggregate_macro_means_headline_and_curve() -> None:
    scorer = RetrievalScorer(ks=(1, 5))
    rows = [
        scorer.compute(traj(retrieve(1, 2)), sample([1])),
        scorer.compute(traj(retrieve(3, 1)), sample([1, 2])),
    ]
    result = scorer.aggregate(rows, RowGroup("c", "s"), StatsOptions(n_resamples=0))
    assert result.metrics["recall@1"].value == pytest.approx(0.5)
    assert result.metrics["recall@5"].value == pytest.approx(0.75)
    assert [n for n, m in result.metrics.items() if m.headline] == ["recall@5"]
    assert result.tables["curve"] == {"1": 0.5, "2": 0.75}
    assert recall_curve([]) == {}
