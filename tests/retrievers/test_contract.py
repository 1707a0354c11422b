"""The search contract, run over every registered retriever (built-ins and plugins); an index
is the retriever."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from scanrag.indexes.bm25 import BM25Index
from scanrag.indexes.errors import UnknownDocumentError
from scanrag.protocols import Retriever
from scanrag.registry import RETRIEVERS

QUERIES = [
    "How do green plants turn sunlight into energy?",
    "By how much did revenue grow in Europe?",
    "What did the telescope observe?",
]
NAMES = [
    pytest.param(name, marks=pytest.mark.model) if name in {"dense", "hybrid", "colpali"} else name
    for name in RETRIEVERS.names()
    if not name.startswith("fake_")  # test doubles other test packages register on import
]


@pytest.fixture(params=NAMES)
def retriever(request, indexed) -> Retriever:
    return indexed(request.param)


def _exhaustive(retriever: Retriever) -> bool:
    return getattr(retriever, "exhaustive", True)


def _check_hits(hits, corpus, k, scope=None) -> None:
    pages = {d.id: d.num_pages for d in corpus}
    allowed = set(scope) if scope is not None else set(pages)
    assert len(hits) <= k
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    keys = [(h.doc_id, h.page) for h in hits]
    assert len(set(keys)) == len(keys), "a page came back twice"
    for hit in hits:
        assert hit.doc_id in allowed
        assert 1 <= hit.page <= pages[hit.doc_id]
    for a, b in pairwise(hits):
        assert a.score >= b.score
        if a.score == b.score:
            assert (a.doc_id, a.page) < (b.doc_id, b.page), "ties must rank by (doc_id, page)"


def test_implements_protocol(retriever, request):
    assert isinstance(retriever, Retriever)
    assert retriever.name == request.node.callspec.params["retriever"]
    json.dumps(retriever.manifest(), default=str)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_ranking_shape_whole_store(retriever, corpus, k):
    for query in QUERIES:
        hits = retriever.search(query, k)
        _check_hits(hits, corpus, k)
        if _exhaustive(retriever):
            assert len(hits) == k


def _same_ranking(batch, single) -> None:
    """Batched neural encoders may differ from one-by-one encoding in the last float bits."""
    assert [[(h.doc_id, h.page, h.rank) for h in hits] for hits in batch] == [
        [(h.doc_id, h.page, h.rank) for h in hits] for hits in single
    ]
    for got, want in zip(batch, single, strict=True):
        assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-5)


def test_deterministic_and_batch_consistent(retriever):
    first = [retriever.search(q, 4) for q in QUERIES]
    assert [retriever.search(q, 4) for q in QUERIES] == first
    assert retriever.search_batch(QUERIES, 4) == retriever.search_batch(QUERIES, 4)
    _same_ranking(retriever.search_batch(QUERIES, 4), first)
    assert retriever.search_batch([], 4) == []


def test_scoped_to_one_document(retriever, corpus):
    for document in corpus:
        for query in QUERIES:
            hits = retriever.search(query, 3, doc_ids=[document.id])
            _check_hits(hits, corpus, 3, scope=[document.id])
            if _exhaustive(retriever):
                assert len(hits) == min(3, document.num_pages)
        single = retriever.search(QUERIES[0], 3, doc_ids=document.id)
        assert single == retriever.search(QUERIES[0], 3, doc_ids=[document.id])


def test_scoped_to_a_set(retriever, corpus):
    scope = [corpus[0].id, corpus[2].id]
    for query in QUERIES:
        hits = retriever.search(query, 10, doc_ids=scope)
        _check_hits(hits, corpus, 10, scope=scope)
        if _exhaustive(retriever):
            assert len(hits) == corpus[0].num_pages + corpus[2].num_pages
    batch = retriever.search_batch(QUERIES, 2, doc_ids=scope)
    _same_ranking(batch, [retriever.search(q, 2, doc_ids=scope) for q in QUERIES])


def test_empty_scope_returns_nothing(retriever):
    assert retriever.search(QUERIES[0], 3, doc_ids=[]) == []


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_blank_query_returns_empty(retriever, query):
    assert retriever.search(query, 3) == []
    assert retriever.search_batch([query, query], 3) == [[], []]


def test_k_beyond_corpus_returns_every_page(retriever, corpus):
    total = sum(d.num_pages for d in corpus)
    hits = retriever.search(QUERIES[1], 1000)
    _check_hits(hits, corpus, 1000)
    if _exhaustive(retriever):
        assert len(hits) == total


def test_unknown_document_id_raises(retriever, corpus):
    with pytest.raises(UnknownDocumentError, match="no-such-doc"):
        retriever.search(QUERIES[0], 3, doc_ids=[corpus[0].id, "no-such-doc"])


@pytest.mark.parametrize("k", [0, -1])
def test_non_positive_k_raises(retriever, k):
    with pytest.raises(ValueError):
        retriever.search(QUERIES[0], k)


def test_save_open_round_trip(tmp_path, corpus):
    retriever = BM25Index(b=0.5)
    retriever.add(corpus)
    retriever.save(tmp_path / "bm25")
    opened = BM25Index.open(tmp_path / "bm25")
    assert opened.b == 0.5 and opened.document_ids == retriever.document_ids
    assert opened.search("revenue", 3) == retriever.search("revenue", 3)
    loaded = BM25Index(b=0.5).load(tmp_path / "bm25", documents=corpus)
    assert loaded.page_count == retriever.page_count
    assert "pages=9" in repr(loaded)


def test_the_index_is_the_retriever(corpus):
    assert RETRIEVERS.get("bm25") is BM25Index
    index = BM25Index()
    index.add(corpus)
    assert isinstance(index, Retriever) and index.name == "bm25" and index.exhaustive
    manifest = index.manifest()
    assert manifest["retriever"] == "bm25" and manifest["kind"] == "bm25"
    assert manifest["page_count"] == 9


def test_text_retrievers_find_the_right_page(indexed, by_name):
    for name in ("bm25", "example_tfidf"):
        retriever = indexed(name)
        hit = retriever.search("telescope galaxy", 1)[0]
        assert (hit.doc_id, hit.page) == (by_name["space.pdf"].id, 2)
