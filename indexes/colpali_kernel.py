"""The project's fused MaxSim kernel (Triton): one launch per call over a packed token store.

The store stays packed on the device, as on the host: every page's token vectors one after
another in a (tokens, dim) float16 tensor, and a page table (``offsets``: page ``i`` owns
rows ``offsets[i]:offsets[i + 1]``). A call hands the kernel the page numbers to score (the
whole store or a scope, in any order: no gather copy) and its queries stacked into *groups*
of at most ``MAX_ROWS`` token rows and ``SLOTS`` queries, padded to ``BLOCK_ROWS`` rows
(16, 32, 64 or 128). One program scores one (page, group): it keeps the group's rows in
registers, walks the page's own tokens in tiles of ``BLOCK_TOKENS`` (no padding is read),
keeps a running maximum per row, then adds the rows of each query of the group (``slots``:
the query slot of every row, -1 for padding rows) and writes one score per (query, page).
Programs of one page are adjacent, so with several groups a page is read from memory once and
from the L2 cache after. A query longer than ``MAX_ROWS`` rows takes several slots whose sums
are added afterwards in a fixed order. Empty pages score 0.

Tiles (tokens per step, warps, pipeline stages) are chosen by Triton's autotuner per
(``BLOCK_ROWS``, dim) among ``TILES`` of the device's family (Hopper: ``hopper``; Ampere and
older: ``ampere``), and the choice is kept on disk (``cache_results``). Nothing here needs a
GPU to be checked: ``scanrag.indexes.colpali_aot`` compiles every variant for sm_80 and sm_90
on the CPU, and the tests run the kernel under Triton's interpreter (``TRITON_INTERPRET=1``)
with each tile against the matrix-product reference.

Kernel parameters carry no annotations but ``tl.constexpr``: Triton resolves annotations as
names inside the kernel, and ``Any`` is not one (the NameError of issue 29).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_ROWS = 128  # query token rows per group
SLOTS = 16  # queries per group
ROW_BLOCKS = (16, 32, 64, 128)  # BLOCK_ROWS values a call can pick
DIMS = (128,)  # token dimensions of the supported models (colpali-engine projects to 128)


@dataclass(frozen=True)
class Tile:
    """One autotune candidate: page tokens per step, warps, software-pipeline stages."""

    tokens: int
    warps: int
    stages: int

    def label(self) -> str:
        return f"tokens={self.tokens} warps={self.warps} stages={self.stages}"


TILES: dict[str, tuple[Tile, ...]] = {
    # 228 KB of shared memory per SM: deeper pipelines, wider token steps.
    "hopper": (Tile(64, 4, 3), Tile(128, 8, 3), Tile(64, 8, 4)),
    # 164 KB (A100) or 100 KB (A10, L4): two stages.
    "ampere": (Tile(64, 4, 2), Tile(128, 8, 2), Tile(32, 4, 2)),
}
TARGETS = {80: "ampere", 90: "hopper"}  # compute capability → tile family (AOT checks)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def available(device: str) -> bool:
    """Whether the kernel can run for ``device``: CUDA with Triton installed, or any device
    under Triton's interpreter (``TRITON_INTERPRET=1``, for tests)."""
    if importlib.util.find_spec("triton") is None:
        return False
    return device.startswith("cuda") or interpreting()


def family(capability: tuple[int, int]) -> str:
    return "hopper" if capability[0] >= 9 else "ampere"


def block_rows(rows: int) -> int:
    return next(b for b in ROW_BLOCKS if b >= min(rows, MAX_ROWS))


def block_dim(dim: int) -> int:
    return max(16, 1 << (dim - 1).bit_length())


_KERNELS: dict[str, Any] = {}


def jit_kernel() -> Any:
    """The kernel as a plain ``triton.jit`` function (defined on first use: importing Triton is
    slow). Its meta-parameters ``BLOCK_TOKENS``, ``num_warps`` and ``num_stages`` come from a
    ``Tile``."""
    if "jit" in _KERNELS:
        return _KERNELS["jit"]
    import triton
    import triton.language as tl

    @triton.jit(do_not_specialize=["columns", "groups"])  # type: ignore[misc]
    def maxsim_pages(
        queries,
        slots,
        pages,
        offsets,
        vectors,
        out,
        columns,
        groups,
        DIM: tl.constexpr,  # noqa: N803
        BLOCK_DIM: tl.constexpr,  # noqa: N803
        BLOCK_ROWS: tl.constexpr,  # noqa: N803
        SLOTS: tl.constexpr,  # noqa: N803
        BLOCK_TOKENS: tl.constexpr,  # noqa: N803
    ):
        program = tl.program_id(0)
        column = program // groups
        group = program % groups
        page = tl.load(pages + column)
        start = tl.load(offsets + page)
        stop = tl.load(offsets + page + 1)
        row = tl.arange(0, BLOCK_ROWS)
        feature = tl.arange(0, BLOCK_DIM)
        rows = group * BLOCK_ROWS + row
        query = tl.load(queries + rows[:, None] * BLOCK_DIM + feature[None, :])
        best = tl.full((BLOCK_ROWS,), float("-inf"), tl.float32)
        for first in range(start, stop, BLOCK_TOKENS):
            token = first + tl.arange(0, BLOCK_TOKENS)
            inside = token < stop
            tile = tl.load(
                vectors + token[:, None] * DIM + feature[None, :],
                mask=inside[:, None] & (feature[None, :] < DIM),
                other=0.0,
            )
            sims = tl.dot(query, tl.trans(tile))
            best = tl.maximum(best, tl.max(tl.where(inside[None, :], sims, float("-inf")), axis=1))
        best = tl.where(best == float("-inf"), 0.0, best)  # a page without tokens scores 0
        slot = tl.load(slots + rows)
        which = tl.arange(0, SLOTS)
        sums = tl.sum(tl.where(slot[:, None] == which[None, :], best[:, None], 0.0), axis=0)
        tl.store(out + (group * SLOTS + which) * columns + column, sums)

    _KERNELS["jit"] = maxsim_pages
    return maxsim_pages


def autotuned(name: str) -> Any:
    """The kernel autotuned over the tiles of family ``name`` (kept per family)."""
    if name not in _KERNELS:
        import triton

        _KERNELS[name] = triton.autotune(
            configs=[_config(tile) for tile in TILES[name]],
            key=["BLOCK_ROWS", "DIM"],
            cache_results=True,
        )(jit_kernel())
    return _KERNELS[name]


def _config(tile: Tile) -> Any:
    import triton

    return triton.Config(
        {"BLOCK_TOKENS": tile.tokens}, num_warps=tile.warps, num_stages=tile.stages
    )


@dataclass
class QueryGroups:
    """Queries stacked for the kernel, on the scoring device."""

    tokens: Any  # (groups, BLOCK_ROWS, BLOCK_DIM) float16, zero padded
    slots: Any  # (groups, BLOCK_ROWS) int32: the row's query slot in its group, -1 for padding
    parts: list[list[int]]  # per query, its rows' slots (group * SLOTS + slot), in row order
    dim: int

    @property
    def count(self) -> int:
        return int(self.tokens.shape[0])

    @property
    def rows(self) -> int:
        return int(self.tokens.shape[1])


def plan_groups(lengths: Sequence[int]) -> list[list[tuple[int, int, int]]]:
    """Queries (by their token counts) packed in order into groups of at most ``MAX_ROWS``
    rows and ``SLOTS`` queries: per group, (query, first row, end row) pieces. A query longer
    than ``MAX_ROWS`` is cut into pieces that start new groups."""
    groups: list[list[tuple[int, int, int]]] = [[]]
    used = 0
    for query, length in enumerate(lengths):
        for first in range(0, length, MAX_ROWS):
            size = min(MAX_ROWS, length - first)
            if groups[-1] and (used + size > MAX_ROWS or len(groups[-1]) == SLOTS):
                groups.append([])
                used = 0
            groups[-1].append((query, first, first + size))
            used += size
    return groups


def stack_queries(queries: Sequence[np.ndarray], device: str) -> QueryGroups:
    """The queries as ``QueryGroups`` on ``device`` (``plan_groups``)."""
    import torch

    dim = int(queries[0].shape[1])
    planned = plan_groups([len(q) for q in queries])
    rows = block_rows(max(sum(b - a for _, a, b in group) for group in planned))
    tokens = np.zeros((len(planned), rows, block_dim(dim)), dtype=np.float16)
    slots = np.full((len(planned), rows), -1, dtype=np.int32)
    parts: list[list[int]] = [[] for _ in queries]
    for g, group in enumerate(planned):
        row = 0
        for slot, (query, first, end) in enumerate(group):
            tokens[g, row : row + end - first, :dim] = queries[query][first:end]
            slots[g, row : row + end - first] = slot
            parts[query].append(g * SLOTS + slot)
            row += end - first
    return QueryGroups(
        torch.from_numpy(tokens).to(device), torch.from_numpy(slots).to(device), parts, dim
    )


def launch_arguments(
    groups: QueryGroups, vectors: Any, offsets: Any, pages: Any
) -> tuple[tuple[int], tuple[Any, ...], dict[str, Any], Any]:
    """(grid, positional arguments, constexprs, output tensor) of one launch that scores
    ``pages`` (int64 page numbers) of the packed store (``vectors``, int64 ``offsets``)."""
    import torch

    columns = int(pages.shape[0])
    out = torch.empty((groups.count * SLOTS, columns), dtype=torch.float32, device=vectors.device)
    args = (groups.tokens, groups.slots, pages, offsets, vectors, out, columns, groups.count)
    meta = {
        "DIM": groups.dim,
        "BLOCK_DIM": int(groups.tokens.shape[2]),
        "BLOCK_ROWS": groups.rows,
        "SLOTS": SLOTS,
    }
    return (columns * groups.count,), args, meta, out


def page_scores(
    groups: QueryGroups, vectors: Any, offsets: Any, pages: Any, tile: Tile | None = None
) -> Any:
    """(queries, len(pages)) float32 MaxSim scores on the device, one launch. ``tile`` forces
    one tile instead of the autotuner (the only way under the interpreter, which cannot time)."""
    import torch

    grid, args, meta, out = launch_arguments(groups, vectors, offsets, pages)
    if grid[0] == 0:
        return torch.zeros((len(groups.parts), 0), dtype=torch.float32, device=vectors.device)
    if tile is None and interpreting():
        tile = TILES["ampere"][0]
    if tile is not None:
        meta |= {"BLOCK_TOKENS": tile.tokens, "num_warps": tile.warps, "num_stages": tile.stages}
        jit_kernel()[grid](*args, **meta)
    else:
        capability = torch.cuda.get_device_capability(vectors.device)
        autotuned(family(capability))[grid](*args, **meta)
    return combine(out, groups.parts)


def combine(out: Any, parts: list[list[int]]) -> Any:
    """Per query, the sum of its slots' rows of ``out``, added in slot order."""
    import torch

    first = torch.tensor([p[0] for p in parts], device=out.device)
    scores = out.index_select(0, first)
    for k in range(1, max(len(p) for p in parts)):
        longer = [q for q, p in enumerate(parts) if len(p) > k]
        rows = torch.tensor([parts[q][k] for q in longer], device=out.device)
        scores[longer] += out.index_select(0, rows)
    return scores
