"""An index is a retriever: the registry builds index classes directly; the name-based factory;
the deprecated import aliases of the removed wrapper classes."""

from __future__ import annotations

import warnings

import pytest

from indexes.base import PageIndex
from indexes.bm25 import BM25Index
from retrievers.base import Retriever, build_retriever
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
    assert isinstance(retriever, BM25Index) and isinstance(retriever, Retriever)
    assert retriever.manifest()["params"]["k1"] == 1.1
    with pytest.raises(TypeError):
        build_retriever("bm25", no_such_param=1)


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


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("retrievers.base", "BaseRetriever", PageIndex),
        ("retrievers.bm25", "BM25Retriever", BM25Index),
        ("retrievers.dense", "DenseRetriever", "indexes.dense:DenseIndex"),
        ("retrievers.colpali", "ColPaliRetriever", "indexes.colpali:ColPaliIndex"),
    ],
)
def test_old_names_stay_importable_for_one_release(module, old, new):
    import importlib

    if isinstance(new, str):
        where, _, attr = new.partition(":")
        new = getattr(importlib.import_module(where), attr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert getattr(importlib.import_module(module), old) is new
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    with pytest.raises(AttributeError):
        _ = importlib.import_module(module).NoSuchName


def test_text_retrievers_find_the_right_page(indexed, by_name):
    for name in ("bm25", "example_tfidf"):
        retriever = indexed(name)
        hit = retriever.search("telescope galaxy", 1)[0]
        assert (hit.doc_id, hit.page) == (by_name["space.pdf"].id, 2)
