"""Ingested documents: pages with text, words, layout blocks and printed labels."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, field_serializer

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
    """A PDF after ingestion. ``id`` derives from the file's content hash.

    ``pages`` is a list for a document built in memory, or a lazy sequence backed by the page
    store (``scanrag.documents.pagestore.PageSequence``) for one read from the document cache:
    both support ``len``, indexing, slicing and iteration. :meth:`page_texts` streams the
    texts without decoding words where the pages live on disk.
    """

    id: str
    name: str = Field(description="File name the document was loaded from.")
    path: str | None = None
    sha256: str
    num_pages: int = Field(ge=0)
    title: str | None = None
    pages: Sequence[Page] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)

    @field_serializer("pages", mode="wrap")
    def _pages_as_list(self, pages: Sequence[Page], handler: SerializerFunctionWrapHandler) -> Any:
        return handler(pages if isinstance(pages, list | tuple) else list(pages))

    def page(self, number: int) -> Page:
        """Return page ``number`` (1-based); raises ``IndexError`` naming the valid range."""
        if not 1 <= number <= len(self.pages):
            raise IndexError(f"{self.name}: page {number} outside 1..{len(self.pages)}")
        return self.pages[number - 1]

    @property
    def ocr_pages(self) -> list[int]:
        sources = getattr(self.pages, "sources", None)
        if callable(sources):  # stored pages: one column, no page decoded
            return [n for n, source in enumerate(sources(), start=1) if source == "ocr"]
        return [p.number for p in self.pages if p.text_source == "ocr"]

    def page_texts(self) -> Iterator[str]:
        """Every page's text in page order (for stored pages, without decoding the rest)."""
        texts = getattr(self.pages, "texts", None)
        if callable(texts):
            yield from texts()
        else:
            for page in self.pages:
                yield page.text

    def texts_hash(self) -> str:
        """``stable_hash`` of the list of page texts (stored pages compute it once)."""
        stored = getattr(self.pages, "texts_hash", None)
        if callable(stored):
            return str(stored())
        from scanrag.hashing import TextListHasher

        hasher = TextListHasher()
        for text in self.page_texts():
            hasher.add(text)
        return hasher.hexdigest()
