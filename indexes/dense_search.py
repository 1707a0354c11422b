"""Page scores from chunk vectors: exact over a scope, or the top pages of the whole store.

A page owns chunks ``chunk_start[row]:chunk_start[row + 1]`` of the store (its windows); its
score aggregates theirs (``max``, ``sum`` or ``mean``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scanrag.indexes.base import Candidates


def exact_candidates(
    vectors: np.ndarray, chunk_start: np.ndarray, rows: np.ndarray, qv: np.ndarray, how: str
) -> list[Candidates]:
    """Per query, (``rows``, their exact scores): one matrix product over the chunks in scope,
    which for a few documents is faster than any FAISS structure and exact for every kind."""
    starts, stops = chunk_start[rows], chunk_start[rows + 1]
    counts = stops - starts
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    chunk_ids = np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))
    sims = vectors[chunk_ids] @ qv.T  # (chunks, queries)
    if how == "max":
        pages = np.maximum.reduceat(sims, offsets, axis=0)
    else:
        pages = np.add.reduceat(sims, offsets, axis=0)
        if how == "mean":
            pages = pages / counts[:, None]
    return [(rows, pages[:, j]) for j in range(qv.shape[0])]


def top_pages(
    store: Any,
    chunk_rows: np.ndarray,
    qv: np.ndarray,
    k: int,
    exact: Callable[[np.ndarray], Candidates],
) -> list[Candidates]:
    """Max aggregation over the whole store: fetch ever more chunks from ``store`` (a
    ``VectorStore``) until the best ``k`` pages are certain; ``exact`` scores a query
    (shape (1, dim)) over every page when the store cannot return enough."""
    total, limit = len(store), store.max_fetch
    results: list[Candidates | None] = [None] * qv.shape[0]
    pending = list(range(qv.shape[0]))
    fetch = min(limit, max(4 * k, 64))
    while pending:
        scores, ids = store.search(qv[pending], fetch)
        still = []
        for j, q in enumerate(pending):
            # every chunk fetched (and returned): the pages seen are all there is
            complete = fetch >= total and int(np.sum(ids[j] >= 0)) == total
            found = _settle(chunk_rows, scores[j], ids[j], k, complete)
            if found is not None:
                results[q] = found
            elif fetch < limit:
                still.append(q)
            else:  # FAISS cannot return enough (GPU k limit, approximate index)
                results[q] = exact(qv[q : q + 1])
        pending, fetch = still, min(limit, fetch * 4)
    return [r for r in results if r is not None]


def _settle(
    chunk_rows: np.ndarray, scores: np.ndarray, ids: np.ndarray, k: int, complete: bool
) -> Candidates | None:
    """Each page's best fetched score, or ``None`` when the top ``k`` pages are not yet certain
    (``complete``: every chunk of the store was fetched)."""
    valid = ids >= 0
    scores, ids = scores[valid], ids[valid]
    best: dict[int, float] = {}
    for row, score in zip(chunk_rows[ids].tolist(), scores.tolist(), strict=True):
        best.setdefault(row, score)  # chunks arrive best first: first seen is the max
    if not complete:
        ranked = sorted(best.values(), reverse=True)
        if len(ranked) < k or not ranked[k - 1] > scores[-1]:
            return None
    return np.fromiter(best, np.int64, len(best)), np.fromiter(best.values(), np.float64)
