"""What the generator records about each document: planted facts, planted errors, labels."""

from __future__ import annotations

from dataclasses import dataclass, field

from scanrag.schemas import BBox, Fact, Region
from scanrag.synth.pdfdraw import PAGE_H, PAGE_W, Rect

# Padding (points) added around drawn text so boxes do not clip glyph edges.
_PAD = 1.0


def normalize(rect: Rect, pad: float = _PAD) -> BBox:
    x0, y0, x1, y1 = rect
    return BBox.from_points((x0 - pad, y0 - pad, x1 + pad, y1 + pad), PAGE_W, PAGE_H)


@dataclass
class PlacedRegion:
    """A drawn element a fact or an error points at."""

    page: int  # 1-based physical page
    rect: Rect  # points, tight around what was drawn
    element_type: str  # "text" | "table_row" | "table" | "figure"
    text: str

    def region(self) -> Region:
        return Region(
            page=self.page,
            bbox=normalize(self.rect),
            element_type=self.element_type,
            text=self.text,
        )


@dataclass
class PlantedFact:
    """One value the generator printed, with where it printed it."""

    key: str
    kind: str  # "text" | "table_row" | "figure"
    entity: str  # display form used in sentences: "the Orvane division"
    entity_label: str  # short form printed in tables/charts: "Orvane division"
    name: str  # the invented word alone: "Orvane"
    metric: str  # Metric.key
    year: int
    value: float
    value_text: str
    sentence: str  # atomic fact text
    where: PlacedRegion
    anchor: str | None = None  # "Table 3" / "Figure 2"
    anchor_title: str | None = None  # the table's title or the figure's caption

    def fact(self, region_index: int) -> Fact:
        return Fact(
            page=self.where.page,
            text=self.sentence,
            bbox=normalize(self.where.rect),
            region_index=region_index,
        )


@dataclass
class PlantedError:
    """A planted inconsistency between two places of one document (ScholScan style)."""

    family: str  # "DHP" | "CF"
    description: str
    question: str
    answer: str
    locations: list[PlacedRegion]
    facts: list[tuple[int, str]]  # (index into locations, atomic fact text)
    reasoning_steps: list[str]
    values: list[str]  # the conflicting value texts, as printed


@dataclass
class DocResult:
    """A generated document and everything known about it."""

    index: int
    file_name: str
    title: str
    main: str
    topic: str
    doc_type: str
    pdf: bytes
    page_labels: list[str]
    front_matter: int
    labels_set: bool
    facts: list[PlantedFact] = field(default_factory=list)
    errors: list[PlantedError] = field(default_factory=list)

    @property
    def num_pages(self) -> int:
        return len(self.page_labels)
