"""Retrieval metrics against gold pages: Recall, Precision, Hit, MRR and nDCG at k.

Pure functions over a ranked list of keys (page numbers, or ``(doc_id, page)`` pairs) and a
collection of gold keys, with binary relevance. Repeated keys in a ranking count once, at
their first position. With ``R`` = the first ``k`` distinct retrieved keys and ``G`` the gold:

* Recall@k = |R ∩ G| / |G|
* Precision@k = |R ∩ G| / |R|: precision of what was returned; it equals the textbook
  |R ∩ G| / k whenever k items came back, and does not punish a 3-page document at k = 5.
  Nothing retrieved gives 0.
* Hit@k = 1 if R ∩ G is not empty
* MRR@k = 1 / (position of the first gold key in R), 0 if none
* nDCG@k = DCG / IDCG with DCG = Σ_{i: r_i ∈ G} 1 / log2(i + 1) over positions i = 1..k and
  IDCG the DCG of a perfect ranking, Σ_{i=1..min(|G|, k)} 1 / log2(i + 1).

``evaluate_retrieval`` scores many questions: per question, the macro average (mean over
questions) of every metric, and micro averages of the set metrics (recall = Σ|R ∩ G| / Σ|G|,
precision = Σ|R ∩ G| / Σ|R|). Questions without gold keys (unanswerable) cannot be scored:
they are excluded from every average and counted.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Sequence

from pydantic import BaseModel, Field


def _top(ranked: Iterable[Hashable], k: int) -> list[Hashable]:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    seen: dict[Hashable, None] = {}
    for key in ranked:
        if len(seen) == k:
            break
        seen.setdefault(key)
    return list(seen)


def recall_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    gold = set(gold)
    if not gold:
        raise ValueError("recall is undefined without gold items")
    return len(gold.intersection(_top(ranked, k))) / len(gold)


def precision_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    top = _top(ranked, k)
    return len(set(gold).intersection(top)) / len(top) if top else 0.0


def hit_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    return 1.0 if set(gold).intersection(_top(ranked, k)) else 0.0


def mrr_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    gold = set(gold)
    for position, key in enumerate(_top(ranked, k), start=1):
        if key in gold:
            return 1.0 / position
    return 0.0


def ndcg_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    gold = set(gold)
    if not gold:
        raise ValueError("nDCG is undefined without gold items")
    dcg = sum(
        1.0 / math.log2(i + 1) for i, key in enumerate(_top(ranked, k), start=1) if key in gold
    )
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), k) + 1))
    return dcg / ideal


_FUNCTIONS = {
    "recall": recall_at_k,
    "precision": precision_at_k,
    "hit": hit_at_k,
    "mrr": mrr_at_k,
    "ndcg": ndcg_at_k,
}


def _sorted(keys: set[Hashable]) -> list[Hashable]:
    try:
        return sorted(keys)  # type: ignore[type-var]
    except TypeError:
        return sorted(keys, key=repr)


def metric_name(metric: str, k: int) -> str:
    return f"{metric}@{k}"


class QuestionRetrieval(BaseModel):
    """One question's ranking, gold and metrics (``"recall@5"`` → value)."""

    id: str
    gold: list[Hashable]
    retrieved: list[Hashable]
    metrics: dict[str, float]


class RetrievalReport(BaseModel):
    """Metrics over a set of questions."""

    ks: list[int]
    n_questions: int = Field(description="Questions given, with or without gold.")
    n_scored: int
    n_without_gold: int = Field(description="Excluded from every average: no gold pages.")
    without_gold_ids: list[str] = Field(default_factory=list)
    macro: dict[str, float] = Field(default_factory=dict)
    micro: dict[str, float] = Field(default_factory=dict)
    per_question: list[QuestionRetrieval] = Field(default_factory=list)


def question_metrics(
    ranked: Sequence[Hashable], gold: Collection[Hashable], ks: Sequence[int]
) -> dict[str, float]:
    """Every metric at every k for one question (which must have gold items)."""
    return {
        metric_name(metric, k): fn(ranked, gold, k) for k in ks for metric, fn in _FUNCTIONS.items()
    }


def evaluate_retrieval(
    runs: Iterable[tuple[str, Sequence[Hashable], Collection[Hashable]]], ks: Sequence[int]
) -> RetrievalReport:
    """Score ``(question id, ranked keys, gold keys)`` triples at each k in ``ks``."""
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValueError(f"ks must be positive integers, got {ks}")
    scored: list[QuestionRetrieval] = []
    without_gold: list[str] = []
    found = {k: 0 for k in ks}
    returned = {k: 0 for k in ks}
    gold_total = 0
    for qid, ranked, gold in runs:
        gold_set = set(gold)
        if not gold_set:
            without_gold.append(qid)
            continue
        ranked = list(ranked)
        gold_total += len(gold_set)
        for k in ks:
            top = _top(ranked, k)
            found[k] += len(gold_set.intersection(top))
            returned[k] += len(top)
        scored.append(
            QuestionRetrieval(
                id=qid,
                gold=_sorted(gold_set),
                retrieved=ranked,
                metrics=question_metrics(ranked, gold_set, ks),
            )
        )
    macro: dict[str, float] = {}
    micro: dict[str, float] = {}
    if scored:
        for name in scored[0].metrics:
            macro[name] = sum(q.metrics[name] for q in scored) / len(scored)
        for k in ks:
            micro[metric_name("recall", k)] = found[k] / gold_total
            micro[metric_name("precision", k)] = found[k] / returned[k] if returned[k] else 0.0
    return RetrievalReport(
        ks=ks,
        n_questions=len(scored) + len(without_gold),
        n_scored=len(scored),
        n_without_gold=len(without_gold),
        without_gold_ids=without_gold,
        macro=macro,
        micro=micro,
        per_question=scored,
    )
