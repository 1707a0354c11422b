"""One build per index: composites use the instances (and the saved indexes) of the standalone
retrievers, in ``scanrag retrieve eval`` and in a run. Encoder passes are counted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scanrag.evaluation.retrieval.evaluate import evaluate_retrievers

pytestmark = pytest.mark.model


@pytest.fixture
def encodings(monkeypatch) -> Iterator[list[int]]:
    """Pages encoded by each dense encoding pass (one entry per pass)."""
    from scanrag.indexes.dense import DenseIndex

    passes: list[int] = []
    original = DenseIndex._encode_documents

    def counted(self: DenseIndex, documents: list, start: int) -> Any:
        passes.append(sum(len(d.pages) for d in documents))
        return original(self, documents, start)

    monkeypatch.setattr(DenseIndex, "_encode_documents", counted)
    yield passes


@pytest.fixture(scope="module")
def tiny_dense() -> dict[str, Any]:
    from scanrag.indexes.dense_tiny import tiny_encoder_dir

    return {"model": str(tiny_encoder_dir()), "device": "cpu"}


def test_bm25_dense_hybrid_encode_once(samples, by_name, encodings, tiny_dense, tmp_path):
    names = ["bm25", "dense", "hybrid"]
    pages = sum(d.num_pages for d in by_name.values())
    kept: dict[str, Any] = {}
    first = evaluate_retrievers(
        samples, by_name, names, [1, 3], {"dense": tiny_dense}, cache_dir=tmp_path, keep=kept
    )
    assert not first.failed and encodings == [pages]  # one pass, for dense and hybrid alike
    bm25, dense = kept["hybrid"].components  # hybrid's default components are the aliases
    assert bm25 is kept["bm25"] and dense is kept["dense"]
    assert first.retrievers["hybrid"].build_s >= first.retrievers["dense"].build_s
    again = evaluate_retrievers(
        samples, by_name, ["hybrid"], [1, 3], {"dense": tiny_dense}, cache_dir=tmp_path
    )
    assert encodings == [pages]  # the hybrid's components come from the cache
    assert again.retrievers["hybrid"].index_cached
    assert again.retrievers["hybrid"].macro == first.retrievers["hybrid"].macro


def test_a_run_that_uses_one_component_twice_encodes_once(corpus, encodings, tiny_dense, tmp_path):
    from scanrag.config import ExperimentConfig
    from scanrag.rundir import RunDir
    from scanrag.runner.executors import LocalExecutor, RunJob

    dense_entry = {"name": "dense", **tiny_dense}
    config = ExperimentConfig.model_validate(
        {
            "name": "twice",
            "datasets": [{"name": "d", "path": str(tmp_path / "q.jsonl")}],
            "retrievers": {
                "dense": {"type": "dense", "params": tiny_dense},
                "hybrid": {"type": "hybrid"},  # ("bm25", "dense") by default
                "mix": {"type": "hybrid", "params": {"retrievers": ["dense", dense_entry]}},
            },
            "strategies": [{"name": "topk_rag", "retriever": "mix"}],
            "runner": {"cache_dir": str(tmp_path / "cache"), "runs_dir": str(tmp_path)},
        }
    )
    job = RunJob(
        config=config,
        run_dir=tmp_path / "run",
        strategies={},
        datasets={},
        documents={Path(d.name): d for d in corpus},
    )
    (tmp_path / "run").mkdir()
    errors = LocalExecutor(config.runner).build_retrievers(
        job, ["dense", "hybrid", "mix"], lambda _: None
    )
    pages = sum(d.num_pages for d in corpus)
    assert errors == {} and encodings == [pages]
    dense = job.retrievers["dense"]
    assert job.retrievers["hybrid"].components[1] is dense  # type: ignore[attr-defined]
    assert all(c is dense for c in job.retrievers["mix"].components)  # type: ignore[attr-defined]
    indexes = RunDir(job.run_dir).path / RunDir.INDEXES
    assert (indexes / "dense" / "manifest.json").is_file()  # saved under its alias, once
    # a resume loads every index the run saved: no encoding at all
    again = RunJob(
        config=config,
        run_dir=job.run_dir,
        strategies={},
        datasets={},
        documents=job.documents,
    )
    assert (
        LocalExecutor(config.runner).build_retrievers(again, ["mix", "hybrid"], lambda _: None)
        == {}
    )
    assert encodings == [pages]
