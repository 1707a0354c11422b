"""The oracle retriever: gold pages by sample or by question text."""

from __future__ import annotations

import logging

import pytest

from scanrag.indexes.errors import UnknownDocumentError
from scanrag.retrievers.oracle import OracleRetriever
from scanrag.schemas import Sample

Q = "What did the telescope observe?"


def _sample(question=Q, doc="space.pdf", pages=(2,), sid="s1"):
    return Sample(id=sid, doc_ids=[doc], question=question, gold_pages=list(pages))


def test_for_sample_maps_file_names_to_ids(corpus, by_name):
    oracle = OracleRetriever()
    oracle.add(corpus)
    hits = oracle.for_sample(_sample(pages=(3, 1)))
    assert [(h.doc_id, h.page, h.rank, h.score) for h in hits] == [
        (by_name["space.pdf"].id, 1, 1, 1.0),
        (by_name["space.pdf"].id, 3, 2, 1.0),
    ]
    assert len(oracle.for_sample(_sample(pages=(3, 1)), k=1)) == 1


def test_search_looks_up_question_text(corpus, by_name):
    oracle = OracleRetriever(samples=[_sample()])
    oracle.add(corpus)
    space = by_name["space.pdf"].id
    assert [
        (h.doc_id, h.page) for h in oracle.search("  What did the  telescope observe? ", 5)
    ] == [(space, 2)]
    assert oracle.search(Q, 5, doc_ids=[by_name["energy.pdf"].id]) == []  # out of scope
    assert oracle.search(Q, 5, doc_ids=space)[0].page == 2


def test_same_question_in_two_documents(corpus, by_name):
    oracle = OracleRetriever(
        samples=[
            _sample("How many pages?", "space.pdf", [3], "a"),
            _sample("How many pages?", "energy.pdf", [4], "b"),
        ]
    )
    oracle.add(corpus)
    assert len(oracle.search("How many pages?", 5)) == 2
    scoped = oracle.search("How many pages?", 5, doc_ids=[by_name["energy.pdf"].id])
    assert [h.page for h in scoped] == [4]


def test_unknown_question_and_unanswerable_give_nothing(corpus, caplog):
    oracle = OracleRetriever(samples=[_sample("Unanswerable one?", pages=())])
    oracle.add(corpus)
    assert oracle.search("Unanswerable one?", 3) == []
    with caplog.at_level(logging.WARNING):
        assert oracle.search("Never seen?", 3) == []
    assert "no gold pages known" in caplog.text


def test_gold_mapping_needs_a_single_document_scope(corpus, by_name):
    oracle = OracleRetriever(gold={"Where?": [2, 1]})
    oracle.add(corpus)
    finance = by_name["finance.pdf"].id
    assert [h.page for h in oracle.search("Where?", 5, doc_ids=[finance])] == [1, 2]
    with pytest.raises(ValueError, match="exactly one document"):
        oracle.search("Where?", 5)


def test_gold_pages_outside_document_rejected(corpus):
    oracle = OracleRetriever(samples=[_sample(pages=(9,))])
    oracle.add(corpus)
    with pytest.raises(ValueError, match="exceed the 3 pages"):
        oracle.search(Q, 5)


def test_unknown_primary_document(corpus):
    oracle = OracleRetriever()
    oracle.add(corpus)
    with pytest.raises(UnknownDocumentError, match="missing.pdf"):
        oracle.for_sample(_sample(doc="missing.pdf"))


def test_without_documents_names_are_ids():
    row = {"id": "x", "doc_ids": ["d.pdf"], "question": Q, "gold_pages": [4]}
    oracle = OracleRetriever(samples=[row])
    assert [(h.doc_id, h.page) for h in oracle.search(Q, 3)] == [("d.pdf", 4)]
    assert oracle.search(Q, 3, doc_ids=["other.pdf"]) == []


def test_bad_gold_pages_rejected():
    with pytest.raises(ValueError, match="1-based"):
        OracleRetriever(gold={"q": [0]})


def test_not_exhaustive_and_manifest():
    oracle = OracleRetriever(samples=[_sample()])
    assert oracle.exhaustive is False
    manifest = oracle.manifest()
    assert (manifest["retriever"], manifest["questions"], manifest["documents"]) == ("oracle", 1, 0)
