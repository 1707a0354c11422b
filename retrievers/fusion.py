"""Fusion rules over the ranked hit lists of several retrievers (used by ``hybrid``).

Each component returns its best ``depth`` pages with scores. A rule turns the lists into one
score per page; the fused list is sorted by score descending, ties by document id then page,
scores compared after rounding to 12 decimals (equal sums reached in a different order cannot
flip a tie). A fused hit keeps the region proposals its components attached to that page
(ColPali's boxes, say), in component order, without duplicates.

* ``zconf`` (the hybrid's default) — confidence-weighted z-scores: each list's scores become
  z-scores (mean 0, standard deviation 1 over the returned list) and the list votes with the
  z-score of its own best page as its weight, ``score(p) = Σ_i w_i · c_i · z_i(p)`` with
  ``c_i = max_p z_i(p)``. A retriever whose best page stands far above the rest of its list
  (a rare exact term matched, say) gets a larger say for that query than one whose list is
  flat; no weight is tuned (``w_i`` stay 1). A page missing from a list gets the list's lowest
  z-score.
* ``rrf`` — reciprocal rank fusion: ``score(p) = Σ_i w_i / (k_rrf + rank_i(p))`` over the
  components that returned ``p`` (rank 1 = best). It ignores how far apart the scores are.
* ``minmax`` — score-aware: each list's scores are rescaled to [0, 1] (best returned page 1,
  worst returned page 0), ``score(p) = Σ_i w_i · norm_i(p)``. A page missing from a list gets
  that list's lowest normalized value (0), as if it ranked last.
* ``z`` — the same with z-scores; a missing page gets the list's lowest z-score.

A list whose scores are all equal carries no ordering information and adds 0 to every page.
Normalizing over the top ``depth`` hits equals normalizing over the whole document for every
page that matters when ``depth`` ≥ 50 on the dev sets (depth 20 loses 0.04 R@5 on
financebench): keep ``depth`` at 100. ``merge_views`` folds the lists one retriever returned
for several views of a question (its sentences) into one list, a page scoring its best view's
score. docs/retrievers.md has the cross-set figures behind the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from scanrag.schemas import PageHit

Fusion = Literal["zconf", "minmax", "z", "rrf"]
FUSIONS: tuple[str, ...] = get_args(Fusion)
Key = tuple[str, int]


def rrf_fuse(
    rankings: Sequence[Sequence[PageHit]], weights: Sequence[float], k_rrf: float, k: int
) -> list[PageHit]:
    """Reciprocal rank fusion of ranked hit lists; the best ``k`` as new hits ranked 1..n."""
    scores: dict[Key, float] = {}
    for hits, weight in zip(rankings, weights, strict=True):
        for hit in hits:
            key = (hit.doc_id, hit.page)
            scores[key] = scores.get(key, 0.0) + weight / (k_rrf + hit.rank)
    return _fused(scores, rankings, k)


def normalized_scores(hits: Sequence[PageHit], how: str) -> tuple[dict[Key, float], float]:
    """(normalized score per returned page, the value a missing page gets) for one list."""
    if how not in ("minmax", "z"):
        raise ValueError(f"unknown normalization {how!r}; use minmax or z")
    raw = {(h.doc_id, h.page): float(h.score) for h in hits}
    if not raw:
        return {}, 0.0
    values = list(raw.values())
    if how == "minmax":
        low, high = min(values), max(values)
        if not high > low:
            return dict.fromkeys(raw, 0.0), 0.0
        return {key: (v - low) / (high - low) for key, v in raw.items()}, 0.0
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if not std > 0:
        return dict.fromkeys(raw, 0.0), 0.0
    normed = {key: (v - mean) / std for key, v in raw.items()}
    return normed, min(normed.values())


def confidence(normed: dict[Key, float]) -> float:
    """How far a list's best page stands out: its z-score (0 for an empty or flat list)."""
    return max(normed.values(), default=0.0)


def score_fuse(
    rankings: Sequence[Sequence[PageHit]], weights: Sequence[float], how: str, k: int
) -> list[PageHit]:
    """Weighted sum of normalized scores (``minmax``, ``z`` or ``zconf``); the best ``k``
    hits."""
    parts = [normalized_scores(hits, "z" if how == "zconf" else how) for hits in rankings]
    if how == "zconf":
        scaled = [(normed, floor, confidence(normed)) for normed, floor in parts]
        parts = [
            ({key: c * v for key, v in normed.items()}, c * floor) for normed, floor, c in scaled
        ]
    keys = {key: None for normed, _ in parts for key in normed}
    scores = {
        key: sum(
            w * normed.get(key, floor) for (normed, floor), w in zip(parts, weights, strict=True)
        )
        for key in keys
    }
    return _fused(scores, rankings, k)


def fuse(
    rankings: Sequence[Sequence[PageHit]],
    weights: Sequence[float],
    how: str,
    k: int,
    k_rrf: float = 60.0,
) -> list[PageHit]:
    """Fuse with the rule ``how`` (``zconf``, ``minmax``, ``z`` or ``rrf``)."""
    if how == "rrf":
        return rrf_fuse(rankings, weights, k_rrf, k)
    return score_fuse(rankings, weights, how, k)


def _fused(
    scores: dict[Key, float], rankings: Sequence[Sequence[PageHit]], k: int
) -> list[PageHit]:
    regions: dict[Key, list[Any]] = {}
    for hits in rankings:
        for hit in hits:
            kept = regions.setdefault((hit.doc_id, hit.page), [])
            kept.extend(r for r in hit.regions if r not in kept)
    ordered = sorted(scores.items(), key=lambda item: (-round(item[1], 12), item[0]))
    return [
        PageHit(doc_id=doc_id, page=page, score=score, rank=rank, regions=regions[(doc_id, page)])
        for rank, ((doc_id, page), score) in enumerate(ordered[:k], start=1)
    ]


def merge_views(views: Sequence[Sequence[PageHit]], k: int) -> list[PageHit]:
    """One retriever's lists for several views of a question as one list: a page scores the
    best of its views' scores; the best ``k`` pages, ranked 1..n (ties as in ``fuse``)."""
    if len(views) == 1:
        return list(views[0][:k])
    best: dict[Key, float] = {}
    for hits in views:
        for hit in hits:
            key = (hit.doc_id, hit.page)
            best[key] = max(best.get(key, hit.score), hit.score)
    return _fused(best, views, k)
