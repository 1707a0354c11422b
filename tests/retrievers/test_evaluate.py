"""Evaluating retrievers on samples: scoping, skipping, component reuse."""

from __future__ import annotations

from retrievers.evaluate import evaluate_retrievers
from scanrag.schemas import Sample


def test_questions_of_unreadable_documents_are_skipped(samples, by_name):
    extra = Sample(id="lost", doc_ids=["gone.pdf"], question="q?", gold_pages=[1])
    result = evaluate_retrievers([*samples, extra], by_name, ["bm25"], ks=[1])
    assert result.n_skipped == 1 and result.skipped == ["lost"]
    assert result.n_questions == 4 and result.n_scored == 3


def test_each_question_searches_only_its_document(samples, by_name):
    result = evaluate_retrievers(samples, by_name, ["bm25"], ks=[5])
    run = result.retrievers["bm25"]
    for sample in samples:
        assert len(run.rankings[sample.id]) == by_name[sample.primary_doc].num_pages


def test_hybrid_reuses_components_built_before(samples, by_name):
    result = evaluate_retrievers(
        samples,
        by_name,
        ["bm25", "example_tfidf", "hybrid"],
        ks=[1, 3],
        params={"hybrid": {"retrievers": ["bm25", "example_tfidf"]}},
    )
    runs = result.retrievers
    assert runs["hybrid"].build_s >= runs["bm25"].build_s + runs["example_tfidf"].build_s
    assert runs["hybrid"].params == {"retrievers": ["bm25", "example_tfidf"]}
    assert runs["hybrid"].macro["hit@3"] == 1.0
