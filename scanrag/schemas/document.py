"""Ingested documents: pages with text, words, layout blocks and printed labels."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from scanrag.schemas.geometry import BBox

# A word as (x1, y1, x2, y2, text) in normalized page coordinates. Kept as a plain tuple
# rather than a model: a long document holds hundreds of thousands of them.
Word = tuple[float, float, float, float, str]

BlockKind = Literal["text", "image", "table", "drawing"]
TextSource = Literal["text_layer", "ocr", "none"]


class Block(BaseModel):
    """A layout block on a page (a paragraph, an image, a table)."""

    kind: BlockKind
    bbox: BBox
    text: str = ""


class Page(BaseModel):
    """One physical page of a document."""

    number: int = Field(ge=1, description="Global 1-based physical page number.")
    doc_page: str = Field(
        default="none", description='The label printed on the page ("iv", "12"), or "none".'
    )
    width: float = Field(gt=0, description="Page width in PDF points.")
    height: float = Field(gt=0, description="Page height in PDF points.")
    text: str = ""
    words: list[Word] = Field(default_factory=list)
    blocks: list[Block] = Field(default_factory=list)
    text_source: TextSource = "text_layer"
    error: str | None = Field(default=None, description="Why this page could not be read.")

    @property
    def is_empty(self) -> bool:
        return not self.text.strip()


class Document(BaseModel):
    """A PDF after ingestion. ``id`` derives from the file's content hash."""

    id: str
    name: str = Field(description="File name the document was loaded from.")
    path: str | None = None
    sha256: str
    num_pages: int = Field(ge=0)
    title: str | None = None
    pages: list[Page] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)

    def page(self, number: int) -> Page:
        """Return page ``number`` (1-based); raises ``IndexError`` naming the valid range."""
        if not 1 <= number <= len(self.pages):
            raise IndexError(f"{self.name}: page {number} outside 1..{len(self.pages)}")
        return self.pages[number - 1]

    @property
    def ocr_pages(self) -> list[int]:
        return [p.number for p in self.pages if p.text_source == "ocr"]
