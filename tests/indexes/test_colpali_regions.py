"""Similarity map → region boxes (pure functions, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from scanrag.indexes.colpali_regions import (
    connected_components,
    propose_regions,
    similarity_grid,
    threshold_mask,
)


def test_single_peak_becomes_its_cell_box():
    grid = np.zeros((4, 5))
    grid[2, 3] = 1.0
    (region,) = propose_regions(grid, threshold=0.5, max_regions=3)
    assert region.bbox == pytest.approx((3 / 5, 2 / 4, 4 / 5, 3 / 4))
    assert region.peak == 1.0 and region.cells == 1


def test_components_are_eight_connected_and_boxed():
    grid = np.zeros((6, 6))
    grid[1, 1] = grid[2, 2] = 0.9  # diagonal neighbours: one component
    grid[4, 4] = grid[4, 5] = 1.0
    regions = propose_regions(grid, threshold=0.5, max_regions=5)
    assert [r.bbox for r in regions] == [
        pytest.approx((4 / 6, 4 / 6, 1.0, 5 / 6)),
        pytest.approx((1 / 6, 1 / 6, 3 / 6, 3 / 6)),
    ]
    assert [r.cells for r in regions] == [2, 2]


def test_ranked_by_peak_then_cut_to_max_regions():
    grid = np.zeros((3, 9))
    grid[0, 0], grid[0, 4], grid[0, 8] = 0.8, 1.0, 0.9
    regions = propose_regions(grid, threshold=0.5, max_regions=2)
    assert [r.peak for r in regions] == [1.0, 0.9]
    assert propose_regions(grid, threshold=0.5, max_regions=0) == []


def test_threshold_is_relative_to_median_and_peak():
    grid = np.full((2, 5), 0.2)
    grid[0, :] = [0.2, 0.5, 0.8, 1.0, 0.2]
    # median 0.2, peak 1.0: 0.5 keeps >= 0.6, 0.9 keeps >= 0.92
    assert threshold_mask(grid, 0.5)[0].tolist() == [False, False, True, True, False]
    assert threshold_mask(grid, 0.9)[0].tolist() == [False, False, False, True, False]
    assert threshold_mask(grid, 0.0).all()  # everything at or above the median


def test_negative_similarities_still_work():
    grid = np.full((3, 3), -0.6)
    grid[1, 2] = -0.1
    (region,) = propose_regions(grid, threshold=0.75, max_regions=1)
    assert region.bbox == pytest.approx((2 / 3, 1 / 3, 1.0, 2 / 3))


def test_flat_or_empty_map_proposes_nothing():
    assert propose_regions(np.ones((3, 3)), 0.5, 3) == []
    assert propose_regions(np.zeros((0, 0)), 0.5, 3) == []


@pytest.mark.parametrize("threshold", [-0.1, 1.5])
def test_bad_threshold_raises(threshold):
    with pytest.raises(ValueError, match="threshold"):
        propose_regions(np.eye(3), threshold, 3)


def test_boxes_always_lie_in_unit_square():
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (3, 7), (11, 8), (32, 32)]:
        grid = rng.normal(size=shape)
        for region in propose_regions(grid, 0.6, 10):
            assert 0 <= region.x1 < region.x2 <= 1
            assert 0 <= region.y1 < region.y2 <= 1


def test_connected_components_partition_the_mask():
    rng = np.random.default_rng(1)
    mask = rng.random((9, 9)) > 0.6
    cells = [cell for comp in connected_components(mask) for cell in comp]
    assert sorted(cells) == sorted(zip(*np.nonzero(mask), strict=True))


def test_similarity_grid_takes_max_over_query_tokens():
    patches = np.eye(6, 4, dtype=np.float32)  # 6 cells on a 2x3 grid, dim 4
    query = np.array([[0, 1, 0, 0], [0, 0, 0, 2]], dtype=np.float32)
    grid = similarity_grid(query, patches, 2, 3)
    assert grid.shape == (2, 3)
    assert grid[0].tolist() == [0.0, 1.0, 0.0] and grid[1].tolist() == [2.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="2x2"):
        similarity_grid(query, patches, 2, 2)
