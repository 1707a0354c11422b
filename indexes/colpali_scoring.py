"""MaxSim scoring of packed multi-vector pages, on the fastest path that runs here.

Pages are stored packed (``scanrag.indexes.colpali_packed.PackedVectors``: one float16 array
of token vectors, page ``i`` owning rows ``offsets[i]:offsets[i + 1]``). MaxSim (late
interaction, as in ColBERT/ColPali) scores a page against a query as the sum over query tokens
of the best dot product with any page token:

    score(q, p) = Σ_t max_j  q_t · p_j

Paths (``method``):

* ``matmul`` — the reference: padded page blocks scored by matrix products
  (``scanrag.indexes.colpali_blocks``). The CPU always runs it; every other path is checked
  against it.
* ``kernel``, ``lik``, ``flash`` — fused Triton kernels over the packed store kept on the GPU
  (``scanrag.indexes.colpali_contenders``): the project's kernel, late-interaction-kernels and
  flash-maxsim.
* ``auto`` (the default) — on CUDA, the first call over a store of at least
  ``SELECT_MIN_PAGES`` pages times every path that can run (one warm-up call, which compiles
  and autotunes, then the best of ``SELECT_REPEATS``) on that store with that call's queries,
  drops a path whose scores differ from the reference's by more than ``AGREE`` (relative),
  and keeps the fastest. Below that size ``kernel`` runs untimed (``DEFAULT_ORDER``). On a CPU
  ``auto`` is ``matmul``.

A fast path that cannot run (not installed, a compile or launch error, a disagreement) falls
back to the reference with one warning naming the cause; ``record()`` (the index manifest's
``extra.maxsim``) says which path scored, how it was chosen, the timings and every fallback.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from scanrag.indexes.colpali_blocks import BlockScorer
from scanrag.indexes.colpali_contenders import FAST_PATHS, DeviceStore, FastPath
from scanrag.indexes.colpali_packed import PackedVectors

log = logging.getLogger(__name__)
METHODS = ("auto", *FAST_PATHS, "matmul")
DEFAULT_ORDER = ("kernel", "lik", "flash")  # untimed preference on CUDA (small stores)
SELECT_MIN_PAGES = 2000  # time the paths once the store is this large
SELECT_REPEATS = 3
AGREE = 1e-2  # largest relative difference from the reference a fast path may show


def check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown MaxSim method {method!r}; known: {', '.join(METHODS)}")


class MaxSimScorer:
    """Scores queries against packed pages on ``device`` (see the module docstring)."""

    def __init__(self, device: str = "cpu", batch_pages: int = 256, method: str = "auto") -> None:
        check_method(method)
        self.device = device
        self.method = method
        self.reference = BlockScorer(device, batch_pages)
        self.device_store = DeviceStore(device)
        self.paths: dict[str, FastPath] = {}
        self.choice: dict[str, Any] = {}
        self.fallbacks: list[dict[str, str]] = []
        self._failed: set[str] = set()
        self._chosen = method if method != "auto" else None

    def record(self) -> dict[str, Any]:
        """What scored, how it was chosen, and every fallback (for the index manifest)."""
        return {"method": self.method, **self.choice, "fallbacks": list(self.fallbacks)}

    def invalidate(self) -> None:
        self.reference.invalidate()
        self.device_store.clear()

    def path(self, name: str) -> FastPath:
        if name not in self.paths:
            self.paths[name] = FAST_PATHS[name]()
        return self.paths[name]

    def scores(
        self,
        queries: Sequence[np.ndarray],
        store: PackedVectors,
        rows: np.ndarray | None = None,
        breaks: np.ndarray | None = None,
    ) -> np.ndarray:
        """MaxSim scores, shape (queries, pages in ``rows`` or the whole store), float32.
        ``breaks``: rows where a reference block must start (the documents' first pages)."""
        count = len(store) if rows is None else len(rows)
        if any(len(q) == 0 for q in queries):
            raise ValueError("every query needs at least one token vector")
        if count == 0 or not queries:
            return np.zeros((len(queries), count), dtype=np.float32)
        rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        name = self._resolve(queries, store, breaks)
        if name != "matmul":
            try:
                return self._fast(name, queries, store, rows)
            except Exception as exc:  # any compile or launch error: the reference scores
                self._fall_back(name, f"{type(exc).__name__}: {exc}")
        return self.reference.scores(queries, store, rows, breaks)

    # -- choosing the path ------------------------------------------------------------------
    def _resolve(
        self, queries: Sequence[np.ndarray], store: PackedVectors, breaks: np.ndarray | None
    ) -> str:
        if self._chosen is not None:
            if self._chosen == "matmul":
                return "matmul"
            reason = self.path(self._chosen).unavailable(self.device, store)
            if reason is None:
                return self._chosen
            self._fall_back(self._chosen, reason)
            return "matmul"
        if not self.device.startswith("cuda"):
            self.choice = {"chosen": "matmul", "by": "device: a CPU runs the matrix products"}
            return "matmul"
        runnable = [n for n in DEFAULT_ORDER if self._runnable(n, store)]
        if len(store) < SELECT_MIN_PAGES:
            chosen = runnable[0] if runnable else "matmul"
            self.choice = {"chosen": chosen, "by": f"default (under {SELECT_MIN_PAGES} pages)"}
            return chosen
        self._chosen = self._select(runnable, queries, store, breaks)
        return self._chosen

    def _runnable(self, name: str, store: PackedVectors) -> bool:
        return name not in self._failed and self.path(name).unavailable(self.device, store) is None

    def _select(
        self,
        names: list[str],
        queries: Sequence[np.ndarray],
        store: PackedVectors,
        breaks: np.ndarray | None,
    ) -> str:
        """Time ``names`` and the reference on the whole store; keep the fastest."""

        def reference_call() -> np.ndarray:
            return self.reference.scores(queries, store, None, breaks)

        reference = reference_call()
        seconds = {"matmul": _best_time(reference_call)}
        for name in names:
            try:
                got = self._fast(name, queries, store, None)  # compiles and autotunes
            except Exception as exc:
                self._fall_back(name, f"{type(exc).__name__}: {exc}")
                continue
            differs = float(np.abs(got - reference).max() / max(np.abs(reference).max(), 1e-6))
            if differs > AGREE:
                self._fall_back(name, f"scores differ from the reference by {differs:.3g}")
                continue
            seconds[name] = _best_time(lambda n=name: self._fast(n, queries, store, None))
        chosen = min(seconds, key=seconds.__getitem__)
        skipped = {n: self.path(n).unavailable(self.device, store) or "failed" for n in FAST_PATHS}
        self.choice = {
            "chosen": chosen,
            "by": f"timed on {len(store)} pages x {len(queries)} queries",
            "seconds": seconds,
            "not_timed": {n: why for n, why in skipped.items() if n not in seconds},
        }
        if chosen == "matmul":
            self.device_store.clear()
        elif self.device.startswith("cuda"):
            self.reference.invalidate()  # its padded copy of the store is no longer needed
        log.info("MaxSim on %s: %s is fastest (%s)", self.device, chosen, seconds)
        return chosen

    # -- running a fast path ----------------------------------------------------------------
    def _fast(
        self, name: str, queries: Sequence[np.ndarray], store: PackedVectors, rows: Any
    ) -> np.ndarray:
        import torch

        self.device_store.sync(store)
        with torch.inference_mode():
            scores = self.path(name).scores(queries, self.device_store, rows)
        return np.asarray(scores.cpu().numpy())

    def _fall_back(self, name: str, cause: str) -> None:
        """One warning and one record per failed path; later calls take the reference."""
        if name not in self._failed:
            self._failed.add(name)
            self.fallbacks.append({"method": name, "cause": cause})
            log.warning(
                "MaxSim path %r cannot run (%s); scoring with the matrix-product reference",
                name,
                cause,
            )
        if self._chosen == name:
            self._chosen = "matmul"
            self.choice = {"chosen": "matmul", "by": f"fallback from {name}"}
            self.device_store.clear()


def _best_time(run: Any) -> float:
    best = float("inf")
    for _ in range(SELECT_REPEATS):
        start = time.perf_counter()
        run()  # ends with the copy to the host, so the device has finished
        best = min(best, time.perf_counter() - start)
    return best
