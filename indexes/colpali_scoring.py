"""Packed multi-vector page storage and batched MaxSim scoring.

All page vectors live in one float16 array ``vectors`` (tokens, dim); page ``i`` owns rows
``offsets[i]:offsets[i + 1]``. MaxSim (late interaction, as in ColBERT/ColPali) scores a page
against a query as the sum over query tokens of the best dot product with any page token:

    score(q, p) = Σ_t max_j  q_t · p_j

Pages are scored in batches: a batch is a zero-padded (pages, max_tokens, dim) tensor with a
mask, so one matrix product scores a whole batch and padding never wins a max. On the CPU the
math runs in float32; on CUDA in the storage dtype (float16, accumulated in float32 by cuBLAS).
Batches covering the whole store are built once and kept on the scoring device until pages are
added (on the CPU that cache holds float32, twice the size of the stored vectors). The token
vectors of several queries are stacked (up to ``QUERY_ROWS`` rows) so each page batch is read
once per group of queries rather than once per query. Stacking only changes which rows share a
matrix product: every score is still the sum over its own query's tokens (a BLAS may round
differently for another batch shape, in the last bits at most).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

QUERY_ROWS = 128  # query token rows multiplied against a page batch at once


class PackedVectors:
    """Float16 multi-vector pages packed into one array plus row offsets."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.vectors = np.zeros((0, dim), dtype=np.float16)
        self.offsets = np.zeros(1, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def page(self, row: int) -> np.ndarray:
        return self.vectors[self.offsets[row] : self.offsets[row + 1]]

    def extend(self, pages: Sequence[np.ndarray]) -> None:
        for vectors in pages:
            if vectors.ndim != 2 or vectors.shape[1] != self.dim:
                raise ValueError(f"page vectors of shape {vectors.shape}; expected (n, {self.dim})")
        if not pages:
            return
        lengths = np.array([len(v) for v in pages], dtype=np.int64)
        self.vectors = np.concatenate([self.vectors, *(v.astype(np.float16) for v in pages)])
        self.offsets = np.concatenate([self.offsets, self.offsets[-1] + np.cumsum(lengths)])

    def replace(self, vectors: np.ndarray, offsets: np.ndarray) -> None:
        """Install loaded arrays after checking they are consistent."""
        offsets = np.asarray(offsets, dtype=np.int64)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim or vectors.dtype != np.float16:
            raise ValueError(
                f"vectors are {vectors.dtype} {vectors.shape}; expected float16 (n, {self.dim})"
            )
        if (
            offsets.ndim != 1
            or offsets.size < 1
            or offsets[0] != 0
            or offsets[-1] != len(vectors)
            or np.any(np.diff(offsets) < 0)
        ):
            raise ValueError("page offsets do not partition the stored vectors")
        self.vectors, self.offsets = vectors, offsets


class MaxSimScorer:
    """Scores queries against packed pages on ``device`` (see the module docstring)."""

    def __init__(self, device: str = "cpu", batch_pages: int = 256) -> None:
        if batch_pages < 1:
            raise ValueError(f"batch_pages must be >= 1, got {batch_pages}")
        self.device = device
        self.batch_pages = batch_pages
        self._cache: list[tuple[Any, Any]] = []
        self._cached_pages = 0

    @property
    def compute_dtype(self) -> Any:
        import torch

        return torch.float16 if self.device.startswith("cuda") else torch.float32

    def invalidate(self) -> None:
        self._cache, self._cached_pages = [], 0

    def _pad(self, store: PackedVectors, rows: np.ndarray) -> tuple[Any, Any]:
        """A (pages, max_tokens, dim) tensor of ``rows`` and an additive mask (0 / -inf), or
        ``None`` when every page has the same length."""
        import torch

        lengths = store.lengths[rows]
        width = int(lengths.max(initial=0))
        starts = store.offsets[rows]
        if np.all(lengths == width):
            index = (starts[:, None] + np.arange(width)[None, :]).ravel()
            block = store.vectors[index].reshape(len(rows), width, store.dim)
            mask = None
        else:
            block = np.zeros((len(rows), width, store.dim), dtype=np.float16)
            for i, (start, length) in enumerate(zip(starts, lengths, strict=True)):
                block[i, :length] = store.vectors[start : start + length]
            pad = np.arange(width)[None, :] >= lengths[:, None]
            mask = torch.zeros(pad.shape, dtype=self.compute_dtype)
            mask[torch.from_numpy(pad)] = float("-inf")
            mask = mask.to(self.device)
        tensor = torch.from_numpy(block).to(self.device).to(self.compute_dtype)
        return tensor, mask

    def _batches(self, store: PackedVectors, rows: np.ndarray | None) -> Iterator[tuple[Any, Any]]:
        if rows is not None:
            for start in range(0, len(rows), self.batch_pages):
                yield self._pad(store, rows[start : start + self.batch_pages])
            return
        if self._cached_pages > len(store):
            self.invalidate()
        while self._cached_pages < len(store):
            last = min(len(store), self._cached_pages + self.batch_pages)
            self._cache.append(self._pad(store, np.arange(self._cached_pages, last)))
            self._cached_pages = last
        yield from self._cache

    def _query_groups(self, queries: Sequence[np.ndarray]) -> list[tuple[Any, Any, list[int]]]:
        """Queries stacked into groups of at most ``QUERY_ROWS`` token rows (a longer query is a
        group of its own): (stacked tokens, first row of each query, query indices)."""
        import torch

        grouped: list[list[int]] = [[]]
        rows = 0
        for i, query in enumerate(queries):
            if grouped[-1] and rows + len(query) > QUERY_ROWS:
                grouped.append([])
                rows = 0
            grouped[-1].append(i)
            rows += len(query)
        groups = []
        for members in grouped:
            stacked = np.concatenate([np.asarray(queries[i], np.float32) for i in members])
            starts = np.cumsum([0] + [len(queries[i]) for i in members[:-1]])
            tokens = torch.from_numpy(stacked).to(self.device).to(self.compute_dtype)
            groups.append((tokens, starts, members))
        return groups

    def scores(
        self, queries: Sequence[np.ndarray], store: PackedVectors, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """MaxSim scores, shape (queries, pages in ``rows`` or the whole store), float32."""
        import torch

        count = len(store) if rows is None else len(rows)
        out = np.zeros((len(queries), count), dtype=np.float32)
        if any(len(q) == 0 for q in queries):
            raise ValueError("every query needs at least one token vector")
        if count == 0 or not queries:
            return out
        groups = self._query_groups(queries)
        col = 0
        with torch.inference_mode():
            for pages, mask in self._batches(store, rows):
                n, width = pages.shape[0], pages.shape[1]
                if width == 0:  # pages without vectors score 0
                    col += n
                    continue
                flat = pages.reshape(n * width, store.dim).T
                for tokens, starts, members in groups:
                    sims = (tokens @ flat).view(tokens.shape[0], n, width)
                    if mask is not None:
                        sims = sims + mask
                    best = sims.amax(dim=2).float()
                    best = torch.where(torch.isfinite(best), best, torch.zeros_like(best))
                    out[members, col : col + n] = np.add.reduceat(best.cpu().numpy(), starts)
                col += n
        return out
