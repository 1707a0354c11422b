"""The reference BM25 scorer: rank-bm25's ``BM25Okapi`` over the reference tokenization.

This is how the ``bm25`` retriever scored before the sparse engine
(``scanrag.indexes.bm25_sparse``), kept to check it: the engine's scores must equal these, float for
float, for every page and question (``tests/indexes/test_bm25_equality.py`` on generated corpora,
``benchmarks/bm25_peers.py --check`` on mmlb-dev and financebench-dev).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from scanrag.indexes.bm25 import BM25Index, tokenize_pages
from scanrag.indexes.queries import apply_query_mode
from scanrag.indexes.ranking import rank_candidates
from scanrag.schemas import Document


def reference_okapi(index: BM25Index, documents: Sequence[Document]) -> Any:
    """``BM25Okapi`` built the way the ``bm25`` retriever used to build it (``None`` when no
    page holds a term: rank-bm25 cannot be built then)."""
    return okapi_of_pages(index, tokenize_pages(index.tokenizer, documents, index.page_text))


def okapi_of_pages(index: BM25Index, pages: Iterable[list[str]]) -> Any:
    """``BM25Okapi`` over pages given as their reference terms, with ``index``'s parameters
    (``None`` when no page holds a term)."""
    from rank_bm25 import BM25Okapi

    corpus = list(pages)
    if not any(corpus):
        return None
    return BM25Okapi(corpus, k1=index.k1, b=index.b, epsilon=index.epsilon)


def reference_scores(
    index: BM25Index, okapi: Any, query: str, rows: np.ndarray | None = None
) -> np.ndarray:
    """The reference scores of ``query`` (``rows``: only those pages, in that order)."""
    terms = index.tokenizer(apply_query_mode(query, index.query_mode))
    size = index.page_count if rows is None else rows.size
    if okapi is None or not terms:
        return np.zeros(size)
    with np.errstate(invalid="ignore"):  # b = 1: empty pages divide 0 by 0 (nan)
        if rows is None:
            return np.asarray(okapi.get_scores(terms), dtype=np.float64)
        return np.asarray(okapi.get_batch_scores(terms, rows.tolist()), dtype=np.float64)


def engine_scores(index: BM25Index, query: str, rows: np.ndarray | None = None) -> np.ndarray:
    """The sparse engine's scores of ``query`` for every page (or ``rows``)."""
    terms = index.tokenizer(apply_query_mode(query, index.query_mode))
    ids = index.query_term_ids(query)
    return index.engine.scores(ids, rows, bool(terms))


def mismatches(
    index: BM25Index,
    documents: Sequence[Document],
    queries: Sequence[str],
    k: int = 10,
    okapi: Any = None,
    scopes: Callable[[str], Sequence[str]] | None = None,
) -> list[str]:
    """Queries (and scopes) whose engine scores differ from the reference in any page, or
    whose search hits (the best ``k``, scores included) differ from the reference's ranked by
    the index's rule: the whole corpus, then each document alone (``scopes(query)``: only
    the documents named, by id). ``okapi``: the reference, when built already."""
    okapi = reference_okapi(index, documents) if okapi is None else okapi
    names = {d.id: d.name for d in documents}
    found = []
    for query in queries:
        expected = reference_scores(index, okapi, query)
        if not _same(engine_scores(index, query), expected) or not _same_hits(
            index, query, k, None, expected
        ):
            found.append(query)
        for doc_id in scopes(query) if scopes else list(names):
            rows = index._scope_rows([doc_id])
            assert rows is not None
            expected = reference_scores(index, okapi, query, rows)
            if not _same(engine_scores(index, query, rows), expected) or not _same_hits(
                index, query, k, doc_id, expected, rows
            ):
                found.append(f"{query} [{names.get(doc_id, doc_id)}]")
    return found


def _same_hits(
    index: BM25Index,
    query: str,
    k: int,
    doc_id: str | None,
    expected: np.ndarray,
    rows: np.ndarray | None = None,
) -> bool:
    """Whether ``index.search`` returns the reference's best ``k`` (rows and scores)."""
    if not query.strip():
        return True
    hits = index.search(query, k, doc_id)
    got_rows = [index._doc_start[h.doc_id] + h.page - 1 for h in hits]
    scope = np.arange(index.page_count, dtype=np.int64) if rows is None else rows
    best_rows, best_scores = rank_candidates(scope, expected, index._tie_rank, k)
    got_scores = np.array([h.score for h in hits], dtype=np.float64)
    return got_rows == best_rows.tolist() and _same(got_scores, best_scores)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
