"""Dense build speed per encoder backend, interleaved so that shared-CPU load hits all alike.

A *build* is ``DenseIndex(backend=...).add(pages)``: chunking into token windows, encoding every
chunk, adding the vectors to FAISS. The sample documents are cut into slices of ``slice_pages``
pages and every backend builds each slice in turn, the order rotating from slice to slice; per
backend the slice times are summed and the best of ``repeats`` sums is kept. Vectors of each
backend are compared with torch's (cosine, same chunks).

Threads: torch uses its default (``torch.get_num_threads()``), ONNX Runtime its default intra-op
count (physical cores) with one inter-op thread; both are printed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from scanrag.schemas import Document


def page_slices(documents: Sequence[Document], slice_pages: int) -> list[Document]:
    """The documents cut into documents of at most ``slice_pages`` pages (ids made unique)."""
    out = []
    for doc in documents:
        for start in range(0, len(doc.pages), slice_pages):
            pages = doc.pages[start : start + slice_pages]
            out.append(doc.model_copy(update={"pages": pages, "id": f"{doc.id}@{start}"}))
    return out


def backend_speed(
    documents: Sequence[Document],
    backends: Sequence[str],
    repeats: int = 2,
    slice_pages: int = 8,
) -> dict[str, Any]:
    """Build seconds, pages/s, speed-up over torch and cosine to torch, per backend."""
    import torch

    from scanrag.indexes.dense import DenseIndex

    slices = page_slices(documents, slice_pages)
    pages = sum(len(d.pages) for d in slices)
    names = list(dict.fromkeys(["torch", *backends]))
    DenseIndex(backend="torch", device="cpu")  # load (and for ONNX export) before timing
    for name in names:
        DenseIndex(backend=name, device="cpu")
    best = dict.fromkeys(names, float("inf"))
    vectors: dict[str, np.ndarray] = {}
    for repeat in range(repeats):
        spent = dict.fromkeys(names, 0.0)
        parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
        for i, part in enumerate(slices):
            shift = (i + repeat) % len(names)
            for name in names[shift:] + names[:shift]:
                index = DenseIndex(backend=name, device="cpu")
                start = time.perf_counter()
                index.add([part])
                spent[name] += time.perf_counter() - start
                parts[name].append(index.store.vectors.copy())
        for name in names:
            best[name] = min(best[name], spent[name])
            vectors[name] = np.concatenate(parts[name])
    reference = vectors["torch"]
    rows = {}
    for name in names:
        cosine = (vectors[name] * reference).sum(1)
        filled = np.linalg.norm(reference, axis=1) > 0
        rows[name] = {
            "build_s": best[name],
            "pages_per_s": pages / best[name],
            "speedup_vs_torch": best["torch"] / best[name],
            "cos_mean": float(cosine[filled].mean()) if filled.any() else 1.0,
            "cos_min": float(cosine[filled].min()) if filled.any() else 1.0,
        }
    return {
        "documents": [d.name for d in documents],
        "pages": pages,
        "chunks": len(reference),
        "slice_pages": slice_pages,
        "repeats": repeats,
        "torch_threads": torch.get_num_threads(),
        "backends": rows,
    }


def print_speed(figures: dict[str, Any]) -> None:
    print(
        f"\n## Dense build speed per backend ({figures['pages']} pages, {figures['chunks']} "
        f"chunks of {', '.join(figures['documents'])}; {figures['slice_pages']}-page slices "
        f"interleaved, best of {figures['repeats']}; torch threads {figures['torch_threads']})\n"
    )
    print("| backend | build s | pages/s | speed-up vs torch fp32 | cos mean | cos min |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, row in figures["backends"].items():
        print(
            f"| {name} | {row['build_s']:.1f} | {row['pages_per_s']:.2f} | "
            f"{row['speedup_vs_torch']:.2f}× | {row['cos_mean']:.5f} | {row['cos_min']:.5f} |"
        )
