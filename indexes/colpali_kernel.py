"""A fused MaxSim kernel (Triton) for CUDA: each page read once, no similarity tensor.

``best_matches(tokens, pages, index)`` returns, for every query token row and every selected
page, the page's best dot product, shape (rows, len(index)), float32. One Triton program per
selected page keeps the query rows in registers, walks the page's tokens in tiles of
``BLOCK_TOKENS`` and keeps a running maximum, so the page block is read once per query group
and nothing else touches memory: the bound ``benchmarks/gpu_bench.py`` computes. The matrix
products ``scanrag.indexes.colpali_scoring`` runs otherwise write a (rows × tokens) similarity
tensor and read it back for the maximum; with ~100 query rows against 128 dims that is ~2.5× the
traffic of reading the pages. ``index`` selects pages of the block by position, so a scoped
search reads only its pages, with no gather copy.

Padding tokens of a block are copies of a real token (or zeros for a page without vectors),
so they never change a maximum and need no mask; tokens past the block width are masked.

Used on CUDA when Triton is installed (it ships with CUDA builds of torch): see
``available``. The same kernel runs on the CPU under Triton's interpreter
(``TRITON_INTERPRET=1``), which is how the tests check it on machines without a GPU. Tile
sizes are untuned defaults.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

MAX_ROWS = 128  # query rows per launch (longer groups are split)
BLOCK_TOKENS = 64


def available(device: str) -> bool:
    """Whether the kernel can run for ``device``: CUDA with Triton installed, or any device
    under Triton's interpreter (``TRITON_INTERPRET=1``, for tests)."""
    if importlib.util.find_spec("triton") is None:
        return False
    return device.startswith("cuda") or os.environ.get("TRITON_INTERPRET") == "1"


_KERNEL: Any = None


def _kernel() -> Any:
    """The compiled kernel, defined on first use (importing Triton is slow)."""
    global _KERNEL
    if _KERNEL is not None:
        return _KERNEL
    import triton
    import triton.language as tl

    @triton.jit  # type: ignore[misc]
    def maxsim(
        q_ptr: Any,
        p_ptr: Any,
        index_ptr: Any,
        out_ptr: Any,
        rows: Any,
        width: Any,
        dim: Any,
        stride_page: Any,
        stride_token: Any,
        columns: Any,
        BLOCK_ROWS: tl.constexpr,  # noqa: N803
        BLOCK_TOKENS: tl.constexpr,  # noqa: N803
        BLOCK_DIM: tl.constexpr,  # noqa: N803
    ) -> None:
        column = tl.program_id(0)
        page = tl.load(index_ptr + column)
        row = tl.arange(0, BLOCK_ROWS)
        feature = tl.arange(0, BLOCK_DIM)
        query = tl.load(
            q_ptr + row[:, None] * dim + feature[None, :],
            mask=(row[:, None] < rows) & (feature[None, :] < dim),
            other=0.0,
        )
        best = tl.full((BLOCK_ROWS,), float("-inf"), tl.float32)
        for start in range(0, width, BLOCK_TOKENS):
            token = start + tl.arange(0, BLOCK_TOKENS)
            vectors = tl.load(
                p_ptr + page * stride_page + token[:, None] * stride_token + feature[None, :],
                mask=(token[:, None] < width) & (feature[None, :] < dim),
                other=0.0,
            )
            sims = tl.dot(query, tl.trans(vectors))
            sims = tl.where(token[None, :] < width, sims, float("-inf"))
            best = tl.maximum(best, tl.max(sims, axis=1))
        tl.store(out_ptr + row * columns + column, best, mask=row < rows)

    _KERNEL = maxsim
    return maxsim


def best_matches(tokens: Any, pages: Any, index: Any) -> Any:
    """(rows, len(index)) float32: per query token row, the best dot product with any token of
    each selected page. ``tokens`` (rows, dim) and ``pages`` (n, width, dim) share a dtype and
    device; ``index`` is an int64 tensor of page positions on that device."""
    import torch
    import triton

    rows, dim = tokens.shape
    width = pages.shape[1]
    out = torch.zeros((rows, len(index)), dtype=torch.float32, device=tokens.device)
    if width == 0 or len(index) == 0:  # pages without vectors score 0
        return out
    pages = pages.contiguous()
    kernel = _kernel()
    block_dim = max(16, triton.next_power_of_2(dim))
    for first in range(0, rows, MAX_ROWS):
        part = tokens[first : first + MAX_ROWS].contiguous()
        result = torch.empty((len(part), len(index)), dtype=torch.float32, device=tokens.device)
        kernel[(len(index),)](
            part,
            pages,
            index,
            result,
            len(part),
            width,
            dim,
            pages.stride(0),
            pages.stride(1),
            len(index),
            BLOCK_ROWS=max(16, triton.next_power_of_2(len(part))),
            BLOCK_TOKENS=BLOCK_TOKENS,
            BLOCK_DIM=block_dim,
        )
        out[first : first + len(part)] = result
    return out
