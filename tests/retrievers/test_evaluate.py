"""Evaluating retrievers on samples: scoping, skipping, component reuse."""

from __future__ import annotations

from evaluation.retrieval_eval import evaluate_retrievers
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


def test_names_are_aliases_inside_composites(samples, by_name):
    kept: dict = {}
    result = evaluate_retrievers(
        samples,
        by_name,
        ["tf", "hybrid", "other"],
        ks=[1, 3],
        params={
            "tf": {"type": "example_tfidf", "sublinear_tf": False},
            "hybrid": {"retrievers": ["bm25", "tf"]},
            "plain": {"type": "bm25", "k1": 0.9},
            "other": {"type": "hybrid", "retrievers": ["plain", "tf"], "weights": [2, 1]},
        },
        keep=kept,
    )
    assert not result.failed and list(result.retrievers) == ["tf", "hybrid", "other"]
    bm25, tf = kept["hybrid"].components
    assert bm25.name == "bm25" and bm25.k1 == 1.5  # not an alias: the registered defaults
    assert tf is kept["tf"] and tf.sublinear_tf is False  # the alias, built once
    plain, tf_again = kept["other"].components
    assert plain.k1 == 0.9 and tf_again is kept["tf"]  # an alias not evaluated on its own
    assert result.retrievers["hybrid"].build_s >= result.retrievers["tf"].build_s
    assert result.retrievers["tf"].params == {"type": "example_tfidf", "sublinear_tf": False}


def test_aliases_in_a_cycle_fail_that_retriever_only(samples, by_name):
    result = evaluate_retrievers(
        samples,
        by_name,
        ["bm25", "hybrid"],
        ks=[1],
        params={"hybrid": {"retrievers": ["bm25", "hybrid"]}},
    )
    assert list(result.retrievers) == ["bm25"]
    assert "cycle: hybrid → hybrid" in result.failed["hybrid"]
