"""Where each image patch of a page sits: the patch grid of one processed page.

A late-interaction model returns one vector per input token; the image tokens among them are
the page's patches. A *layout* finds them in the processor output and puts them on the grid
they cover, so similarity maps can be turned into page boxes (``scanrag.indexes.colpali_regions``).

* Qwen2-VL / Qwen2.5-VL (ColQwen2, ColQwen2.5): the page is resized to ``grid_h × grid_w``
  patches of 14 px (``image_grid_thw``, reported before merging); the vision merger fuses each
  2 × 2 block (``merge_size``) into one token, so the token grid is ``grid_h/2 × grid_w/2``,
  row-major, whole page, no padding.
* PaliGemma (ColPali): the page is squashed to a square (448 px for ColPali v1.x) and every
  SigLIP patch is one token, row-major, so the grid is ``√n × √n``.
* Idefics3 (ColSmol / ColIdefics3): the page is resized to a multiple of the tile size and cut
  into ``R × C`` tiles, each ``image_seq_len`` tokens (a ``√s × √s`` grid), tile after tile in
  row-major order, followed by a downscaled global view. The tile counts come from the
  ``<row_r_col_c>`` tags in the prompt; the global view has no place on the grid and is left out
  of region maps (it still counts for scoring).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PatchGrid:
    """The patch grid of one page: ``tokens[r * cols + c]`` is the position, among the page's
    stored vectors, of the token that covers cell ``(r, c)``."""

    rows: int
    cols: int
    tokens: np.ndarray

    def __post_init__(self) -> None:
        if self.tokens.shape != (self.rows * self.cols,):
            raise ValueError(
                f"a {self.rows}x{self.cols} grid needs {self.rows * self.cols} token positions, "
                f"got {self.tokens.shape}"
            )


EMPTY_GRID = PatchGrid(0, 0, np.zeros(0, dtype=np.int32))

# (processor output for a batch, index in the batch, processor) -> image-token positions in
# the *padded* sequence, row-major over the grid, and the grid shape
Layout = Callable[[Mapping[str, Any], int, Any], tuple[np.ndarray, int, int]]


def _image_positions(batch: Mapping[str, Any], i: int, processor: Any) -> np.ndarray:
    mask = processor.get_image_mask(batch)[i]
    return np.flatnonzero(np.asarray(mask.cpu() if hasattr(mask, "cpu") else mask))


def qwen_layout(batch: Mapping[str, Any], i: int, processor: Any) -> tuple[np.ndarray, int, int]:
    positions = _image_positions(batch, i, processor)
    _, grid_h, grid_w = (int(v) for v in batch["image_grid_thw"][i])
    merge = int(getattr(processor.image_processor, "merge_size", 2))
    return positions, grid_h // merge, grid_w // merge


def square_layout(batch: Mapping[str, Any], i: int, processor: Any) -> tuple[np.ndarray, int, int]:
    positions = _image_positions(batch, i, processor)
    side = math.isqrt(len(positions))
    if side * side != len(positions):
        raise ValueError(f"{len(positions)} image tokens do not form a square patch grid")
    return positions, side, side


def tiled_layout(batch: Mapping[str, Any], i: int, processor: Any) -> tuple[np.ndarray, int, int]:
    positions = _image_positions(batch, i, processor)
    seq = int(processor.image_seq_len)
    side = math.isqrt(seq)
    ids = [int(t) for t in batch["input_ids"][i]]
    tiles_r, tiles_c = _tile_counts(ids, processor.tokenizer)
    if tiles_r * tiles_c == 0:  # not split: the global view is the whole page
        if len(positions) != seq:
            raise ValueError(f"{len(positions)} image tokens but no <row_r_col_c> tile tags")
        tiles_r = tiles_c = 1
        local = positions
    else:
        local = positions[: tiles_r * tiles_c * seq]
    if side * side != seq or len(local) != tiles_r * tiles_c * seq:
        raise ValueError(
            f"{len(positions)} image tokens do not match {tiles_r}x{tiles_c} tiles of {seq}"
        )
    order = tiled_order(tiles_r, tiles_c, side)
    return local[order], tiles_r * side, tiles_c * side


def tiled_order(tiles_r: int, tiles_c: int, side: int) -> np.ndarray:
    """For each cell of the full grid (row-major), its index in tile-after-tile token order."""
    rows, cols = np.divmod(np.arange(tiles_r * side * tiles_c * side), tiles_c * side)
    tile = (rows // side) * tiles_c + cols // side
    return (tile * side * side + (rows % side) * side + cols % side).astype(np.int64)


def _tile_counts(ids: list[int], tokenizer: Any, limit: int = 16) -> tuple[int, int]:
    present = set(ids)
    rows = cols = 0
    unk = getattr(tokenizer, "unk_token_id", None)
    for r in range(1, limit + 1):
        for c in range(1, limit + 1):
            token = tokenizer.convert_tokens_to_ids(f"<row_{r}_col_{c}>")
            if token is not None and token != unk and token in present:
                rows, cols = max(rows, r), max(cols, c)
    return rows, cols


def page_grid(
    layout: Layout, batch: Mapping[str, Any], i: int, processor: Any, kept: np.ndarray
) -> PatchGrid:
    """The grid of page ``i`` of ``batch``; ``kept`` marks the sequence positions that are
    stored (attention mask), so positions are renumbered among the stored vectors."""
    positions, rows, cols = layout(batch, i, processor)
    if len(positions) != rows * cols:
        raise ValueError(f"{len(positions)} image tokens for a {rows}x{cols} patch grid")
    if rows * cols == 0:
        return EMPTY_GRID
    stored = np.cumsum(kept) - 1
    if not kept[positions].all():
        raise ValueError("image tokens are masked out by the attention mask")
    return PatchGrid(rows, cols, stored[positions].astype(np.int32))
