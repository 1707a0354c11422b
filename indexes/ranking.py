"""Choosing the best ``k`` pages of a scored set: the order every index ranks by (score
descending, ties by document id then page) and a linear-time cut of a whole corpus's scores to
the few rows that can be among the best."""

from __future__ import annotations

import numpy as np


def rank_candidates(
    rows: np.ndarray, scores: np.ndarray, tie_rank: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` rows: score descending, ties by ``tie_rank`` (doc id, page) ascending."""
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        scores = np.where(np.isnan(scores), -np.inf, scores)
    rows = np.asarray(rows, dtype=np.int64)
    order = np.lexsort((tie_rank[rows], -scores))[:k]
    return rows[order], scores[order]


_BLOCKS_PER_K = 4  # a large array is cut at the k-th best of this many blocks' maxima per k


def top_candidates(
    rows: np.ndarray, scores: np.ndarray, tie_rank: np.ndarray, k: int, *, nan: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``k`` of ``(rows, scores)`` that hold the exact best ``k`` by
    :func:`rank_candidates`'s rule (nan ranks last), found in linear time: what an index that
    scores a whole corpus hands the base instead of every row. ``nan=False`` promises that no
    score is nan (the caller knows): no pass over the scores looks for one.

    A large array is first cut to the values at least the ``k``-th best of its blocks' maxima
    (``4 k`` blocks, one reduction): at least ``k`` values pass that cut, so the best ``k`` (ties
    at the ``k``-th included) are among them, and ``np.partition`` runs over a few hundred values
    instead of a corpus whose scores share many equal values (which slows it down several
    times)."""
    if rows.size <= k:
        return rows, scores
    keyed = np.where(np.isnan(scores), -np.inf, scores) if nan else scores
    among, where = keyed, None
    blocks = _BLOCKS_PER_K * k
    if rows.size >= 16 * blocks:
        size = rows.size // blocks
        maxima = keyed[: blocks * size].reshape(blocks, size).max(axis=1)
        cut = np.partition(maxima, blocks - k)[blocks - k]
        where = np.flatnonzero(keyed >= cut)
        among = keyed[where]
    kth = np.partition(among, among.size - k)[among.size - k]
    above = np.flatnonzero(among > kth)
    tied = np.flatnonzero(among == kth)
    if where is not None:  # positions in ``among`` back to positions in ``rows``
        above, tied = where[above], where[tied]
    need = k - above.size
    if tied.size > need:
        tied = tied[np.argpartition(tie_rank[rows[tied]], need - 1)[:need]]
    chosen = np.concatenate([above, tied])
    return rows[chosen], scores[chosen]
