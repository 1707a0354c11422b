"""The eager sparse BM25 engine: every (term, page) score contribution computed at build time.

Layout (term-major, as ``scipy.sparse.csc_matrix`` of pages x terms): ``indptr[t]..indptr[t+1]``
delimit term ``t``'s postings; ``docs`` holds their pages (ascending), ``tf`` the counts and
``weights`` the contributions

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |D| / avgdl))

computed with numpy in exactly the operations and order ``rank_bm25.BM25Okapi.get_scores``
uses, so each contribution is the same float64. ``idf`` follows rank-bm25 too: ``ln((N - n +
0.5) / (n + 0.5))`` as ``math.log(...) - math.log(...)`` (once per distinct page count ``n``),
negative values replaced by ``epsilon`` times the mean idf, the mean summed term by term in
first-seen order (``Vocabulary.first_key``) as rank-bm25's dict iteration does.

A query is the sum of its terms' rows: ``scores[docs[row]] += weights[row]`` for each query
term in order (a term asked twice counts twice, an unknown term adds nothing), which is
rank-bm25's accumulation, element by element, so scores are equal, not merely close. A scoped
search (the pages of a few documents: contiguous row spans) cuts each term's row to the spans
with a binary search on its (sorted) pages: the same matrix, the same additions.

rank-bm25 gives an empty page ``nan`` when ``b = 1`` (0 / 0); so does this engine. Arrays may
be memory-mapped files (``scanrag.indexes.bm25_store``): searching reads only the rows it needs.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from scanrag.indexes.bm25_counts import Counts, release_free_memory

WEIGHT_SLICE = 1 << 20
# memory per (term, page) entry while building in memory: counts (10 bytes), the term-major
# copy (6) and the contributions (8)
BYTES_PER_ENTRY = 24  # postings whose weights are computed at once (bounds temporaries)
SPAN_TERM_LIMIT = 256  # scoped searches with more (span, term) pairs score the whole corpus


class Slices(Protocol):
    """Read or written a slice at a time (an array, or a file: ``scanrag.indexes.bm25_disk``)."""

    def __getitem__(self, where: slice) -> np.ndarray: ...

    def __setitem__(self, where: slice, values: np.ndarray) -> None: ...


class SparseBM25:
    """Postings, statistics and scoring (see the module docstring)."""

    def __init__(self, k1: float, b: float, epsilon: float) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.indptr = np.zeros(1, dtype=np.int64)
        self.docs = np.zeros(0, dtype=np.int32)
        self.tf: np.ndarray = np.zeros(0, dtype=np.uint16)
        self.lengths = np.zeros(0, dtype=np.int64)
        self.weights = np.zeros(0, dtype=np.float64)
        self.idf = np.zeros(0, dtype=np.float64)
        self.average_idf = 0.0
        self.scored = False  # False: every page scores 0 (no page holds a term)
        self.nan_docs = np.zeros(0, dtype=np.int64)

    @property
    def page_count(self) -> int:
        return int(self.lengths.size)

    @property
    def term_count(self) -> int:
        return int(self.indptr.size - 1)

    # -- building ---------------------------------------------------------------------------
    def append(self, counts: Counts, term_count: int) -> None:
        """Add ``counts``'s pages after the current ones (their term ids below
        ``term_count``) and recompute the statistics and contributions."""
        import scipy.sparse as sp

        row_counts, terms, tf, lengths = counts.joined()
        nnz = self.docs.size + terms.size
        index_type = np.int32 if max(nnz, term_count) < np.iinfo(np.int32).max else np.int64
        rows = np.zeros(row_counts.size + 1, dtype=index_type)
        np.cumsum(row_counts, out=rows[1:])
        new = sp.csr_matrix((tf, terms, rows), shape=(row_counts.size, term_count))
        del terms, tf, rows
        if self.page_count:
            old = sp.csc_matrix(
                (self.tf, self.docs, self.indptr), shape=(self.page_count, self.term_count)
            )
            old.resize((self.page_count, term_count))
            new = sp.vstack([old.tocsr(), new], format="csr")
            del old
        matrix = new.tocsc()
        del new
        release_free_memory()
        self.indptr = matrix.indptr.astype(np.int64)
        self.docs = matrix.indices.astype(np.int32, copy=False)
        self.tf = matrix.data
        self.lengths = np.concatenate([self.lengths, lengths]).astype(np.int64)
        self.weights = np.zeros(0, dtype=np.float64)  # freed before the new ones are made

    def compute(
        self,
        first_key: np.ndarray,
        out: Slices | None = None,
        postings: tuple[Slices, Slices] | None = None,
    ) -> None:
        """Statistics and every contribution. ``out`` receives the contributions slice by
        slice, in order (default: a new array, installed as ``weights``); ``postings`` are
        where the pages and counts are read from (default: ``docs`` and ``tf``)."""
        norm = self._statistics(first_key)
        if norm is None:
            self.weights = np.zeros(self.docs.size)
            return
        release_free_memory()
        docs, tf = postings or (self.docs, self.tf)
        size = int(self.indptr[-1])
        weights = np.empty(size, dtype=np.float64) if out is None else None
        target: Any = out if weights is None else weights
        for start in range(0, size, WEIGHT_SLICE):
            stop = min(start + WEIGHT_SLICE, size)
            term_of = _terms_of(self.indptr, start, stop)
            q_freq = tf[start:stop].astype(np.float64)
            part = q_freq * (self.k1 + 1) / (q_freq + norm[docs[start:stop]])
            target[start:stop] = self.idf[term_of] * part
            del term_of, q_freq, part
        if weights is not None:
            self.weights = weights
        release_free_memory()

    def _statistics(self, first_key: np.ndarray) -> np.ndarray | None:
        """idf, mean idf and the pages that score nan; returns each page's length term
        ``k1 * (1 - b + b * |D| / avgdl)`` (``None`` when no page holds a term)."""
        n_pages, n_terms = self.page_count, self.term_count
        total = int(self.lengths.sum())
        self.scored = total > 0
        self.nan_docs = np.zeros(0, dtype=np.int64)
        if not self.scored:  # rank-bm25 would divide by the vocabulary size, 0
            self.idf = np.zeros(n_terms)
            return None
        avgdl = total / n_pages
        values, inverse = np.unique(np.diff(self.indptr), return_inverse=True)
        table = np.array([math.log(n_pages - f + 0.5) - math.log(f + 0.5) for f in values.tolist()])
        idf = table[inverse]
        in_order = idf[np.argsort(first_key, kind="stable")]
        self.average_idf = float(np.cumsum(in_order)[-1]) / n_terms  # summed in order
        idf[idf < 0] = self.epsilon * self.average_idf
        self.idf = idf
        norm = self.k1 * (1 - self.b + self.b * self.lengths / avgdl)
        self.nan_docs = np.flatnonzero(norm == 0)
        return norm

    # -- scoring ----------------------------------------------------------------------------
    def scores(self, term_ids: list[int], rows: np.ndarray | None, any_terms: bool) -> np.ndarray:
        """Each page's score (``rows``: only those pages, in that order) for the query whose
        terms have ``term_ids`` (-1: unknown). ``any_terms``: the query has terms at all."""
        size = self.page_count if rows is None else int(rows.size)
        if not self.scored or not any_terms:
            return np.zeros(size)
        known = [t for t in term_ids if t >= 0]
        scores = self._corpus_scores(known) if rows is None else self._scoped_scores(known, rows)
        if self.nan_docs.size:
            where = self.nan_docs if rows is None else np.isin(rows, self.nan_docs)
            scores[where] = np.nan
        return scores

    def _corpus_scores(self, term_ids: list[int]) -> np.ndarray:
        """Every page's score: the query terms' postings gathered in term order and summed per
        page by one ``bincount`` (each page's contributions added in the same order as a loop
        over the terms would, so the sums are the same floats; twice as fast at 60,000 pages)."""
        if not term_ids:
            return np.zeros(self.page_count)
        indptr, docs, weights = self.indptr, self.docs, self.weights
        spans = [(int(indptr[term]), int(indptr[term + 1])) for term in term_ids]
        pages = np.concatenate([docs[start:stop] for start, stop in spans])
        values = np.concatenate([weights[start:stop] for start, stop in spans])
        return np.bincount(pages, weights=values, minlength=self.page_count)

    def _scoped_scores(self, term_ids: list[int], rows: np.ndarray) -> np.ndarray:
        spans = row_spans(rows)
        if len(spans) * len(term_ids) > SPAN_TERM_LIMIT:
            return self._corpus_scores(term_ids)[rows]
        scores = np.zeros(rows.size)
        indptr, docs, weights = self.indptr, self.docs, self.weights
        for term in term_ids:
            start, stop = int(indptr[term]), int(indptr[term + 1])
            pages = docs[start:stop]
            for first, end, offset in spans:
                lo, hi = np.searchsorted(pages, (first, end)).tolist()
                if lo < hi:
                    at = pages[lo:hi].astype(np.int64) + (offset - first)
                    scores[at] += weights[start + lo : start + hi]
        return scores

    # -- persistence --------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "indptr": self.indptr,
            "docs": self.docs,
            "tf": self.tf,
            "lengths": self.lengths,
            "weights": self.weights,
        }

    def install(self, arrays: dict[str, Any], first_key: np.ndarray) -> None:
        """Take saved arrays (possibly memory-mapped); recompute the statistics (and the
        contributions, unless saved with them)."""
        self.indptr, self.docs, self.tf = arrays["indptr"], arrays["docs"], arrays["tf"]
        self.lengths = arrays["lengths"]
        if not (self.indptr.ndim == 1 and self.indptr.size >= 1):
            raise ValueError("indptr must hold one entry per term plus one")
        if int(self.indptr[-1]) != self.docs.size or self.docs.size != self.tf.size:
            raise ValueError("postings arrays of different lengths")
        weights = arrays.get("weights")
        if weights is not None and weights.size == self.docs.size:
            self._statistics(first_key)
            self.weights = weights
        else:
            self.compute(first_key)


def _terms_of(indptr: np.ndarray, start: int, stop: int) -> np.ndarray:
    """The term of each posting ``start..stop-1``."""
    first, last = np.searchsorted(indptr, [start, stop - 1], side="right") - 1
    bounds = np.clip(indptr[first : last + 2], start, stop)
    return np.repeat(np.arange(first, last + 1, dtype=np.int64), np.diff(bounds))


def row_spans(rows: np.ndarray) -> list[tuple[int, int, int]]:
    """``rows`` as runs of consecutive pages: (first page, page after the last, offset)."""
    if rows.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [rows.size]])
    return [
        (int(rows[s]), int(rows[e - 1]) + 1, int(s))
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
    ]
