"""Patch layouts: image tokens → grid cells, for each processor family (no model needed)."""

from __future__ import annotations

import numpy as np
import pytest

from scanrag.indexes.colpali_layouts import (
    PatchGrid,
    page_grid,
    qwen_layout,
    square_layout,
    tiled_layout,
    tiled_order,
)

IMG, FAKE, GLOBAL, NL, TEXT = 7, 8, 9, 10, 11


class FakeTokenizer:
    unk_token_id = 0

    def __init__(self) -> None:
        self.ids = {
            f"<row_{r}_col_{c}>": 100 + 10 * r + c for r in range(1, 7) for c in range(1, 7)
        }

    def convert_tokens_to_ids(self, token: str) -> int:
        return self.ids.get(token, self.unk_token_id)


class FakeProcessor:
    def __init__(self, image_seq_len: int = 4, merge_size: int = 2) -> None:
        self.image_seq_len = image_seq_len
        self.tokenizer = FakeTokenizer()
        self.image_processor = type("IP", (), {"merge_size": merge_size})()

    def get_image_mask(self, batch):
        return np.asarray(batch["input_ids"]) == IMG


def idefics_prompt(tiles_r: int, tiles_c: int, seq: int, tok: FakeTokenizer) -> list[int]:
    ids = [TEXT, TEXT]
    if tiles_r:
        for r in range(1, tiles_r + 1):
            for c in range(1, tiles_c + 1):
                ids += [FAKE, tok.convert_tokens_to_ids(f"<row_{r}_col_{c}>")] + [IMG] * seq
            ids.append(NL)
        ids.append(NL)
    return [*ids, FAKE, GLOBAL, *([IMG] * seq), FAKE, TEXT]


def test_tiled_order_maps_cells_to_tile_tokens():
    order = tiled_order(2, 3, 2)  # 2x3 tiles of 2x2 tokens: a 4x6 grid
    grid = order.reshape(4, 6)
    assert grid[0, :].tolist() == [0, 1, 4, 5, 8, 9]
    assert grid[1, :].tolist() == [2, 3, 6, 7, 10, 11]
    assert grid[2, 0] == 12 and grid[3, 5] == 23
    assert sorted(order.tolist()) == list(range(24))


def test_tiled_layout_places_local_tiles_and_drops_global_view():
    proc = FakeProcessor(image_seq_len=4)
    ids = idefics_prompt(2, 3, 4, proc.tokenizer)
    batch = {"input_ids": np.array([ids])}
    positions, rows, cols = tiled_layout(batch, 0, proc)
    assert (rows, cols) == (4, 6)
    image_positions = np.flatnonzero(np.array(ids) == IMG)
    assert len(positions) == 24 and set(positions) <= set(image_positions[:24])
    # cell (2, 3) is tile (1, 1), token (0, 1) of that tile: tile index 4, token 1
    assert positions[2 * 6 + 3] == image_positions[4 * 4 + 1]


def test_tiled_layout_without_splitting_uses_the_global_view():
    proc = FakeProcessor(image_seq_len=9)
    ids = idefics_prompt(0, 0, 9, proc.tokenizer)
    positions, rows, cols = tiled_layout({"input_ids": np.array([ids])}, 0, proc)
    assert (rows, cols) == (3, 3)
    assert positions.tolist() == np.flatnonzero(np.array(ids) == IMG).tolist()


def test_tiled_layout_without_tile_tags_is_an_error():
    proc = FakeProcessor(image_seq_len=4)
    ids = [TEXT, *([IMG] * 12), TEXT]  # three views' worth of tokens, no <row_r_col_c> tags
    with pytest.raises(ValueError, match="tile tags"):
        tiled_layout({"input_ids": np.array([ids])}, 0, proc)


def test_square_layout_and_bad_counts():
    proc = FakeProcessor()
    ids = [TEXT] + [IMG] * 16 + [TEXT]
    positions, rows, cols = square_layout({"input_ids": np.array([ids])}, 0, proc)
    assert (rows, cols) == (4, 4) and positions.tolist() == list(range(1, 17))
    with pytest.raises(ValueError, match="square"):
        square_layout({"input_ids": np.array([[IMG] * 6])}, 0, proc)


def test_qwen_layout_uses_merged_grid():
    proc = FakeProcessor(merge_size=2)
    ids = [TEXT, TEXT] + [IMG] * 12 + [TEXT]
    batch = {"input_ids": np.array([ids]), "image_grid_thw": np.array([[1, 8, 6]])}
    positions, rows, cols = qwen_layout(batch, 0, proc)
    assert (rows, cols) == (4, 3) and positions.tolist() == list(range(2, 14))


def test_page_grid_renumbers_positions_among_stored_tokens():
    proc = FakeProcessor(merge_size=2)
    ids = [0, 0, 0, TEXT] + [IMG] * 4 + [TEXT]  # three left-padding tokens
    kept = np.array([False] * 3 + [True] * 6)
    batch = {"input_ids": np.array([ids]), "image_grid_thw": np.array([[1, 4, 4]])}
    grid = page_grid(qwen_layout, batch, 0, proc, kept)
    assert (grid.rows, grid.cols) == (2, 2)
    assert grid.tokens.tolist() == [1, 2, 3, 4]


def test_patch_grid_checks_its_size():
    with pytest.raises(ValueError, match="2x2"):
        PatchGrid(2, 2, np.zeros(3, np.int32))
