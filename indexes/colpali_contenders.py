"""The fast MaxSim paths that compete with the matrix products on CUDA, over one packed store.

Every fast path scores from ``DeviceStore``: the packed token vectors on the device
(float16, as stored) with the page table beside them, copied once and extended when pages
are added (no padding, no per-document blocks). A path is a registered class
(``@fast_path(name)``), created on first use:

* ``kernel`` — the project's Triton kernel (``scanrag.indexes.colpali_kernel``): every query
  group and every page of the call in one launch; a scope is a list of page numbers, read in
  place;
* ``lik`` — late-interaction-kernels' ``maxsim_varlen`` (packed pages with ``cu_seqlens``, all
  queries in one launch). Its page table is cumulative, so it serves a *contiguous* run of
  pages in place (a slice of the offsets) but not a scattered scope: a scope costs one launch
  per run of consecutive pages. Its kernel computes token addresses in 32-bit integers, so a
  store of ``2**31`` elements or more (16.7M tokens of 128 dims) is refused, not misread;
* ``flash`` — flash-maxsim's ``flash_maxsim_packed`` (one query against packed pages, query
  tiles of ``FLASH_QUERY_ROWS`` rows): one launch per query and run of pages.

``unavailable`` says why a path cannot run here (not installed, no CUDA, store too large),
``None`` when it can. The scorer (``scanrag.indexes.colpali_scoring``) times the available
paths and the matrix products on the real store and keeps the fastest.
"""

from __future__ import annotations

import importlib.util
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from scanrag.indexes import colpali_kernel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scanrag.indexes.colpali_packed import PackedVectors

FAST_PATHS: dict[str, Callable[[], FastPath]] = {}
INT32_ELEMENTS = 2**31
FLASH_QUERY_ROWS = 32  # flash-maxsim's query tile: one compiled variant for every query length


def fast_path(name: str) -> Callable[[type[FastPath]], type[FastPath]]:
    """Register a fast MaxSim path under ``name`` (created lazily, once per scorer)."""

    def register(cls: type[FastPath]) -> type[FastPath]:
        cls.name = name
        FAST_PATHS[name] = cls
        return cls

    return register


class DeviceStore:
    """The packed store on ``device``: (tokens, dim) float16 ``vectors`` and int64
    ``offsets`` (pages + 1), kept in step with a ``PackedVectors`` (only new pages copied)."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.clear()

    def clear(self) -> None:
        self.vectors: Any = None
        self.offsets: Any = None
        self.lengths = np.zeros(0, dtype=np.int64)
        self._cu32: Any = None
        self._all: Any = None
        self._source: tuple[Any, int] | None = None

    @property
    def pages(self) -> int:
        return len(self.lengths)

    def sync(self, store: PackedVectors) -> None:
        import torch

        if self._source is not None and (
            self._source[0]() is not store
            or self._source[1] != store.epoch
            or self.pages > len(store)
        ):
            self.clear()
        if self.vectors is not None and self.pages == len(store):
            return
        first = int(store.offsets[self.pages])
        new = torch.from_numpy(store.vectors[first:]).to(self.device)
        self.vectors = new if self.vectors is None else torch.cat([self.vectors, new])
        self.offsets = torch.from_numpy(store.offsets).to(self.device)
        self.lengths = store.lengths.copy()
        self._cu32 = self._all = None
        self._source = (weakref.ref(store), store.epoch)

    @property
    def cu32(self) -> Any:
        """The offsets as int32 (the libraries' ``cu_seqlens``)."""
        import torch

        if self._cu32 is None:
            self._cu32 = self.offsets.to(torch.int32)
        return self._cu32

    def page_numbers(self, rows: np.ndarray | None) -> Any:
        """int64 page numbers on the device: ``rows``, or every page."""
        import torch

        if rows is not None:
            return torch.from_numpy(rows).to(self.device)
        if self._all is None:
            self._all = torch.arange(self.pages, dtype=torch.int64, device=self.device)
        return self._all


def runs(rows: np.ndarray) -> Iterator[tuple[np.ndarray, int, int]]:
    """``rows`` as runs of consecutive pages: (positions in ``rows``, first page, end page)."""
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    cuts = np.flatnonzero(np.diff(ordered) != 1) + 1
    for positions in np.split(order, cuts):
        yield positions, int(rows[positions[0]]), int(rows[positions[-1]]) + 1


class FastPath:
    """A fast MaxSim path: ``scores`` returns (queries, pages scored) float32 on the device."""

    name: ClassVar[str] = ""
    module: ClassVar[str] = ""  # the import that must be present
    install: ClassVar[str] = ""

    def unavailable(self, device: str, store: PackedVectors) -> str | None:
        if self.module and importlib.util.find_spec(self.module) is None:
            return f"{self.install or self.module} is not installed"
        if importlib.util.find_spec("triton") is None:
            return "Triton is not installed"
        if not colpali_kernel.available(device):
            return "needs CUDA"
        return None

    def scores(self, queries: Sequence[np.ndarray], store: DeviceStore, rows: Any) -> Any:
        raise NotImplementedError


@fast_path("kernel")
class ProjectKernel(FastPath):
    tile: colpali_kernel.Tile | None = None  # None: autotuned (tests force one)

    def scores(self, queries: Sequence[np.ndarray], store: DeviceStore, rows: Any) -> Any:
        groups = colpali_kernel.stack_queries(queries, store.device)
        pages = store.page_numbers(rows)
        return colpali_kernel.page_scores(groups, store.vectors, store.offsets, pages, self.tile)


class _Library(FastPath):
    """A library path over runs of consecutive pages."""

    def unavailable(self, device: str, store: PackedVectors) -> str | None:
        reason = super().unavailable(device, store)
        if reason is None and int(store.offsets[-1]) * store.dim >= INT32_ELEMENTS:
            return f"32-bit token offsets: the store holds {int(store.offsets[-1]):,} tokens"
        return reason

    def scores(self, queries: Sequence[np.ndarray], store: DeviceStore, rows: Any) -> Any:
        import torch

        if rows is None:
            return self.run(queries, store, 0, store.pages)
        out = torch.empty((len(queries), len(rows)), dtype=torch.float32, device=store.device)
        for positions, first, end in runs(rows):
            part = self.run(queries, store, first, end)
            index = torch.from_numpy(positions).to(store.device)
            out[:, index] = part[:, torch.from_numpy(rows[positions] - first).to(store.device)]
        return out

    def run(self, queries: Sequence[np.ndarray], store: DeviceStore, first: int, end: int) -> Any:
        raise NotImplementedError


@fast_path("lik")
class LateInteractionKernels(_Library):
    module, install = "late_interaction_kernels", "late-interaction-kernels"

    def run(self, queries: Sequence[np.ndarray], store: DeviceStore, first: int, end: int) -> Any:
        import torch
        from late_interaction_kernels import maxsim_varlen

        tokens = torch.from_numpy(np.concatenate(queries).astype(np.float16)).to(store.device)
        lengths = [len(q) for q in queries]
        cu_q = torch.tensor(np.cumsum([0, *lengths]), dtype=torch.int32, device=store.device)
        return maxsim_varlen(
            tokens,
            store.vectors,
            cu_q,
            store.cu32[first : end + 1],
            max(lengths),
            int(store.lengths[first:end].max(initial=0)),
        )


@fast_path("flash")
class FlashMaxSim(_Library):
    module, install = "flash_maxsim", "flash-maxsim"

    def run(self, queries: Sequence[np.ndarray], store: DeviceStore, first: int, end: int) -> Any:
        import torch
        from flash_maxsim import flash_maxsim_packed

        cu = store.cu32[first : end + 1]
        scores = torch.stack(
            [
                flash_maxsim_packed(
                    torch.from_numpy(np.asarray(q, np.float16)).to(store.device),
                    store.vectors,
                    cu,
                    query_chunk_size=FLASH_QUERY_ROWS,
                )
                for q in queries
            ]
        )
        # flash-maxsim scores a page without tokens -inf (the reference: 0)
        empty = torch.from_numpy(np.flatnonzero(store.lengths[first:end] == 0)).to(store.device)
        return scores.index_fill_(1, empty, 0.0)
