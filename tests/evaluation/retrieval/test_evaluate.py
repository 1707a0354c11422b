"""Evaluating retrievers on samples: scoping, skipping, component reuse, per-source figures,
per-question ranks."""

from __future__ import annotations

import pytest

from scanrag.evaluation.retrieval.evaluate import evaluate_retrievers, sample_groups
from scanrag.index_pool import IndexPool
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


def test_hybrid_reuses_components_built_before(samples, by_name, monkeypatch):
    """The hybrid builds no index of its own, and its build seconds include the seconds its
    components' indexes took when they were built for the earlier retrievers (each counted as
    100 s here, so the check does not depend on the machine's timing)."""
    built: list[str] = []
    index, leaf = IndexPool._index, IndexPool.leaf

    def counted(self, retriever, name, folder):
        built.append(name)
        return index(self, retriever, name, folder)

    def slow(self, kind, key, create):
        fresh = key is not None and key not in self.entries
        retriever = leaf(self, kind, key, create)
        if fresh:
            self.entries[key].seconds += 100.0
        return retriever

    monkeypatch.setattr(IndexPool, "_index", counted)
    monkeypatch.setattr(IndexPool, "leaf", slow)
    result = evaluate_retrievers(
        samples,
        by_name,
        ["bm25", "example_tfidf", "hybrid"],
        ks=[1, 3],
        params={"hybrid": {"retrievers": ["bm25", "example_tfidf"]}},
    )
    runs = result.retrievers
    assert built == ["bm25", "example_tfidf"]
    assert runs["hybrid"].build_s >= 200.0
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


def _mixed(samples: list[Sample]) -> list[Sample]:
    """The contract questions under benchmark-style ids from two sources, plus one question
    with an explicit ``source`` field."""
    first, second, third = samples
    return [
        first.model_copy(update={"id": "mmlongbench-doc/0001"}),
        second.model_copy(update={"id": "financebench/fb_01"}),
        third.model_copy(update={"id": "x3", "metadata": {"source": "financebench"}}),
    ]


def test_sample_groups_rules():
    sample = Sample(id="financebench/1", doc_ids=["a.pdf"], question="q")
    assert sample_groups(sample) == ["financebench"]
    assert sample_groups(sample.model_copy(update={"metadata": {"dataset": "fb"}})) == ["fb"]
    tagged = sample.model_copy(update={"metadata": {"evidence_sources": ["Table", "Chart"]}})
    assert sample_groups(tagged, "evidence_sources") == ["Chart", "Table"]
    assert sample_groups(Sample(id="7", doc_ids=["a.pdf"], question="q")) == []
    assert sample_groups(sample, "doc_type") == []


def test_per_source_figures_when_sources_mix(samples, by_name):
    result = evaluate_retrievers(_mixed(samples), by_name, ["oracle", "bm25"], ks=[1, 3])
    assert result.group_by == "source"
    assert result.groups == {"financebench": 2, "mmlongbench-doc": 1}
    assert result.questions["financebench/fb_01"].groups == ["financebench"]
    for run in result.retrievers.values():
        assert set(run.by_group) == {"financebench", "mmlongbench-doc"}
        pooled = (run.by_group["financebench"]["recall@3"] * 2
                  + run.by_group["mmlongbench-doc"]["recall@3"]) / 3  # fmt: skip
        assert pooled == pytest.approx(run.macro["recall@3"])
    assert result.retrievers["oracle"].by_group["financebench"]["recall@1"] == 1.0


def test_one_source_gives_no_breakdown(samples, by_name):
    result = evaluate_retrievers(samples, by_name, ["bm25"], ks=[1])
    assert result.groups == {} and result.retrievers["bm25"].by_group == {}


def test_per_question_ranks(samples, by_name):
    result = evaluate_retrievers(samples, by_name, ["oracle", "bm25"], ks=[1, 3])
    for sample in samples:
        gold = set(sample.gold_pages)
        oracle = result.retrievers["oracle"].per_question[sample.id]
        assert oracle.first_gold_rank == 1 and oracle.retrieved[0] in gold
        ours = result.retrievers["bm25"].per_question[sample.id]
        assert len(ours.retrieved) <= 3
        expected = next((i for i, p in enumerate(ours.retrieved, 1) if p in gold), None)
        assert ours.first_gold_rank == expected
        assert result.questions[sample.id].gold == sorted(gold)
    dumped = result.model_dump(mode="json")
    assert "rankings" not in dumped["retrievers"]["bm25"]
    assert dumped["retrievers"]["bm25"]["per_question"][samples[0].id]["retrieved"]
