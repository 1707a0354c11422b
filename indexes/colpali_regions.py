"""Candidate regions from a query-to-patch similarity map (pure numpy, no model needed).

A multi-vector page embedding has one vector per image patch, laid out on a grid of
``rows × cols`` cells that tile the whole page (every supported processor resizes the full page
to the model's input, without padding, so cell ``(r, c)`` covers ``[c/cols, (c+1)/cols] ×
[r/rows, (r+1)/rows]`` of the page in normalized coordinates, whatever the aspect change).

For one query and one page:

1. ``similarity_grid``: each cell's score is the best dot product between the cell's patch
   vector and any of the query's token vectors (max over query tokens);
2. ``propose_regions``: cells are kept when they lie in the top ``1 - threshold`` fraction of
   the range between the page's median cell score and its maximum (``threshold`` in [0, 1]:
   ``0.75`` keeps cells at least three quarters of the way from the median to the peak). The
   median is the baseline because most of a page is background, so the median is a robust
   "nothing here" level and a single odd margin patch cannot move it. A flat map proposes
   nothing;
3. kept cells are grouped into connected components (8-neighbourhood), each becoming the
   bounding box of its cells; components are ranked by their peak score (then by size, then
   top-left position) and the best ``max_regions`` are returned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_NEIGHBOURS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


@dataclass(frozen=True)
class GridRegion:
    """A proposed box: normalized page coordinates, the cells it spans and its peak score."""

    x1: float
    y1: float
    x2: float
    y2: float
    peak: float
    cells: int

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return self.x1, self.y1, self.x2, self.y2


def similarity_grid(query: np.ndarray, patches: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Per-cell best match of ``patches`` (rows*cols, dim; row-major) against the query tokens
    (tokens, dim), as a (rows, cols) float array."""
    if patches.shape[0] != rows * cols:
        raise ValueError(f"{patches.shape[0]} patch vectors do not fill a {rows}x{cols} grid")
    if query.shape[0] == 0 or patches.shape[0] == 0:
        return np.zeros((rows, cols), dtype=np.float32)
    sims = patches.astype(np.float32) @ query.astype(np.float32).T  # (cells, tokens)
    return sims.max(axis=1).reshape(rows, cols)


def threshold_mask(grid: np.ndarray, threshold: float) -> np.ndarray:
    """Cells at least ``threshold`` of the way from the median score to the maximum."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"region threshold must lie in [0, 1], got {threshold}")
    if grid.size == 0:
        return np.zeros(grid.shape, dtype=bool)
    finite = np.where(np.isfinite(grid), grid, -np.inf)
    peak, base = float(finite.max()), float(np.median(grid[np.isfinite(grid)]))
    if not np.isfinite(peak) or peak <= base:
        return np.zeros(grid.shape, dtype=bool)
    return finite >= base + threshold * (peak - base)


def connected_components(mask: np.ndarray) -> list[list[tuple[int, int]]]:
    """Cells of each 8-connected component of ``mask``, components in row-major order of their
    first cell."""
    seen = np.zeros(mask.shape, dtype=bool)
    rows, cols = mask.shape
    components = []
    for r0, c0 in zip(*np.nonzero(mask), strict=True):
        if seen[r0, c0]:
            continue
        seen[r0, c0] = True
        stack, cells = [(int(r0), int(c0))], []
        while stack:
            r, c = stack.pop()
            cells.append((r, c))
            for dr, dc in _NEIGHBOURS:
                nr, nc = r + dr, c + dc
                if 0 <= nr < rows and 0 <= nc < cols and mask[nr, nc] and not seen[nr, nc]:
                    seen[nr, nc] = True
                    stack.append((nr, nc))
        components.append(cells)
    return components


def propose_regions(grid: np.ndarray, threshold: float, max_regions: int) -> list[GridRegion]:
    """The best ``max_regions`` boxes of a (rows, cols) similarity grid (see module docstring)."""
    if max_regions < 0:
        raise ValueError(f"max_regions must be >= 0, got {max_regions}")
    if max_regions == 0 or grid.ndim != 2 or grid.size == 0:
        return []
    rows, cols = grid.shape
    regions = []
    for cells in connected_components(threshold_mask(grid, threshold)):
        rr = [r for r, _ in cells]
        cc = [c for _, c in cells]
        peak = max(float(grid[r, c]) for r, c in cells)
        regions.append(
            GridRegion(
                x1=min(cc) / cols,
                y1=min(rr) / rows,
                x2=(max(cc) + 1) / cols,
                y2=(max(rr) + 1) / rows,
                peak=peak,
                cells=len(cells),
            )
        )
    regions.sort(key=lambda g: (-g.peak, -g.cells, g.y1, g.x1))
    return regions[:max_regions]
