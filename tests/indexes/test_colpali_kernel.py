"""The fast MaxSim paths, run on the CPU by Triton's interpreter, against the matrix-product
reference: the project's kernel with every tile of both families, late-interaction-kernels
and flash-maxsim with every block shape of their Hopper and Ampere lists; and the query
groups the kernel is handed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scanrag.indexes import colpali_kernel

REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
import importlib, json
import numpy as np
from scanrag.indexes import colpali_aot, colpali_kernel
from scanrag.indexes.colpali_packed import PackedVectors
from scanrag.indexes.colpali_scoring import MaxSimScorer

rng = np.random.default_rng(7)

def store_of(lengths):
    store = PackedVectors(128)
    store.extend([rng.normal(size=(n, 128)).astype(np.float16) for n in lengths])
    return store

def queries(*lengths):
    return [rng.normal(size=(n, 128)).astype(np.float32) for n in lengths]

# The kernel: long and empty pages, a query over 128 rows, 20 queries (two groups), scopes in
# any order with a repeated page. The libraries are slow to interpret: a smaller case.
cases = {
    "kernel": (store_of([6, 2, 9, 0, 4, 70, 7, 3, 5, 1, 8]), np.array([0, 3, 4, 9]), {
        "mixed": queries(3, 140, 1), "twenty": queries(*[5] * 20),
    }, {"whole": None, "doc": np.arange(4, 9), "picked": np.array([10, 0, 5, 3, 3])}),
    "library": (store_of([6, 0, 37, 3, 1]), np.array([0, 2]), {
        "mixed": queries(3, 40, 1),
    }, {"whole": None, "picked": np.array([4, 0, 1, 3, 3])}),
}
plain = MaxSimScorer("cpu", 4, method="matmul")
want = {
    (case, s, c): plain.scores(q, store, r, breaks)
    for case, (store, breaks, sets, scopes) in cases.items()
    for s, q in sets.items() for c, r in scopes.items()
}
diffs = {}

def check(method, label, prepare):
    case = "kernel" if method == "kernel" else "library"
    store, breaks, sets, scopes = cases[case]
    scorer = MaxSimScorer("cpu", 4, method=method)
    prepare(scorer)
    for (which, s, c), b in want.items():
        if which == case:
            a = scorer.scores(sets[s], store, scopes[c], breaks)
            diffs[f"{method} {label} {s} {c}"] = float(np.abs(a - b).max() / np.abs(b).max())
    assert not scorer.fallbacks, scorer.fallbacks

for family, tiles in colpali_kernel.TILES.items():
    for tile in tiles:
        force = lambda s, t=tile: setattr(s.path("kernel"), "tile", t)  # noqa: E731
        check("kernel", f"{family} {tile.label()}", force)
tuners = {
    "lik": ("late_interaction_kernels.varlen", "_varlen_fwd_kernel"),
    "flash": ("flash_maxsim.flash_maxsim_varlen", "_maxsim_packed_kernel"),
}
for lib in colpali_aot.LIBRARIES:
    module, name = tuners[lib.path]
    tuner = getattr(importlib.import_module(module), name)
    shapes = {}  # warps and stages mean nothing to the interpreter: one run per block shape
    for family in ("hopper", "ampere"):
        for config in lib.configs(family):
            shapes.setdefault(tuple(sorted(config.kwargs.items())), config)
    for shape, config in shapes.items():
        tuner.configs, tuner.cache = [config], {}  # one configuration: no timing to do
        check(lib.path, " ".join(f"{k}={v}" for k, v in shape), lambda s: None)
print(json.dumps(diffs))
"""


def test_every_fast_path_and_tile_gives_the_reference_scores():
    pytest.importorskip("triton")
    for module in ("late_interaction_kernels", "flash_maxsim"):
        pytest.importorskip(module)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=REPO, capture_output=True, text=True,
        timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    diffs = json.loads(done.stdout.strip().splitlines()[-1])
    paths = {key.split()[0] for key in diffs}
    assert paths == {"kernel", "lik", "flash"}
    assert sum(key.startswith("kernel") for key in diffs) == 6 * 2 * 3  # tiles x sets x scopes
    worst = max(diffs, key=diffs.__getitem__)
    assert diffs[worst] < 1e-3, worst  # queries rounded to float16, sums in float32


def test_query_groups_hold_at_most_128_rows_and_16_queries():
    groups = colpali_kernel.plan_groups([3, 140, 1, *([5] * 20)])
    assert all(sum(b - a for _, a, b in g) <= 128 and len(g) <= 16 for g in groups)
    pieces = [(q, a, b) for g in groups for q, a, b in g]
    assert [p for p in pieces if p[0] == 1] == [(1, 0, 128), (1, 128, 140)]  # a long query
    assert sorted({q for q, _, _ in pieces}) == list(range(23))
    stacked = colpali_kernel.stack_queries(
        [np.ones((n, 24), np.float32) for n in (3, 140, 1)], "cpu"
    )
    assert stacked.rows == 128 and stacked.tokens.shape[2] == 32  # dims padded to a power of 2
    assert [len(p) for p in stacked.parts] == [1, 2, 1]
    assert int((stacked.slots >= 0).sum()) == 144  # every token row has a slot, padding none


def test_the_kernel_is_available_on_cuda_with_triton_or_under_the_interpreter(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    has_triton = colpali_kernel.importlib.util.find_spec("triton") is not None
    assert colpali_kernel.available("cuda") is has_triton
    assert colpali_kernel.available("cpu") is False
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert colpali_kernel.available("cpu") is has_triton
    monkeypatch.setattr(colpali_kernel.importlib.util, "find_spec", lambda name: None)
    assert colpali_kernel.available("cuda") is False
