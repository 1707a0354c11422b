"""How the MaxSim scorer picks its path and falls back: a fast path that fails to compile or
launch gives way to the matrix-product reference with one warning and a record; ``auto``
times the paths on the real store and keeps the fastest that agrees with the reference."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest

from scanrag.indexes import colpali_contenders, colpali_kernel, colpali_scoring
from scanrag.indexes.colpali_contenders import FastPath, ProjectKernel, runs
from scanrag.indexes.colpali_packed import PackedVectors
from scanrag.indexes.colpali_scoring import MaxSimScorer


@pytest.fixture
def store() -> PackedVectors:
    rng = np.random.default_rng(3)
    packed = PackedVectors(8)
    packed.extend([rng.normal(size=(n, 8)).astype(np.float16) for n in (6, 2, 9, 0, 4, 7)])
    return packed


@pytest.fixture
def queries() -> list[np.ndarray]:
    rng = np.random.default_rng(4)
    return [rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 5)]


def test_a_failing_kernel_launch_falls_back_once_with_a_warning(
    store, queries, monkeypatch, caplog
):
    def broken(*args, **kwargs):
        raise RuntimeError("triton: out of resources: shared memory, required 300000")

    monkeypatch.setattr(ProjectKernel, "unavailable", lambda self, device, store: None)
    monkeypatch.setattr(colpali_kernel, "page_scores", broken)
    scorer = MaxSimScorer("cpu", 4, method="kernel")
    reference = MaxSimScorer("cpu", 4, method="matmul")
    with caplog.at_level(logging.WARNING, logger="scanrag.indexes.colpali_scoring"):
        first = scorer.scores(queries, store)
        second = scorer.scores(queries, store, np.array([5, 1]))
    assert np.array_equal(first, reference.scores(queries, store))
    assert np.array_equal(second, reference.scores(queries, store, np.array([5, 1])))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "out of resources" in warnings[0].getMessage()
    record = scorer.record()
    assert record["method"] == "kernel" and record["chosen"] == "matmul"
    assert record["fallbacks"] == [
        {"method": "kernel", "cause": "RuntimeError: triton: out of resources: shared memory, "
         "required 300000"}
    ]  # fmt: skip


def test_a_path_that_cannot_run_here_falls_back_with_its_reason(store, queries, caplog):
    scorer = MaxSimScorer("cpu", method="lik")
    with caplog.at_level(logging.WARNING):
        scores = scorer.scores(queries, store)
    assert np.array_equal(scores, MaxSimScorer("cpu", method="matmul").scores(queries, store))
    (fallback,) = scorer.record()["fallbacks"]
    assert fallback["method"] == "lik" and fallback["cause"] in (
        "needs CUDA",
        "late-interaction-kernels is not installed",
    )
    assert fallback["cause"] in caplog.text


def test_unknown_methods_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="known: auto, kernel, lik, flash, matmul"):
        MaxSimScorer("cpu", method="fastest")


class _Exact(FastPath):
    """A stand-in fast path: exact MaxSim from the device store, after ``delay`` seconds."""

    delay = 0.0
    offset = 0.0

    def unavailable(self, device, store):  # type: ignore[no-untyped-def]
        return None

    def scores(self, queries, store, rows):  # type: ignore[no-untyped-def]
        import torch

        time.sleep(self.delay)
        vectors, offsets = store.vectors.float(), store.offsets.tolist()
        pages = range(store.pages) if rows is None else rows.tolist()
        out = [
            [
                float((torch.from_numpy(q) @ vectors[offsets[p] : offsets[p + 1]].T).amax(1).sum())
                if offsets[p + 1] > offsets[p]
                else 0.0
                for p in pages
            ]
            for q in queries
        ]
        return torch.tensor(out) + self.offset


def _register(monkeypatch, name: str, **attributes: float) -> None:
    monkeypatch.setitem(colpali_contenders.FAST_PATHS, name, type(name, (_Exact,), attributes))


def test_auto_keeps_the_fastest_path_that_agrees_and_records_why(
    store, queries, monkeypatch, caplog
):
    _register(monkeypatch, "quick", delay=0.0)
    _register(monkeypatch, "slow", delay=0.05)
    _register(monkeypatch, "wrong", delay=0.0, offset=1.0)
    scorer = MaxSimScorer("cpu")
    exact = scorer.reference.scores

    def slower_reference(*args):  # type: ignore[no-untyped-def]
        time.sleep(0.1)
        return exact(*args)

    monkeypatch.setattr(scorer.reference, "scores", slower_reference)
    with caplog.at_level(logging.WARNING):
        chosen = scorer._select(["slow", "wrong", "quick"], queries, store, None)
    assert chosen == "quick"
    record = scorer.record()
    assert record["chosen"] == "quick" and set(record["seconds"]) == {"matmul", "slow", "quick"}
    assert record["seconds"]["quick"] < record["seconds"]["slow"] < record["seconds"]["matmul"]
    assert record["by"] == "timed on 6 pages x 2 queries"
    assert [f["method"] for f in record["fallbacks"]] == ["wrong"]
    assert "differ from the reference" in record["fallbacks"][0]["cause"]
    assert "'wrong' cannot run" in caplog.text


def test_on_cuda_a_small_store_takes_the_kernel_untimed_and_a_large_one_is_timed(
    store, queries, monkeypatch
):
    scorer = MaxSimScorer("cuda")  # nothing here touches a GPU
    if colpali_kernel.importlib.util.find_spec("triton") is None:
        pytest.skip("needs triton")
    assert scorer._resolve(queries, store, None) == "kernel"
    assert scorer.choice["by"] == f"default (under {colpali_scoring.SELECT_MIN_PAGES} pages)"
    timed = []
    monkeypatch.setattr(colpali_scoring, "SELECT_MIN_PAGES", 3)
    monkeypatch.setattr(scorer, "_select", lambda names, *a: timed.append(names) or "lik")
    assert scorer._resolve(queries, store, None) == "lik"
    assert scorer._resolve(queries, store, None) == "lik"  # chosen once
    assert len(timed) == 1 and timed[0][0] == "kernel"


def test_on_a_cpu_auto_is_the_reference(store, queries):
    scorer = MaxSimScorer("cpu")
    scorer.scores(queries, store)
    assert scorer.record() == {
        "method": "auto",
        "chosen": "matmul",
        "by": "device: a CPU runs the matrix products",
        "fallbacks": [],
    }


def test_runs_split_a_scope_into_consecutive_pages():
    got = [(p.tolist(), a, b) for p, a, b in runs(np.array([7, 2, 3, 9, 4, 3]))]
    # a repeated page starts a new run: each run is a slice of the page table
    assert got == [([1, 2], 2, 4), ([5, 4], 3, 5), ([0], 7, 8), ([3], 9, 10)]
