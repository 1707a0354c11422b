"""The text a lexical index stores for a page (``page_text`` of the bm25 retriever).

Parts, joined by ``+`` in the order they are written to the page text:

* ``heading`` — ``page_heading``: up to two short text blocks (≤ 15 words each) in the top 35%
  of the page, in reading order, skipping bare numbers and the document's running headers.
  Repeating the heading in front of the text weighs its words twice, a field boost: financial
  statements print almost no prose besides their title ("Consolidated Balance Sheets");
* ``text`` — the page's text layer (or OCR text) as ingested;
* ``tables`` — the text of table blocks not already contained in the page text.

Running headers are the lines found on at least 30% of a document's pages (at least 3 pages,
documents of 4 pages or more).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, get_args

from scanrag.schemas import Document, Page

PageText = Literal["text", "heading+text", "text+tables", "heading+text+tables"]
PAGE_TEXTS: tuple[str, ...] = get_args(PageText)

_NUMERIC = re.compile(r"^[\W\d_ivxlcdm]*$", re.IGNORECASE)  # page numbers, roman numerals
HEADING_TOP = 0.35
HEADING_WORDS = 15
HEADING_BLOCKS = 2


def check_page_text(value: object) -> None:
    if value not in PAGE_TEXTS:
        raise ValueError(f"unknown page_text {value!r}; use one of {', '.join(PAGE_TEXTS)}")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def running_lines(document: Document) -> frozenset[str]:
    """Lowercased lines repeated on many pages of ``document`` (running headers, footers)."""
    pages = len(document.pages)
    if pages < 4:
        return frozenset()
    counts: Counter[str] = Counter()
    for text in document.page_texts():  # texts only: stored pages are not decoded here
        counts.update({ln.lower() for ln in _lines(text) if not _NUMERIC.match(ln)})
    need = max(3, int(0.3 * pages))
    return frozenset(line for line, count in counts.items() if count >= need)


def page_heading(page: Page, running: frozenset[str] = frozenset()) -> str:
    """The heading of ``page``: its first short text blocks near the top (see module doc)."""
    blocks = sorted(
        (b for b in page.blocks if b.kind == "text" and b.text.strip()),
        key=lambda b: (round(b.bbox.y1, 2), b.bbox.x1),
    )
    found: list[str] = []
    for block in blocks:
        if block.bbox.y1 > HEADING_TOP:
            break
        lines = [
            ln for ln in _lines(block.text) if ln.lower() not in running and not _NUMERIC.match(ln)
        ]
        text = " ".join(lines)
        if text and len(text.split()) <= HEADING_WORDS:
            found.append(text)
            if len(found) == HEADING_BLOCKS:
                break
    return " — ".join(found)[:160]


def table_text(page: Page) -> str:
    """Text of the page's table blocks that the page text does not already contain."""
    parts = [b.text for b in page.blocks if b.kind == "table" and b.text.strip()]
    return "\n".join(part for part in parts if part not in page.text)


def page_texts(document: Document, composition: str = "text") -> list[str]:
    """One text per page of ``document``, composed as ``composition`` says."""
    check_page_text(composition)
    parts = composition.split("+")
    running = running_lines(document) if "heading" in parts else frozenset()
    texts = []
    for page in document.pages:
        pieces = []
        if "heading" in parts:
            pieces.append(page_heading(page, running))
        pieces.append(page.text)
        if "tables" in parts:
            pieces.append(table_text(page))
        texts.append("\n".join(pieces).strip("\n") if len(pieces) > 1 else page.text)
    return texts
