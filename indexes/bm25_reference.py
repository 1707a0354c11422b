"""The reference BM25 scorer: rank-bm25's ``BM25Okapi`` over the reference tokenization.

This is how the ``bm25`` retriever scored before the sparse engine
(``scanrag.indexes.bm25_sparse``), kept to check it: the engine's scores must equal these, float for
float, for every page and question (``tests/indexes/test_bm25_equality.py`` on generated corpora,
``benchmarks/bm25_peers.py --check`` on mmlb-dev and financebench-dev).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scanrag.indexes.bm25 import BM25Index, tokenize_pages
from scanrag.indexes.queries import apply_query_mode
from scanrag.schemas import Document


def reference_okapi(index: BM25Index, documents: Sequence[Document]) -> Any:
    """``BM25Okapi`` built the way the ``bm25`` retriever used to build it (``None`` when no
    page holds a term: rank-bm25 cannot be built then)."""
    from rank_bm25 import BM25Okapi

    pages = list(tokenize_pages(index.tokenizer, documents, index.page_text))
    if not any(pages):
        return None
    return BM25Okapi(pages, k1=index.k1, b=index.b, epsilon=index.epsilon)


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
    index: BM25Index, documents: Sequence[Document], queries: Sequence[str]
) -> list[str]:
    """Queries (and scopes) whose engine scores differ from the reference in any page: the
    whole corpus, then each document alone."""
    okapi = reference_okapi(index, documents)
    found = []
    for query in queries:
        if not _same(engine_scores(index, query), reference_scores(index, okapi, query)):
            found.append(query)
        for document in documents:
            rows = index._scope_rows([document.id])
            assert rows is not None
            if not _same(
                engine_scores(index, query, rows), reference_scores(index, okapi, query, rows)
            ):
                found.append(f"{query} [{document.name}]")
    return found


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
