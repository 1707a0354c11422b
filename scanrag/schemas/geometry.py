"""Geometry shared by every stage: normalized boxes, regions and facts.

Coordinates are fractions of the page: (0, 0) is the top-left corner and (1, 1) the
bottom-right one. Page numbers are always global, 1-based physical pages of the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

_EPS = 1e-9


class BBox(BaseModel):
    """A validated axis-aligned box in normalized page coordinates."""

    model_config = ConfigDict(frozen=True)

    x1: float
    y1: float
    x2: float
    y2: float

    @model_validator(mode="after")
    def _check(self) -> Self:
        for name in ("x1", "y1", "x2", "y2"):
            value = getattr(self, name)
            if not (-_EPS <= value <= 1 + _EPS):
                raise ValueError(f"bbox {name}={value} lies outside [0, 1]")
        if self.x1 > self.x2 + _EPS or self.y1 > self.y2 + _EPS:
            raise ValueError(
                f"bbox corners out of order: ({self.x1}, {self.y1}) must be above-left of "
                f"({self.x2}, {self.y2})"
            )
        return self

    @classmethod
    def from_list(cls, values: Sequence[float]) -> BBox:
        """Build from ``[x1, y1, x2, y2]``; raises ``ValueError`` on any other length."""
        if len(values) != 4:
            raise ValueError(f"a bbox needs 4 numbers, got {len(values)}")
        x1, y1, x2, y2 = (float(v) for v in values)
        return cls(x1=x1, y1=y1, x2=x2, y2=y2)

    @classmethod
    def from_points(cls, rect: Sequence[float], width: float, height: float) -> BBox:
        """Normalize a rectangle given in page points, clamping it onto the page."""
        if width <= 0 or height <= 0:
            raise ValueError(f"page size must be positive, got {width}x{height}")
        x1, y1, x2, y2 = (float(v) for v in rect[:4])
        nx1, nx2 = sorted((_clamp(x1 / width), _clamp(x2 / width)))
        ny1, ny2 = sorted((_clamp(y1 / height), _clamp(y2 / height)))
        return cls(x1=nx1, y1=ny1, x2=nx2, y2=ny2)

    def as_list(self) -> list[float]:
        return [self.x1, self.y1, self.x2, self.y2]

    @property
    def area(self) -> float:
        return max(0.0, self.x2 - self.x1) * max(0.0, self.y2 - self.y1)

    def intersection(self, other: BBox) -> float:
        """Area shared with ``other``."""
        w = min(self.x2, other.x2) - max(self.x1, other.x1)
        h = min(self.y2, other.y2) - max(self.y1, other.y1)
        return w * h if w > 0 and h > 0 else 0.0

    def iou(self, other: BBox) -> float:
        inter = self.intersection(other)
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0

    def contains(self, other: BBox, tol: float = 1e-6) -> bool:
        return (
            self.x1 <= other.x1 + tol
            and self.y1 <= other.y1 + tol
            and self.x2 >= other.x2 - tol
            and self.y2 >= other.y2 - tol
        )


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


class Region(BaseModel):
    """A box on one page, with the kind of element it covers."""

    page: int = Field(ge=1, description="Global 1-based physical page number.")
    bbox: BBox
    element_type: str = "text"
    text: str | None = None
    doc_id: str | None = Field(default=None, description="Document the page belongs to.")


class Fact(BaseModel):
    """An atomic statement read from a page, optionally tied to a box."""

    page: int = Field(ge=1)
    text: str
    bbox: BBox | None = None
    doc_id: str | None = None
    region_index: int | None = Field(
        default=None, description="Index into the owner's region list this fact came from."
    )
