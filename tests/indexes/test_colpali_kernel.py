"""The fused Triton MaxSim kernel, run on the CPU by Triton's interpreter, against the matrix
product path; and when the scorer picks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanrag.indexes import colpali_kernel
from scanrag.indexes.colpali_scoring import MaxSimScorer

REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
import json
import numpy as np
from scanrag.indexes.colpali_scoring import MaxSimScorer, PackedVectors

rng = np.random.default_rng(7)
lengths = [6, 2, 9, 0, 4, 70, 7, 3, 5, 1, 8]
pages = [rng.normal(size=(n, 24)).astype(np.float16) for n in lengths]
store = PackedVectors(24)
store.extend(pages)
breaks = np.array([0, 3, 4, 9])
queries = [rng.normal(size=(n, 24)).astype(np.float32) for n in (3, 140, 1)]
fused, plain = MaxSimScorer("cpu", 4, kernel=True), MaxSimScorer("cpu", 4, kernel=False)
diffs = {}
for name, rows in (("whole", None), ("doc", np.arange(4, 9)), ("picked", np.array([10, 0, 5, 3]))):
    a = fused.scores(queries, store, rows, breaks)
    b = plain.scores(queries, store, rows, breaks)
    diffs[name] = float(np.abs(a - b).max() / np.abs(b).max())
print(json.dumps(diffs))
"""


def test_the_kernel_gives_the_matrix_product_scores():
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=REPO, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    diffs = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(diffs) == {"whole", "doc", "picked"}
    assert max(diffs.values()) < 1e-5


def test_the_scorer_uses_the_kernel_on_cuda_when_triton_is_there(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    has_triton = colpali_kernel.available("cuda")
    assert MaxSimScorer("cuda").kernel is has_triton  # nothing touches the GPU here
    assert MaxSimScorer("cpu").kernel is False
    assert MaxSimScorer("cuda", kernel=False).kernel is False
    monkeypatch.setattr(colpali_kernel.importlib.util, "find_spec", lambda name: None)
    assert colpali_kernel.available("cuda") is False


def test_the_scorer_hands_blocks_and_selections_to_the_kernel(monkeypatch):
    """With the kernel chosen, scoped searches pass page positions: no gather, no whole-block
    scoring (the kernel is stood in for by the matrix product)."""
    import numpy as np

    from scanrag.indexes import colpali_scoring
    from scanrag.indexes.colpali_scoring import PackedVectors

    calls = []

    def stand_in(tokens, pages, index):
        calls.append((pages.shape[0], index.tolist()))
        return colpali_scoring._best(tokens, pages.index_select(0, index))

    monkeypatch.setattr(colpali_kernel, "best_matches", stand_in)
    store = PackedVectors(4)
    store.extend([np.ones((n, 4), np.float16) * (i + 1) for i, n in enumerate([2, 3, 1, 4])])
    scorer = MaxSimScorer("cpu", 8, kernel=True)
    query = [np.ones((2, 4), np.float32)]
    whole = scorer.scores(query, store, None, np.array([0, 2]))
    assert calls == [(2, [0, 1]), (2, [0, 1])]
    scoped = scorer.scores(query, store, np.array([3, 1]), np.array([0, 2]))
    assert calls[2:] == [(2, [1]), (2, [1])]
    assert scoped[0].tolist() == whole[0, [3, 1]].tolist()
