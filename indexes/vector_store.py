"""A FAISS inner-product store of chunk vectors, optionally searched on a GPU.

Kinds: ``flat`` (``IndexFlatIP``, exact; the default), ``ivf`` (``IndexIVFFlat`` with ``nlist``
cells, searched with ``nprobe``) and ``hnsw`` (``IndexHNSWFlat`` with ``hnsw_m`` links, searched
with ``ef_search``). The CPU index is the reference copy that is saved. Searching on a GPU:

* ``use_gpu`` (faiss-gpu installed and seeing a GPU): a GPU clone of the FAISS index is made
  lazily (``flat`` and ``ivf`` only: FAISS has no GPU HNSW). faiss-gpu wheels need their own
  CUDA runtime (``faiss-gpu-cu12``: CUDA 12), which may not match torch's;
* ``torch_device`` (a torch device, used when FAISS has no GPU support): a ``flat`` store is
  searched exactly by a matrix product and a top-k in torch, the vectors kept on that device
  in float32 — whatever CUDA torch was built with. The same hits as ``IndexFlatIP`` (ties
  aside); queries are scored in slices so the score matrix stays under ``TORCH_SCORE_BYTES``.

``search_backend`` names what searches (``faiss-cpu``, ``faiss-gpu`` or ``torch:<device>``)
and is recorded in the dense index's manifest.

IVF centroids must describe the whole store, so an IVF index is retrained from all vectors on
every ``add``; add documents in large batches when using it. ``nlist`` is capped so that every
cell has at least 39 training vectors, as FAISS recommends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np

FaissKind = Literal["flat", "ivf", "hnsw"]
GPU_MAX_K = 2048  # FAISS GPU search limit on k
TORCH_SCORE_BYTES = 1 << 30  # the largest (queries x vectors) float32 score block at once


def check_store_settings(kind: object, **sizes: object) -> None:
    """``ValueError`` unless ``kind`` is a known FAISS kind and every size an integer >= 1."""
    if kind not in ("flat", "ivf", "hnsw"):
        raise ValueError(f"unknown faiss index kind {kind!r}; use flat, ivf or hnsw")
    for name, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


class VectorStore:
    """Chunk vectors (float32, one row per chunk) with a FAISS index over them."""

    def __init__(
        self,
        dim: int,
        kind: FaissKind = "flat",
        nlist: int = 256,
        nprobe: int = 16,
        hnsw_m: int = 32,
        ef_search: int = 128,
        use_gpu: bool = False,
        gpu_device: int = 0,
        torch_device: str | None = None,
    ) -> None:
        check_store_settings(
            kind, dim=dim, nlist=nlist, nprobe=nprobe, hnsw_m=hnsw_m, ef_search=ef_search
        )
        if gpu_device < 0:
            raise ValueError(f"gpu_device must be >= 0, got {gpu_device}")
        self.gpu_device = gpu_device
        self.dim, self.kind = dim, kind
        self.nlist, self.nprobe, self.hnsw_m, self.ef_search = nlist, nprobe, hnsw_m, ef_search
        self.use_gpu = use_gpu and kind != "hnsw"
        self.torch_device = torch_device if kind == "flat" and not self.use_gpu else None
        self.vectors = np.zeros((0, dim), dtype=np.float32)
        self.index: Any = self._new_index(0)
        self._gpu_index: Any = None
        self._gpu_res: Any = None
        self._torch_vectors: Any = None

    @property
    def search_backend(self) -> str:
        if self.use_gpu:
            return "faiss-gpu"
        return f"torch:{self.torch_device}" if self.torch_device else "faiss-cpu"

    @property
    def exact(self) -> bool:
        return self.kind == "flat"

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def _new_index(self, n_train: int) -> Any:
        import faiss

        index: Any
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(self.dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efSearch = self.ef_search
            return index
        if self.kind == "ivf" and n_train > 0:
            nlist = max(1, min(self.nlist, n_train // 39))
            quantizer = faiss.IndexFlatIP(self.dim)
            index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.nprobe = min(self.nprobe, nlist)
            return index
        return faiss.IndexFlatIP(self.dim)

    def add(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        self.vectors = np.concatenate([self.vectors, vectors])
        if self.kind == "ivf":
            self.index = self._new_index(len(self))
            self.index.train(self.vectors)
            self.index.add(self.vectors)
        else:
            self.index.add(vectors)
        self._gpu_index = self._torch_vectors = None

    def search(self, queries: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``n`` chunks per query: (scores, chunk ids); ids are -1 where FAISS found fewer."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if self.torch_device:
            return self._torch_search(queries, min(n, len(self)))
        index = self._searcher()
        n = min(n, len(self), GPU_MAX_K if index is not self.index else len(self))
        return index.search(queries, n)

    @property
    def max_fetch(self) -> int:
        return min(len(self), GPU_MAX_K) if self.use_gpu else len(self)

    def _torch_search(self, queries: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if n <= 0 or len(queries) == 0:
            return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
        if self._torch_vectors is None:
            self._torch_vectors = torch.from_numpy(self.vectors).to(self.torch_device)
        stored = self._torch_vectors
        step = max(1, TORCH_SCORE_BYTES // (4 * len(self)))
        scores, ids = [], []
        with torch.inference_mode():
            for start in range(0, len(queries), step):
                block = torch.from_numpy(queries[start : start + step]).to(self.torch_device)
                top = torch.topk(block @ stored.T, n, dim=1)
                scores.append(top.values.cpu().numpy())
                ids.append(top.indices.cpu().numpy())
        return np.concatenate(scores), np.concatenate(ids).astype(np.int64)

    def _searcher(self) -> Any:
        if not self.use_gpu:
            return self.index
        if self._gpu_index is None:
            import faiss

            if self._gpu_res is None:
                self._gpu_res = faiss.StandardGpuResources()
            self._gpu_index = faiss.index_cpu_to_gpu(self._gpu_res, self.gpu_device, self.index)
        return self._gpu_index

    def save(self, directory: Path, vectors_file: str, index_file: str) -> None:
        import faiss

        np.save(directory / vectors_file, self.vectors, allow_pickle=False)
        faiss.write_index(self.index, str(directory / index_file))

    def load(self, directory: Path, vectors_file: str, index_file: str) -> None:
        import faiss

        vectors = np.load(directory / vectors_file, allow_pickle=False)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim or vectors.dtype != np.float32:
            raise ValueError(
                f"{vectors_file} holds {vectors.dtype} {vectors.shape}, expected float32 "
                f"(n, {self.dim})"
            )
        index: Any = faiss.read_index(str(directory / index_file))
        if index.ntotal != len(vectors) or index.d != self.dim:
            raise ValueError(
                f"{index_file} holds {index.ntotal} vectors of dim {index.d}; {vectors_file} "
                f"holds {len(vectors)} of dim {self.dim}"
            )
        if self.kind == "ivf" and hasattr(index, "nprobe"):
            index.nprobe = min(self.nprobe, index.nlist)
        if self.kind == "hnsw":
            index.hnsw.efSearch = self.ef_search
        self.vectors, self.index = vectors, index
        self._gpu_index = self._torch_vectors = None
