"""The sparse BM25 engine: postings term-major, every score computed exactly when asked.

Layout (term-major, a CSC matrix of pages x terms): ``indptr[t]..indptr[t+1]``
delimit term ``t``'s postings; ``docs`` holds their pages (ascending) and ``tf`` the counts
(the smallest unsigned type that holds them): 5 bytes per (term, page) entry when counts stay
below 256. Nothing per entry is kept beyond that. A term's document frequency is the length
of its row, so ``idf`` is a table by document frequency (``idf_by_df``, one value per page
count), and each page's length term ``norm = k1 * (1 - b + b * |D| / avgdl)`` is kept per page.

A query gathers its terms' postings (in query order) and computes each contribution

    idf(t) * (tf * (k1 + 1) / (tf + norm[page]))

with numpy in exactly the operations and order ``rank_bm25.BM25Okapi.get_scores`` uses, so
each contribution is the same float64 as rank-bm25's; ``np.bincount`` then adds them per page
in that order, which is rank-bm25's accumulation (``score += ...`` term after term), so the
scores are equal, not merely close. Storing the contributions instead costs 8 more bytes per
entry and saves the query a few passes over its postings: an index of at most
``STORED_MAX_POSTINGS`` entries (32 MB of contributions) keeps them (``weights``, computed
with the same function, so the same floats) and a query gathers them; a larger one computes
them (measured in docs/retrievers.md).

``idf`` follows rank-bm25 too: ``ln((N - n + 0.5) / (n + 0.5))`` as
``math.log(...) - math.log(...)`` (once per distinct page count ``n``), negative values
replaced by ``epsilon`` times the mean idf, the mean summed term by term in first-seen order
(``Vocabulary.first_rank``) as rank-bm25's dict iteration does.

A term asked twice counts twice, an unknown term adds nothing. A scoped search (the pages of a
few documents: contiguous row spans) cuts each term's row to the spans with a binary search
on its (sorted) pages: the same postings, the same operations.

Building appends chunks of counts (``scanrag.indexes.bm25_counts``: term-major within each
chunk) straight into the term-major arrays: each entry lands at its term's next free slot
(a counting sort, chunk after chunk, each chunk freed once placed), with no page-major copy
and no transpose. rank-bm25 gives an empty page ``nan`` when ``b = 1`` (0 / 0); so does this
engine. Arrays may be memory-mapped files (``scanrag.indexes.bm25_store``): searching reads
only the rows it needs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scanrag.indexes.bm25_counts import Counts, release_free_memory, smallest_uint

# memory per (term, page) entry while building in memory: the counted chunks (term, row and
# count: 7 bytes) and the term-major arrays they are placed in (page and count: 5)
BYTES_PER_ENTRY = 12
SPAN_TERM_LIMIT = 256  # scoped searches with more (span, term) pairs score the whole corpus
STORED_MAX_POSTINGS = 1 << 22  # indexes this small keep every contribution (8 bytes each)
_SLICE = 1 << 20  # postings whose contributions are computed at once when storing them


class SparseBM25:
    """Postings, statistics and scoring (see the module docstring)."""

    def __init__(self, k1: float, b: float, epsilon: float) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.indptr: np.ndarray = np.zeros(1, dtype=np.int64)
        self.docs: np.ndarray = np.zeros(0, dtype=np.int32)
        self.tf: np.ndarray = np.zeros(0, dtype=np.uint8)
        self.lengths: np.ndarray = np.zeros(0, dtype=np.int64)
        self.norm = np.zeros(0, dtype=np.float64)
        self.idf_by_df = np.zeros(1, dtype=np.float64)  # idf of a term on n pages: [n]
        self.average_idf = 0.0
        self.scored = False  # False: every page scores 0 (no page holds a term)
        self.nan_docs = np.zeros(0, dtype=np.int64)
        self.weights: np.ndarray | None = None  # every contribution, for small indexes

    @property
    def page_count(self) -> int:
        return int(self.lengths.size)

    @property
    def term_count(self) -> int:
        return int(self.indptr.size - 1)

    @property
    def idf(self) -> np.ndarray:
        """Every term's idf (computed from the table when asked)."""
        if not self.scored:
            return np.zeros(self.term_count)
        return self.idf_by_df[np.diff(self.indptr)]

    # -- building ---------------------------------------------------------------------------
    def append(self, counts: Counts, term_count: int) -> None:
        """Add ``counts``'s pages after the current ones (their term ids below
        ``term_count``); ``compute`` then gives the statistics. Empties ``counts``."""
        old_terms = self.term_count
        df = np.zeros(term_count, dtype=np.int64)
        df[:old_terms] = np.diff(self.indptr)
        largest = int(self.tf.max()) if self.tf.size else 0
        for terms, _, tf, _ in _chunk_views(counts):
            starts = _group_starts(terms)
            df[terms[starts]] += np.diff(np.append(starts, terms.size))
            largest = max(largest, int(tf.max()) if tf.size else 0)
        nnz = int(df.sum())
        index_type = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
        indptr = np.zeros(term_count + 1, dtype=index_type)
        np.cumsum(df, out=indptr[1:])
        docs = np.empty(nnz, dtype=np.int32)
        tf_out: np.ndarray = np.empty(nnz, dtype=smallest_uint(largest))
        cursor = indptr[:-1].astype(np.int64)
        if self.docs.size:  # the pages already held come first in every row
            old_df = np.diff(self.indptr)
            at = np.repeat(cursor[:old_terms] - self.indptr[:-1], old_df) + np.arange(
                self.docs.size, dtype=np.int64
            )
            docs[at], tf_out[at] = self.docs, self.tf
            cursor[:old_terms] += old_df
            del at, old_df
        lengths = [self.lengths]
        first_row = self.page_count
        for terms, rows, tf, page_lengths in counts.take():
            starts = _group_starts(terms)
            sizes = np.diff(np.append(starts, terms.size))
            groups = terms[starts]
            within = np.arange(terms.size, dtype=np.int64) - np.repeat(starts, sizes)
            at = np.repeat(cursor[groups], sizes) + within
            docs[at] = rows.astype(np.int32) + np.int32(first_row)
            tf_out[at] = tf
            cursor[groups] += sizes
            lengths.append(page_lengths)
            first_row += int(page_lengths.size)
            del terms, rows, tf, starts, sizes, groups, within, at
        release_free_memory()
        self.indptr, self.docs, self.tf = indptr, docs, tf_out
        self.lengths = np.concatenate(lengths).astype(np.int64)

    def compute(self, first_rank: np.ndarray) -> None:
        """The statistics: idf by document frequency, mean idf (summed in first-seen order:
        ``first_rank`` is each term's place in it), each page's length term and the pages
        that score nan."""
        n_pages, n_terms = self.page_count, self.term_count
        total = int(self.lengths.sum())
        self.scored = total > 0
        self.nan_docs = np.zeros(0, dtype=np.int64)
        self.weights = None
        if not self.scored:  # rank-bm25 would divide by the vocabulary size, 0
            self.idf_by_df = np.zeros(n_pages + 1)
            self.norm = np.zeros(n_pages)
            return
        if first_rank.size != n_terms:
            raise ValueError(f"{first_rank.size} first-seen ranks for {n_terms} terms")
        df = np.diff(self.indptr)
        present = np.flatnonzero(np.bincount(df, minlength=n_pages + 1))
        table = np.zeros(n_pages + 1)
        table[present] = [math.log(n_pages - f + 0.5) - math.log(f + 0.5) for f in present.tolist()]
        in_order = np.empty(n_terms)
        in_order[first_rank] = table[df]
        self.average_idf = float(np.cumsum(in_order)[-1]) / n_terms  # summed in order
        del in_order
        table[table < 0] = self.epsilon * self.average_idf
        self.idf_by_df = table
        avgdl = total / n_pages
        self.norm = self.k1 * (1 - self.b + self.b * self.lengths / avgdl)
        self.nan_docs = np.flatnonzero(self.norm == 0)
        if self.docs.size <= STORED_MAX_POSTINGS and not isinstance(self.docs, np.memmap):
            self.weights = self._every_contribution()

    def _every_contribution(self) -> np.ndarray:
        """The contribution of every posting, a slice at a time (bounded temporaries)."""
        weights = np.empty(self.docs.size)
        for start in range(0, self.docs.size, _SLICE):
            stop = min(start + _SLICE, self.docs.size)
            first, last = np.searchsorted(self.indptr, [start, stop - 1], side="right") - 1
            bounds = np.clip(self.indptr[first : last + 2], start, stop)
            idf = np.repeat(self.idf_by_df[np.diff(self.indptr[first : last + 2])], np.diff(bounds))
            pages = self.docs[start:stop].astype(np.intp)
            weights[start:stop] = self.contributions(self.tf[start:stop], pages, idf)
        return weights

    # -- scoring ----------------------------------------------------------------------------
    def contributions(
        self, tf: np.ndarray, pages: np.ndarray, idf: float | np.ndarray
    ) -> np.ndarray:
        """rank-bm25's contribution of postings with counts ``tf`` on ``pages`` for terms of
        ``idf`` (one value, or one per posting): ``idf * (tf * (k1 + 1) / (tf + norm))``."""
        q_freq = tf.astype(np.float64)  # as rank-bm25's, whatever numpy's casting rules
        part = q_freq * (self.k1 + 1)
        q_freq += self.norm[pages]
        part /= q_freq
        part *= idf
        return part

    def scores(self, term_ids: Any, rows: np.ndarray | None, any_terms: bool) -> np.ndarray:
        """Each page's score (``rows``: only those pages, in that order) for the query whose
        terms have ``term_ids`` (-1: unknown). ``any_terms``: the query has terms at all."""
        size = self.page_count if rows is None else int(rows.size)
        if not self.scored or not any_terms:
            return np.zeros(size)
        ids = np.asarray(term_ids, dtype=np.int64)
        known = ids[ids >= 0]
        scores = self._corpus_scores(known) if rows is None else self._scoped_scores(known, rows)
        if self.nan_docs.size:
            where = self.nan_docs if rows is None else np.isin(rows, self.nan_docs)
            scores[where] = np.nan
        return scores

    def _corpus_scores(self, term_ids: np.ndarray) -> np.ndarray:
        """Every page's score: the query terms' postings gathered in term order, their
        contributions computed at once and summed per page by one ``bincount`` (each page's
        contributions added in the same order as a loop over the terms would, so the sums
        are the same floats)."""
        if not term_ids.size:
            return np.zeros(self.page_count)
        starts, stops = self.indptr[term_ids], self.indptr[term_ids + 1]
        spans = list(zip(starts.tolist(), stops.tolist(), strict=True))
        docs, tf, weights = self.docs, self.tf, self.weights
        pages = np.concatenate([docs[start:stop] for start, stop in spans], dtype=np.intp)
        if weights is not None:
            values = np.concatenate([weights[start:stop] for start, stop in spans])
        else:
            counts = np.concatenate([tf[start:stop] for start, stop in spans])
            df = stops - starts
            values = self.contributions(counts, pages, np.repeat(self.idf_by_df[df], df))
        return np.bincount(pages, weights=values, minlength=self.page_count)

    def _scoped_scores(self, term_ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
        spans = row_spans(rows)
        if len(spans) * term_ids.size > SPAN_TERM_LIMIT:
            return self._corpus_scores(term_ids)[rows]
        scores = np.zeros(rows.size)
        indptr, docs, tf = self.indptr, self.docs, self.tf
        for term in term_ids.tolist():
            start, stop = int(indptr[term]), int(indptr[term + 1])
            pages = docs[start:stop]
            idf = float(self.idf_by_df[stop - start])
            for first, end, offset in spans:
                lo, hi = np.searchsorted(pages, (first, end)).tolist()
                if lo < hi:
                    at = pages[lo:hi].astype(np.intp)
                    if self.weights is not None:
                        values = self.weights[start + lo : start + hi]
                    else:
                        values = self.contributions(tf[start + lo : start + hi], at, idf)
                    scores[at + (offset - first)] += values
        return scores

    # -- persistence --------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        return {"indptr": self.indptr, "docs": self.docs, "tf": self.tf, "lengths": self.lengths}

    def install(self, arrays: dict[str, Any], first_rank: np.ndarray) -> None:
        """Take saved arrays (possibly memory-mapped) and compute the statistics."""
        self.indptr, self.docs, self.tf = arrays["indptr"], arrays["docs"], arrays["tf"]
        self.lengths = arrays["lengths"]
        if not (self.indptr.ndim == 1 and self.indptr.size >= 1):
            raise ValueError("indptr must hold one entry per term plus one")
        if int(self.indptr[-1]) != self.docs.size or self.docs.size != self.tf.size:
            raise ValueError("postings arrays of different lengths")
        self.compute(first_rank)


def _chunk_views(counts: Counts) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    return list(zip(counts.terms, counts.rows, counts.tf, counts.lengths, strict=True))


def _group_starts(terms: np.ndarray) -> np.ndarray:
    """Where each run of equal terms starts (a chunk's entries are grouped by term)."""
    if not terms.size:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate([[True], terms[1:] != terms[:-1]]))


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
