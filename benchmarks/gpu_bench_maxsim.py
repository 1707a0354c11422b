"""The MaxSim section of ``benchmarks/gpu_bench.py``: every path side by side on one store.

One synthetic store (``colpali.synthetic_store``: ``pages`` pages of ~``tokens`` float16 unit
vectors of 128 dims), ``queries`` queries of ``query_tokens`` tokens, documents of
``doc_pages`` pages. Each MaxSim path of ``scanrag.indexes.colpali_scoring`` that can run here
(``kernel``, ``lik``, ``flash`` on CUDA; ``matmul``, the reference, everywhere) and
colpali-engine's ``score_multi_vector`` are timed on the same calls, interleaved, best of
``repeats``, as (page, query) pairs scored per second:

* ``whole`` — every page, all queries in one call; ``one_query`` — every page, one query;
* ``scoped_half`` — every other page (a scattered scope); ``per_document`` — one call per
  document, the way an agent scoped to one document searches;
* ``first_call`` — a fresh scorer's first whole-store call with the kernels already compiled
  (the store is moved to the device); ``first_call_cold`` — the path's very first call in
  this process, compiling and autotuning too (the fused paths share one device copy of the
  store, which the first of them makes).

The bound is reading the packed store once per call at the bandwidth of a measured
device-to-device copy (bytes read and written per second); ``*_fraction_of_bound`` divides by
it. ``*_max_rel_diff_vs_reference`` compares each path's whole-store scores with the
reference's, ``*_max_rel_diff_vs_engine`` with colpali-engine's (largest difference over the
largest score). ``auto`` is what the scorer picks by itself (``record()``). A path that cannot
run says why (``*_unavailable``); one that fails says how (``*_failed``) and is not timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from colpali import synthetic_store

PATHS = ("kernel", "lik", "flash", "matmul")


def copy_bandwidth(device: str, megabytes: int = 512, repeats: int = 5) -> float:
    """Bytes moved per second (read + write) by a device-to-device copy."""
    import torch

    src = torch.empty(megabytes << 20, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    sync = _sync(device)
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        dst.copy_(src)
        sync()
        best = min(best, time.perf_counter() - start)
    return 2 * src.numel() / best


def _sync(device: str) -> Callable[[], None]:
    import torch

    return torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def maxsim(
    progress: Any,
    pages: int,
    tokens: int,
    doc_pages: int,
    repeats: int,
    queries: int = 5,
    query_tokens: int = 20,
) -> None:
    """The section's figures, written into ``progress.figures`` stage by stage."""
    from scanrag.indexes.colpali_models import select_device

    figures = progress.figures
    device = select_device()
    progress.stage("synthetic store", 1)
    store = synthetic_store(pages, tokens, 128)
    rng = np.random.default_rng(1)
    asked = [rng.standard_normal((query_tokens, 128), dtype=np.float32) for _ in range(queries)]
    for q in asked:
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    breaks = np.arange(0, pages, doc_pages)
    half = np.arange(0, pages, 2)
    packed = int(store.vectors.nbytes)
    figures |= {
        "device": device,
        "shape": f"{pages} pages x ~{tokens} tokens x 128, {queries} queries x {query_tokens}",
        "packed_store_bytes": packed,
    }
    progress.stage("device copy bandwidth", 1)
    bandwidth = copy_bandwidth(device, megabytes=min(512, max(16, 2 * packed >> 20)))
    figures |= {
        "copy_bandwidth_gb_s": bandwidth / 1e9,
        "bound_pairs_per_s": bandwidth / packed * pages * queries,
        "bound_pairs_per_s_one_query": bandwidth / packed * pages,
    }
    scorers, reference = _first_calls(progress, device, store, asked, breaks)
    docs = [np.arange(b, min(b + doc_pages, pages)) for b in breaks]
    calls = _calls(scorers, store, asked, breaks, half, docs)
    engine = _engine(device, store, asked)
    if engine is not None:
        calls["engine whole"], calls["engine scoped_half"] = engine["whole"], engine["half"](half)
    progress.stage("timing, interleaved", repeats * len(calls))
    best: dict[str, float] = {}
    for _ in range(repeats):
        for label, call in calls.items():
            spent = _timed(call)
            best[label] = min(best.get(label, spent), spent)
            progress.advance()
    wholes = {name: s.scores(asked, store, None, breaks) for name, s in scorers.items()}
    _figures(figures, best, pages, len(half), queries, reference, wholes, engine)
    progress.stage("auto: what the scorer picks by itself", 1)
    figures["auto"] = _auto(device, store, asked, breaks)


def _first_calls(
    progress: Any, device: str, store: Any, asked: list[np.ndarray], breaks: np.ndarray
) -> tuple[dict[str, Any], np.ndarray]:
    """Each runnable path's scorer after its first calls (timed), and the reference scores."""
    from scanrag.indexes.colpali_contenders import DeviceStore
    from scanrag.indexes.colpali_scoring import MaxSimScorer

    figures, shared = progress.figures, DeviceStore(device)
    n = len(store) * len(asked)
    scorers: dict[str, Any] = {}
    reference = np.zeros(0)
    for name in PATHS:
        scorer = MaxSimScorer(device, method=name)
        reason = None if name == "matmul" else scorer.path(name).unavailable(device, store)
        if reason is not None:
            figures[f"{name}_unavailable"] = reason
            continue
        scorer.device_store = shared  # one device copy of the store for every fused path
        progress.stage(f"{name}: first calls", 2)
        cold = _timed(lambda s=scorer: s.scores(asked, store, None, breaks))
        progress.advance()
        if scorer.fallbacks:
            figures[f"{name}_failed"] = scorer.fallbacks[0]["cause"]
            continue
        fresh = MaxSimScorer(device, method=name)  # its own copy: the store moves again
        warm = _timed(lambda s=fresh: s.scores(asked, store, None, breaks))
        del fresh
        progress.advance()
        figures[f"{name}_pairs_per_s_first_call_cold"] = n / cold
        figures[f"{name}_pairs_per_s_first_call"] = n / warm
        scorers[name] = scorer
        if name == "matmul":
            reference = scorer.scores(asked, store, None, breaks)
    _free(device)
    return scorers, reference


def _calls(
    scorers: dict[str, Any],
    store: Any,
    asked: list[np.ndarray],
    breaks: np.ndarray,
    half: np.ndarray,
    docs: list[np.ndarray],
) -> dict[str, Callable[[], Any]]:
    calls: dict[str, Callable[[], Any]] = {}
    for name, scorer in scorers.items():

        def per_document(s: Any = scorer) -> None:
            for rows in docs:
                s.scores(asked, store, rows, breaks)

        calls |= {
            f"{name} whole": lambda s=scorer: s.scores(asked, store, None, breaks),
            f"{name} one_query": lambda s=scorer: s.scores(asked[:1], store, None, breaks),
            f"{name} scoped_half": lambda s=scorer: s.scores(asked, store, half, breaks),
            f"{name} per_document": per_document,
        }
    return calls


def _figures(
    figures: dict[str, Any],
    best: dict[str, float],
    pages: int,
    scoped: int,
    queries: int,
    reference: np.ndarray,
    wholes: dict[str, np.ndarray],
    engine: dict[str, Any] | None,
) -> None:
    n = pages * queries
    if engine is not None:
        figures["engine_pairs_per_s"] = n / best["engine whole"]
        figures["engine_pairs_per_s_scoped_half"] = scoped * queries / best["engine scoped_half"]
    for name, whole in wholes.items():
        rate = {
            "": n / best[f"{name} whole"],
            "_one_query": pages / best[f"{name} one_query"],
            "_scoped_half": scoped * queries / best[f"{name} scoped_half"],
            "_per_document": n / best[f"{name} per_document"],
        }
        figures |= {f"{name}_pairs_per_s{key}": value for key, value in rate.items()}
        figures[f"{name}_fraction_of_bound"] = rate[""] / figures["bound_pairs_per_s"]
        figures[f"{name}_fraction_of_bound_one_query"] = (
            rate["_one_query"] / figures["bound_pairs_per_s_one_query"]
        )
        figures[f"{name}_max_rel_diff_vs_reference"] = _rel(whole, reference)
        if engine is not None:
            figures[f"{name}_scoped_half_over_engine"] = (
                rate["_scoped_half"] / figures["engine_pairs_per_s_scoped_half"]
            )
            figures[f"{name}_max_rel_diff_vs_engine"] = _rel(whole, engine["scores"])
    if wholes:
        figures["fastest_whole"] = max(wholes, key=lambda s: figures[f"{s}_pairs_per_s"])


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-12))


def _auto(device: str, store: Any, asked: list[np.ndarray], breaks: np.ndarray) -> dict[str, Any]:
    from scanrag.indexes.colpali_scoring import MaxSimScorer

    scorer = MaxSimScorer(device)
    scorer.scores(asked, store, None, breaks)
    record = scorer.record()
    del scorer
    _free(device)
    return record


def _free(device: str) -> None:
    import gc

    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _engine(device: str, store: Any, queries: list[np.ndarray]) -> dict[str, Any] | None:
    """colpali-engine's scorer on the same pages (``None`` when it is not installed)."""
    try:
        from colpali_engine.utils.processing_utils import BaseVisualRetrieverProcessor as Engine
    except ImportError:
        return None
    import torch

    dtype = torch.float32 if device == "cpu" else torch.float16
    qs = [torch.from_numpy(q).to(dtype) for q in queries]
    ps = [torch.from_numpy(store.page(i).astype(np.float32)).to(dtype) for i in range(len(store))]

    def score(pages: list[Any]) -> Any:
        return Engine.score_multi_vector(qs, pages, batch_size=256, device=device)

    return {
        "scores": score(ps).float().numpy(),
        "whole": lambda: score(ps),
        "half": lambda rows: lambda: score([ps[i] for i in rows]),
    }
