"""The retriever base class and the name-based factory."""

from __future__ import annotations

import pytest

from retrievers.base import BaseRetriever, Retriever, build_retriever
from retrievers.bm25 import BM25Retriever
from scanrag.registry import RETRIEVERS, UnknownNameError


def test_unknown_name_lists_known_ones():
    with pytest.raises(UnknownNameError, match="known retrievers: .*bm25.*oracle"):
        build_retriever("no-such-retriever")


def test_non_retriever_factory_rejected():
    RETRIEVERS.register("not_a_retriever")(lambda: object())
    try:
        with pytest.raises(TypeError, match="lacks the Retriever protocol"):
            build_retriever("not_a_retriever")
    finally:
        RETRIEVERS.unregister("not_a_retriever")


def test_constructor_kwargs_are_the_config():
    retriever = build_retriever("bm25", k1=1.1, tokenizer={"stopwords": "english"})
    assert isinstance(retriever, BM25Retriever) and isinstance(retriever, Retriever)
    assert retriever.manifest()["params"]["k1"] == 1.1
    with pytest.raises(TypeError):
        build_retriever("bm25", no_such_param=1)


def test_save_open_round_trip(tmp_path, corpus):
    retriever = BM25Retriever(b=0.5)
    retriever.add(corpus)
    retriever.save(tmp_path / "bm25")
    opened = BM25Retriever.open(tmp_path / "bm25")
    assert opened.index.b == 0.5 and opened.document_ids == retriever.document_ids
    assert opened.search("revenue", 3) == retriever.search("revenue", 3)
    loaded = BM25Retriever(b=0.5).load(tmp_path / "bm25", documents=corpus)
    assert loaded.page_count == retriever.page_count
    assert "pages=9" in repr(loaded)


def test_from_index_wraps_an_existing_index(corpus):
    index = BM25Retriever().index
    index.add(corpus)
    wrapped = BM25Retriever.from_index(index)
    assert wrapped.index is index and isinstance(wrapped, BaseRetriever)
    assert wrapped.manifest()["retriever"] == "bm25"


def test_text_retrievers_find_the_right_page(indexed, by_name):
    for name in ("bm25", "example_tfidf"):
        retriever = indexed(name)
        hit = retriever.search("telescope galaxy", 1)[0]
        assert (hit.doc_id, hit.page) == (by_name["space.pdf"].id, 2)
