"""Printed page labels: PDF label rules first, then a number printed in the margin."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import NO_LABEL, detect_printed_label, ingest_pdf, labels_from_rules
from scanrag.documents.labels import int_to_roman, roman_to_int


def test_pdf_page_labels_with_roman_front_matter(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    for n in range(6):
        pdf.new_page().insert_text((72, 72), f"physical page {n + 1}")
    pdf.set_page_labels(
        [
            {"startpage": 0, "style": "r", "firstpagenum": 1},
            {"startpage": 2, "style": "D", "firstpagenum": 1},
            {"startpage": 5, "style": "A", "prefix": "App-", "firstpagenum": 1},
        ]
    )
    path = tmp_path / "labelled.pdf"
    pdf.save(path)
    doc = ingest_pdf(path)
    assert [p.doc_page for p in doc.pages] == ["i", "ii", "1", "2", "3", "App-A"]
    assert [p.number for p in doc.pages] == [1, 2, 3, 4, 5, 6]
    # Same answer as PyMuPDF's own label lookup.
    fz = pymupdf.open(path)
    assert [p.doc_page for p in doc.pages] == [page.get_label() for page in fz]


def test_labels_win_over_printed_numbers(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    page = pdf.new_page(width=600, height=800)
    page.insert_text((295, 780), "7")
    pdf.set_page_labels([{"startpage": 0, "style": "D", "firstpagenum": 41}])
    path = tmp_path / "both.pdf"
    pdf.save(path)
    assert ingest_pdf(path).page(1).doc_page == "41"


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([(72, 100, "Body text"), (295, 780, "12")], "12"),  # bottom center
        ([(72, 100, "Body text"), (540, 30, "xiv")], "xiv"),  # top right, roman
        ([(72, 100, "Body text"), (280, 780, "- 9 -")], "9"),
        ([(72, 100, "Body text"), (270, 780, "Page 3 of 10")], "3"),
        ([(72, 100, "Body text"), (20, 785, "IV")], "IV"),
    ],
)
def test_printed_number_detected_without_labels(
    make_text_pdf: Callable[..., Path], items: list[tuple[float, float, str]], expected: str
) -> None:
    path = make_text_pdf([items], width=600, height=800)
    assert ingest_pdf(path).page(1).doc_page == expected


@pytest.mark.parametrize(
    "items",
    [
        [(72, 100, "No number anywhere on this page")],
        [(72, 400, "12")],  # a number, but mid-page
        [(72, 100, "Body"), (400, 780, "(4)")],  # equation number, not a page number
        [(72, 100, "Body"), (230, 780, "57")],  # neither centered nor near a side edge
        [(72, 100, "Body"), (100, 40, "80"), (100, 60, "100")],  # axis ticks: ambiguous
        [(72, 100, "Body"), (72, 780, "Chapter twelve")],
    ],
)
def test_no_label_gives_none(
    make_text_pdf: Callable[..., Path], items: list[tuple[float, float, str]]
) -> None:
    path = make_text_pdf([items], width=600, height=800)
    assert ingest_pdf(path).page(1).doc_page == NO_LABEL == "none"


def test_roman_numerals() -> None:
    assert [int_to_roman(n) for n in (1, 4, 9, 14, 40, 1994)] == [
        "I",
        "IV",
        "IX",
        "XIV",
        "XL",
        "MCMXCIV",
    ]
    assert roman_to_int("xiv") == 14 and roman_to_int("MCMXCIV") == 1994
    assert roman_to_int("IIII") is None and roman_to_int("Xiv") is None
    assert roman_to_int("") is None and roman_to_int("hello") is None
    with pytest.raises(ValueError):
        int_to_roman(0)


def test_label_rules_expand() -> None:
    rules = [
        {"startpage": 3, "style": "D", "firstpagenum": 1, "prefix": ""},
        {"startpage": 0, "style": "R", "firstpagenum": 1},
        {"startpage": 5, "style": "", "prefix": "Cover"},
    ]
    assert labels_from_rules(rules, 7) == ["I", "II", "III", "1", "2", "Cover", "Cover"]
    assert labels_from_rules([{"startpage": 2, "style": "a", "firstpagenum": 27}], 4) == [
        "",
        "",
        "aa",
        "bb",
    ]


def test_detect_printed_label_on_raw_blocks() -> None:
    blocks = [
        (0.1, 0.1, 0.9, 0.3, "Body paragraph\n", 0, 0),
        (0.48, 0.95, 0.52, 0.97, "23\n", 1, 0),
    ]
    assert detect_printed_label(blocks) == "23"
    # Both bands hold one number: the one nearer its edge wins.
    blocks.append((0.9, 0.01, 0.95, 0.02, "ix\n", 2, 0))
    assert detect_printed_label(blocks) == "ix"
    assert detect_printed_label([]) == "none"
