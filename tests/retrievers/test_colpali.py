"""The ``colpali`` retriever with the tiny offline ColQwen2: registry, regions, persistence,
and a run through the same evaluation as the built-ins (corpus fixtures from conftest)."""

from __future__ import annotations

import pytest

from scanrag.indexes.colpali import ColPaliIndex
from scanrag.indexes.colpali_tiny import tiny_model_dir
from scanrag.indexes.errors import UnknownDocumentError
from scanrag.registry import RETRIEVERS
from scanrag.retriever_specs import create_retriever

pytestmark = pytest.mark.model
QUERY = "What did the telescope observe?"


@pytest.fixture(scope="module")
def model_dir() -> str:
    return str(tiny_model_dir("colqwen2"))


@pytest.fixture(scope="module")
def retriever(model_dir, corpus) -> ColPaliIndex:
    built = create_retriever(
        "colpali", {"model": model_dir, "dpi": 36, "device": "cpu", "max_regions": 2}
    )
    assert isinstance(built, ColPaliIndex)
    built.add(corpus)
    return built


def test_registered_under_its_entry_point():
    assert RETRIEVERS.get("colpali") is ColPaliIndex


def test_hits_carry_patch_regions(retriever, corpus):
    hits = retriever.search(QUERY, 4)
    assert len(hits) == 4
    for hit in hits:
        assert 1 <= len(hit.regions) <= 2
        for region in hit.regions:
            assert region.element_type == "colpali_patch"
            assert (region.doc_id, region.page) == (hit.doc_id, hit.page)


def test_manifest_names_retriever_model_and_params(retriever, model_dir):
    manifest = retriever.manifest()
    assert manifest["retriever"] == "colpali" and manifest["kind"] == "colpali"
    assert manifest["model"] == model_dir
    assert manifest["params"] == {
        "model": model_dir,
        "family": "colqwen2",
        "dpi": 36,
        "max_visual_tokens": None,
    }
    assert "colpali-engine" in manifest["libraries"]


def test_open_restores_the_same_results(retriever, tmp_path):
    retriever.save(tmp_path / "idx")
    reopened = ColPaliIndex.open(tmp_path / "idx", device="cpu", max_regions=2)
    assert reopened.search(QUERY, 5) == retriever.search(QUERY, 5)
    assert reopened.document_ids == retriever.document_ids


def test_unknown_document_and_bad_options(retriever, model_dir):
    with pytest.raises(UnknownDocumentError, match="nope"):
        retriever.search(QUERY, 2, doc_ids=["nope"])
    with pytest.raises(ValueError, match="region_threshold"):
        ColPaliIndex(model=model_dir, region_threshold=2.0)
    with pytest.raises(ValueError, match="batch_size"):
        ColPaliIndex(model=model_dir, batch_size=0)


def test_runs_through_the_retrieval_evaluation(model_dir, samples, by_name):
    from scanrag.evaluation.retrieval.evaluate import evaluate_retrievers

    result = evaluate_retrievers(
        samples,
        by_name,
        ["colpali"],
        ks=[1, 3],
        params={"colpali": {"model": model_dir, "dpi": 36}},
    )
    run = result.retrievers["colpali"]
    assert result.n_scored == len(samples) and run.n_queries == len(samples)
    for sample in samples:
        assert len(run.rankings[sample.id]) == min(3, by_name[sample.primary_doc].num_pages)
    assert 0.0 <= run.macro["recall@3"] <= 1.0
