"""The example plugin (tests/plugins/scanrag_example_plugin) registers through the entry point
and goes through the same evaluation as the built-ins."""

from __future__ import annotations

from importlib import metadata

import pytest

from scanrag.evaluation.retrieval.evaluate import evaluate_retrievers
from scanrag.indexes.base import PageIndex
from scanrag.registry import RETRIEVERS
from scanrag.retriever_specs import create_retriever

INSTALL = "pip install -e tests/plugins/scanrag_example_plugin --no-deps"


def test_entry_point_is_installed():
    points = {ep.name: ep.value for ep in metadata.entry_points(group="scanrag.retrievers")}
    assert points.get("example_tfidf") == "scanrag_example_plugin:TfidfIndex", (
        f"the example plugin is not installed; run {INSTALL}"
    )


def test_discovered_by_the_registry():
    assert "example_tfidf" in RETRIEVERS.names()
    retriever = create_retriever("example_tfidf", {"sublinear_tf": False})
    assert isinstance(retriever, PageIndex) and retriever.name == "example_tfidf"


def test_evaluated_like_the_builtins(samples, by_name):
    result = evaluate_retrievers(samples, by_name, ["bm25", "example_tfidf"], ks=[1, 3])
    plugin, builtin = result.retrievers["example_tfidf"], result.retrievers["bm25"]
    assert set(plugin.macro) == set(builtin.macro)
    assert plugin.macro["recall@1"] == 1.0 and plugin.macro["mrr@3"] == 1.0
    assert plugin.n_queries == len(samples) and plugin.pages == 9


def test_save_load_through_the_base(tmp_path, corpus):
    retriever = create_retriever("example_tfidf")
    retriever.add(corpus)
    retriever.save(tmp_path / "tfidf")
    opened = type(retriever).open(tmp_path / "tfidf")
    assert opened.search("galaxy", 3) == retriever.search("galaxy", 3)


@pytest.mark.parametrize("name", ["bm25", "example_tfidf"])
def test_evaluation_index_cache(tmp_path, samples, by_name, name):
    first = evaluate_retrievers(samples, by_name, [name], ks=[1], cache_dir=tmp_path)
    second = evaluate_retrievers(samples, by_name, [name], ks=[1], cache_dir=tmp_path)
    assert not first.retrievers[name].index_cached and second.retrievers[name].index_cached
    assert first.retrievers[name].macro == second.retrievers[name].macro
