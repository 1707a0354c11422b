"""Page text composition: heading field, table text, running headers."""

from __future__ import annotations

import pytest

from scanrag.indexes.pagetext import page_heading, page_texts, running_lines
from scanrag.schemas import BBox, Block, Document, Page


def _block(text: str, y: float, kind: str = "text") -> Block:
    return Block(kind=kind, bbox=BBox(x1=0.1, y1=y, x2=0.9, y2=y + 0.05), text=text)  # type: ignore[arg-type]


def _page(number: int, text: str, blocks: list[Block]) -> Page:
    return Page(number=number, width=612, height=792, text=text, blocks=blocks)


def _document(pages: list[Page]) -> Document:
    return Document(id="d", name="d.pdf", sha256="0" * 64, num_pages=len(pages), pages=pages)


def statement_page(number: int) -> Page:
    title = "CONSOLIDATED BALANCE SHEETS" if number == 1 else f"NOTE {number}"
    blocks = [
        _block("ACME CORP ANNUAL REPORT", 0.02),  # running header
        _block(str(number), 0.04),  # page number
        _block(f"{title}\n(In thousands)", 0.08),
        _block("A long paragraph " + "word " * 30, 0.20),  # too long for a heading
        _block(f"Assets of unit {number}", 0.30),
        _block("Footnote far down", 0.80),
        _block("Cash 1,200\nDebt 300", 0.5, kind="table"),
    ]
    text = f"ACME CORP ANNUAL REPORT\n{number}\n{title}\nAssets of unit {number}\nCash 1,200"
    return _page(number, text, blocks)


def test_heading_skips_running_headers_numbers_and_long_blocks():
    document = _document([statement_page(n) for n in range(1, 6)])
    running = running_lines(document)
    assert "acme corp annual report" in running
    assert page_heading(document.pages[0], running) == (
        "CONSOLIDATED BALANCE SHEETS (In thousands) — Assets of unit 1"
    )


def test_heading_stops_at_the_top_part_of_the_page():
    page = _page(1, "x", [_block("Low title", 0.5)])
    assert page_heading(page) == ""


def test_compositions():
    document = _document([statement_page(n) for n in range(1, 6)])
    page = document.pages[0]
    assert page_texts(document, "text")[0] == page.text
    with_heading = page_texts(document, "heading+text")[0]
    assert (
        with_heading
        == "CONSOLIDATED BALANCE SHEETS (In thousands) — Assets of unit 1\n" + page.text
    )
    with_tables = page_texts(document, "text+tables")[0]
    assert with_tables == page.text + "\nCash 1,200\nDebt 300"
    full = page_texts(document, "heading+text+tables")[0]
    assert full.startswith("CONSOLIDATED") and full.endswith("Debt 300")


def test_table_text_already_in_the_page_text_is_not_repeated():
    page = _page(1, "Cash 1,200\nDebt 300", [_block("Cash 1,200\nDebt 300", 0.5, "table")])
    assert page_texts(_document([page]), "text+tables") == ["Cash 1,200\nDebt 300"]


def test_unknown_composition_rejected():
    with pytest.raises(ValueError, match="page_text"):
        page_texts(_document([]), "tables+text")
