"""A search's arguments and its best ``k`` pages: the checks every retriever makes
(:func:`check_search_args`), the order every index ranks by (score descending, ties by
document id then page) and a linear-time cut of a whole corpus's scores to the few rows that
can be among the best."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from scanrag.indexes.errors import UnknownDocumentError


def check_search_args(
    query: object, k: object, doc_ids: Sequence[str] | str | None, known: Collection[str]
) -> list[str] | None:
    """Validate search arguments shared by every retriever; return the scope as a list.

    ``k`` must be a positive integer (``ValueError``). ``doc_ids`` may be a single id string,
    a sequence of ids (deduplicated, order kept) or ``None`` for the whole store; ids not in
    ``known`` raise ``UnknownDocumentError`` naming them.
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"k must be an integer, got {k!r}")
    if k <= 0:
        raise ValueError(f"k must be a positive integer, got {k}")
    if doc_ids is None:
        return None
    scope = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))
    missing = [d for d in scope if d not in known]
    if missing:
        raise UnknownDocumentError(missing, sorted(known))
    return scope


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
