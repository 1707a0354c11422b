"""Multi-vector pages packed into one float16 array with row offsets (the ColPali store).

All page vectors live in one float16 array ``vectors`` (tokens, dim); page ``i`` owns rows
``offsets[i]:offsets[i + 1]``. ``epoch`` changes when the contents are replaced rather than
extended, so the scorers' device copies know when to start over.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class PackedVectors:
    """Float16 multi-vector pages packed into one array plus row offsets."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.vectors = np.zeros((0, dim), dtype=np.float16)
        self.offsets = np.zeros(1, dtype=np.int64)
        self.epoch = 0  # changes when pages are replaced rather than added

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
        self.epoch += 1
