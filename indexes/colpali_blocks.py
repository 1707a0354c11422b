"""The reference MaxSim path: padded page blocks scored by matrix products (CPU and CUDA).

Pages are scored in *blocks*: a (pages, max_tokens, dim) tensor in which a page shorter than
the block is padded with copies of its own first token vector. A copy never changes a page's
maximum, so no mask is needed (no -inf tensor to add, no second pass over the similarities);
a page without vectors is padded with zeros and scores 0. One matrix product scores a block.
On the CPU the math runs in float32; on CUDA in the storage dtype (float16, accumulated in
float32 by cuBLAS).

Blocks cover the whole store and are built once, then kept on the scoring device until pages
are added (on the CPU they hold float32, twice the size of the stored vectors). A block holds
at most ``batch_pages`` pages and never straddles a *break* (the index passes its documents'
first rows), so a document's pages sit in one or a few blocks of similar widths. A scoped
search (``rows``) picks its blocks by index: a block mostly in scope (``WHOLE_BLOCK``) is
scored whole and the scope's columns kept; otherwise its pages in scope are selected on the
device (``index_select``) — no re-packing on the host. On the CPU, a scoped search before any
whole-store search packs just its pages instead, so no float32 copy of the whole store is
made for it.

The token vectors of several queries are stacked (up to ``QUERY_ROWS`` rows) so each block is
read once per group of queries rather than once per query. Stacking only changes which rows
share a matrix product: every score is still the sum over its own query's tokens (a BLAS may
round differently for another batch shape, in the last bits at most). Scores stay on the
device until the end of the call: one copy back to the host per call.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from scanrag.indexes.colpali_packed import PackedVectors

QUERY_ROWS = 128  # query token rows multiplied against a page block at once
# Score a whole block (and keep the scope's columns) when at least this share of its pages is
# in scope, else select those pages first. A GPU is bound by memory: selecting reads and writes
# the pages and scoring reads them again (3x the share) against one read of the whole block. A
# CPU is bound by arithmetic: scoring pages out of scope costs more than copying those in it.
WHOLE_BLOCK = {"cuda": 1 / 3, "cpu": 0.9}


@dataclass
class Block:
    """Pages ``start:stop`` of the store, padded (see the module docstring), on the device."""

    start: int
    stop: int
    pages: Any  # (stop - start, width, dim) tensor


def pad_pages(store: PackedVectors, rows: np.ndarray) -> np.ndarray:
    """(len(rows), width, dim) float16: each page padded with copies of its first token; a
    page without tokens is all zeros."""
    lengths = store.lengths[rows]
    width = int(lengths.max(initial=0))
    if width == 0:
        return np.zeros((len(rows), 0, store.dim), dtype=np.float16)
    last = np.maximum(lengths - 1, 0)
    columns = np.minimum(np.arange(width)[None, :], last[:, None])
    take = store.offsets[rows][:, None] + columns
    block = store.vectors[np.minimum(take, max(len(store.vectors) - 1, 0))]
    block[lengths == 0] = 0
    return block


class BlockScorer:
    """Matrix-product MaxSim over padded blocks kept on ``device`` (module docstring)."""

    def __init__(self, device: str = "cpu", batch_pages: int = 256) -> None:
        if batch_pages < 1:
            raise ValueError(f"batch_pages must be >= 1, got {batch_pages}")
        self.device = device
        self.batch_pages = batch_pages
        self._whole_share = WHOLE_BLOCK["cuda" if device.startswith("cuda") else "cpu"]
        self._blocks: list[Block] = []
        self._starts = np.zeros(0, dtype=np.int64)
        self._source: tuple[Any, int] | None = None  # (weak reference to the store, its epoch)

    @property
    def compute_dtype(self) -> Any:
        import torch

        return torch.float16 if self.device.startswith("cuda") else torch.float32

    @property
    def cached_pages(self) -> int:
        return self._blocks[-1].stop if self._blocks else 0

    def invalidate(self) -> None:
        self._blocks, self._starts, self._source = [], np.zeros(0, dtype=np.int64), None

    def _tensor(self, block: np.ndarray) -> Any:
        import torch

        tensor = torch.from_numpy(block)
        if self.device.startswith("cuda"):
            tensor = tensor.pin_memory().to(self.device, non_blocking=True)
        return tensor.to(self.compute_dtype)

    def _sync_blocks(self, store: PackedVectors, breaks: np.ndarray | None) -> None:
        """Extend the blocks to cover ``store`` (rebuilt when the store was replaced)."""
        if self._source is not None and (
            self._source[0]() is not store
            or self._source[1] != store.epoch
            or self.cached_pages > len(store)
        ):
            self.invalidate()
        start = self.cached_pages
        cuts = np.zeros(0, dtype=np.int64) if breaks is None else np.asarray(breaks, np.int64)
        cuts = np.unique(cuts[(cuts > start) & (cuts < len(store))])
        for stop in [*cuts.tolist(), len(store)]:
            for first in range(start, stop, self.batch_pages):
                last = min(stop, first + self.batch_pages)
                padded = pad_pages(store, np.arange(first, last))
                self._blocks.append(Block(first, last, self._tensor(padded)))
            start = stop
        self._starts = np.array([b.start for b in self._blocks], dtype=np.int64)
        self._source = (weakref.ref(store), store.epoch)

    def _plan(
        self, store: PackedVectors, rows: np.ndarray | None
    ) -> Iterator[tuple[Any, Any, slice | np.ndarray]]:
        """(pages tensor, the positions in it to score as a device tensor or ``None`` for all,
        the output columns: a slice or an array of positions in ``rows``)."""
        import torch

        if rows is None:
            for block in self._blocks:
                yield block.pages, None, slice(block.start, block.stop)
            return
        if not self._blocks:  # CPU, no whole-store blocks yet: pack the scope's pages
            for first in range(0, len(rows), self.batch_pages):
                part = rows[first : first + self.batch_pages]
                packed = self._tensor(pad_pages(store, part))
                yield packed, None, np.arange(first, first + len(part))
            return
        owner = np.searchsorted(self._starts, rows, side="right") - 1
        order = np.argsort(owner, kind="stable")
        bounds = np.flatnonzero(np.diff(owner[order])) + 1
        for positions in np.split(order, bounds):
            block = self._blocks[int(owner[positions[0]])]
            local = torch.from_numpy(rows[positions] - block.start).to(block.pages.device)
            yield block.pages, local, positions

    def _best(self, tokens: Any, pages: Any, local: Any) -> Any:
        """Per query token row, the best match in each page scored (``local``: those pages
        only), float32 (rows, pages)."""
        if local is None:
            return best_matches(tokens, pages)
        if len(local) >= self._whole_share * pages.shape[0]:  # score it all, keep the scope
            return best_matches(tokens, pages)[:, local]
        return best_matches(tokens, pages.index_select(0, local))

    def _query_groups(self, queries: Sequence[np.ndarray]) -> list[tuple[Any, list[int], Any]]:
        """Queries stacked into groups of at most ``QUERY_ROWS`` token rows (a longer query is a
        group of its own): (stacked tokens, each query's first row and the end, query indices)."""
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
            bounds = np.cumsum([0] + [len(queries[i]) for i in members]).tolist()
            tokens = torch.from_numpy(stacked).to(self.device).to(self.compute_dtype)
            index = torch.tensor(members, device=self.device)
            groups.append((tokens, bounds, index))
        return groups

    def scores(
        self,
        queries: Sequence[np.ndarray],
        store: PackedVectors,
        rows: np.ndarray | None = None,
        breaks: np.ndarray | None = None,
    ) -> np.ndarray:
        """MaxSim scores, shape (queries, pages in ``rows`` or the whole store), float32, for
        non-empty queries and a non-empty scope (``MaxSimScorer.scores`` checks both).
        ``breaks``: rows where a block must start (the documents' first pages)."""
        import torch

        count = len(store) if rows is None else len(rows)
        if rows is None or self.device.startswith("cuda") or self._blocks:
            self._sync_blocks(store, breaks)
        groups = self._query_groups(queries)
        out = torch.zeros((len(queries), count), dtype=torch.float32, device=self.device)
        with torch.inference_mode():
            for pages, local, columns in self._plan(store, rows):
                for tokens, bounds, members in groups:
                    best = self._best(tokens, pages, local)  # (token rows, pages)
                    sums = torch.stack([best[a:b].sum(dim=0) for a, b in pairwise(bounds)])
                    _place(out, members, columns, sums)
        return out.cpu().numpy()


def best_matches(tokens: Any, pages: Any) -> Any:
    """Per query token row, each page's best dot product (float32), shape (rows, pages)."""
    import torch

    n, width, dim = pages.shape
    if width == 0:
        return tokens.new_zeros((tokens.shape[0], n), dtype=torch.float32)
    sims = (tokens @ pages.reshape(n * width, dim).T).view(tokens.shape[0], n, width)
    return sims.amax(dim=2).float()


def _place(out: Any, members: Any, columns: slice | np.ndarray, sums: Any) -> None:
    """Write ``sums`` (group queries x scored pages) into ``out`` at ``columns``."""
    import torch

    if isinstance(columns, slice):
        out[members, columns] = sums
        return
    index = torch.from_numpy(np.asarray(columns)).to(out.device)
    out[members.unsqueeze(1), index.unsqueeze(0)] = sums
