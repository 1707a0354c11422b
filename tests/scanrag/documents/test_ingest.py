"""ingest_pdf on generated PDFs: geometry, text, blocks, OCR, page-level failures, batches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import IngestBatch, ingest_many, ingest_pdf, ocr_available
from scanrag.documents import extract as extract_module
from scanrag.documents import pages as pages_module
from scanrag.hashing import doc_id_from_sha, file_sha256
from scanrag.schemas import BBox, Block, Document


def test_word_box_is_normalized_to_the_page(make_text_pdf: Callable[..., Path]) -> None:
    path = make_text_pdf([[(150, 400, "Anchor")]], width=600, height=800)
    raw = pymupdf.open(path)[0].get_text("words")[0]
    page = ingest_pdf(path).page(1)
    assert page.width == 600 and page.height == 800
    ((x1, y1, x2, y2, text),) = page.words
    assert text == "Anchor"
    assert (x1, y1, x2, y2) == pytest.approx(
        (raw[0] / 600, raw[1] / 800, raw[2] / 600, raw[3] / 800), abs=1e-6
    )
    assert x1 == pytest.approx(0.25, abs=1e-6)  # inserted at x = 150 of 600
    assert y1 < 400 / 800 < y2 + 0.01  # the baseline sits at the bottom of the box


def test_word_poking_over_the_edge_is_clamped(make_text_pdf: Callable[..., Path]) -> None:
    path = make_text_pdf([[(580, 300, "overflowing"), (100, 100, "inside")]])
    page = ingest_pdf(path).page(1)
    assert page.words, "text partly on the page must still be read"
    for x1, y1, x2, y2, _ in page.words:
        assert 0.0 <= x1 <= x2 <= 1.0 and 0.0 <= y1 <= y2 <= 1.0
        BBox.from_list([x1, y1, x2, y2])  # validates
    assert max(w[2] for w in page.words) == 1.0


def test_document_fields(simple_pdf: Path) -> None:
    doc = ingest_pdf(simple_pdf)
    sha = file_sha256(simple_pdf)
    assert doc.sha256 == sha and doc.id == doc_id_from_sha(sha)
    assert doc.name == "simple.pdf" and doc.path == str(simple_pdf.resolve())
    assert doc.num_pages == 3 and [p.number for p in doc.pages] == [1, 2, 3]
    assert "Page 2 says hello" in doc.page(2).text
    assert all(p.text_source == "text_layer" and p.error is None for p in doc.pages)
    # Trusted construction must still give a valid, round-trippable model.
    again = Document.model_validate_json(doc.model_dump_json())
    assert again == doc


def test_title_from_metadata(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "body")
    pdf.set_metadata({"title": "Annual Report 2024", "author": "Finance"})
    path = tmp_path / "titled.pdf"
    pdf.save(path)
    doc = ingest_pdf(path)
    assert doc.title == "Annual Report 2024"
    assert doc.metadata["author"] == "Finance"


def test_rotated_page_coordinates_follow_the_display(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    page = pdf.new_page(width=600, height=800)
    page.insert_text((100, 100), "Corner", fontsize=11)
    page.set_rotation(90)
    path = tmp_path / "rotated.pdf"
    pdf.save(path)
    page = ingest_pdf(path).page(1)
    assert (page.width, page.height) == (800, 600)
    ((x1, y1, _, _, _),) = page.words
    # Rotated clockwise: text near the top-left of the unrotated page ends up top-right.
    assert x1 > 0.8 and y1 < 0.25
    # Same place as the page rendered by MuPDF, whose words come from the rotated text.
    rotated = pymupdf.open(path)[0]
    expected = pymupdf.Rect(rotated.get_text("words")[0][:4]) * rotated.rotation_matrix
    assert (x1, y1) == pytest.approx((expected.x0 / 800, expected.y0 / 600), abs=1e-3)


def test_layout_blocks_text_image_table(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    page.insert_text((72, 72), "Quarterly results", fontsize=16)
    page.insert_textbox(pymupdf.Rect(72, 90, 540, 200), "Revenue grew strongly. " * 12)
    for r in range(5):
        for c in range(4):
            cell = f"Head {c}" if r == 0 else f"{r * 10 + c}.5"
            page.insert_text((80 + c * 110, 250 + r * 18), cell, fontsize=9)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 30), False)
    pix.clear_with(90)
    page.insert_image(pymupdf.Rect(100, 450, 400, 650), pixmap=pix, keep_proportion=False)
    path = tmp_path / "layout.pdf"
    pdf.save(path)

    blocks = ingest_pdf(path).page(1).blocks
    kinds = [b.kind for b in blocks]
    assert kinds.count("table") == 1 and kinds.count("image") == 1
    assert all(isinstance(b, Block) for b in blocks)
    table = next(b for b in blocks if b.kind == "table")
    assert table.text.splitlines()[0] == "Head 0 | Head 1 | Head 2 | Head 3"
    assert "40.5 | 41.5 | 42.5 | 43.5" in table.text
    assert table.bbox.y1 == pytest.approx(240 / 792, abs=0.01)
    image = next(b for b in blocks if b.kind == "image")
    assert image.bbox.as_list() == pytest.approx([100 / 612, 450 / 792, 400 / 612, 650 / 792])
    assert any(b.kind == "text" and "Revenue grew" in b.text for b in blocks)
    without = ingest_pdf(path, tables="off").page(1).blocks
    assert "table" not in [b.kind for b in without]


def test_full_table_mode_finds_ruled_table(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    page = pdf.new_page()
    top, rows, cols = 100, 4, 3
    for r in range(rows + 1):
        page.draw_line((70, top + r * 20), (400, top + r * 20))
    for c in range(cols + 1):
        page.draw_line((70 + c * 110, top), (70 + c * 110, top + rows * 20))
    for r in range(rows):
        for c in range(cols):
            page.insert_text((75 + c * 110, top + 14 + r * 20), f"r{r}c{c}", fontsize=9)
    path = tmp_path / "ruled.pdf"
    pdf.save(path)
    blocks = ingest_pdf(path, tables="full").page(1).blocks
    tables = [b for b in blocks if b.kind == "table"]
    assert len(tables) == 1
    assert "r0c0 | r0c1 | r0c2" in tables[0].text
    assert not any(b.kind == "text" and "r1c1" in b.text for b in blocks)


def test_blank_page_has_no_text_source(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    pdf.new_page()
    pdf.new_page().insert_text((72, 72), "second")
    path = tmp_path / "blank.pdf"
    pdf.save(path)
    doc = ingest_pdf(path)
    assert doc.page(1).text_source == "none" and doc.page(1).words == []
    assert doc.page(2).text_source == "text_layer"


@pytest.mark.skipif(not ocr_available("eng"), reason="Tesseract language data not installed")
def test_image_only_page_is_ocred(scanned_pdf: Path) -> None:
    page = ingest_pdf(scanned_pdf, ocr_dpi=150).page(1)
    assert page.text_source == "ocr" and page.error is None
    assert "INVOICE" in page.text.upper() and "4711" in page.text
    word = next(w for w in page.words if "4711" in w[4])
    assert 0.0 <= word[0] < word[2] <= 1.0
    # Text was drawn around y = 200 of 800 before rasterising.
    assert 0.18 < word[1] < 0.26
    assert ingest_pdf(scanned_pdf, ocr="never").page(1).text_source == "none"


def test_missing_ocr_data_is_recorded_not_raised(
    scanned_pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.documents import ocr

    monkeypatch.setenv("TESSDATA_PREFIX", "/nonexistent")
    monkeypatch.setattr(ocr, "_SEARCH_PATTERNS", ())
    ocr.find_tessdata.cache_clear()
    try:
        page = ingest_pdf(scanned_pdf).page(1)
    finally:
        ocr.find_tessdata.cache_clear()
    assert page.text_source == "none"
    assert page.error is not None and "Tesseract" in page.error


def test_failing_page_is_recorded_and_others_kept(
    simple_pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = extract_module._read

    def flaky(fz_page, *args, **kwargs):  # type: ignore[no-untyped-def]
        if fz_page.number == 1:
            raise RuntimeError("content stream exploded")
        return real(fz_page, *args, **kwargs)

    monkeypatch.setattr(extract_module, "_read", flaky)
    doc = ingest_pdf(simple_pdf)
    assert doc.num_pages == 3
    broken = doc.page(2)
    assert broken.error is not None and "content stream exploded" in broken.error
    assert broken.text == "" and broken.text_source == "none"
    assert (broken.width, broken.height) == (600, 800)
    assert "Page 1" in doc.page(1).text and "Page 3" in doc.page(3).text


def test_page_failing_in_assembly_is_recorded(
    simple_pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pages_module.build_layout

    def flaky(raw_blocks, tables):  # type: ignore[no-untyped-def]
        if any("Page 3" in b[4] for b in raw_blocks):
            raise ValueError("layout fell over")
        return real(raw_blocks, tables)

    monkeypatch.setattr(pages_module, "build_layout", flaky)
    doc = ingest_pdf(simple_pdf)
    assert [p.error is None for p in doc.pages] == [True, True, False]
    assert "layout fell over" in (doc.page(3).error or "")


def test_five_hundred_pages(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    for n in range(1, 501):
        page = pdf.new_page()
        page.insert_text((72, 72), f"Chapter line {n}")
        page.insert_text((300, 770), str(n))
    path = tmp_path / "long.pdf"
    pdf.save(path)
    doc = ingest_pdf(path)
    assert doc.num_pages == 500
    assert doc.page(500).text.startswith("Chapter line 500")
    assert [p.doc_page for p in doc.pages[:3]] == ["1", "2", "3"]
    assert doc.page(377).doc_page == "377"


def test_ingest_many_reports_bad_file_and_keeps_going(simple_pdf: Path, tmp_path: Path) -> None:
    junk = tmp_path / "notes.pdf"
    junk.write_text("just some text, not a PDF")
    batch = ingest_many([simple_pdf, junk, tmp_path / "missing.pdf", simple_pdf])
    assert isinstance(batch, IngestBatch) and not batch.ok
    assert [d.name for d in batch.documents] == ["simple.pdf", "simple.pdf"]
    assert [(f.error, Path(f.path).name) for f in batch.failures] == [
        ("NotAPDFError", "notes.pdf"),
        ("MissingFileError", "missing.pdf"),
    ]
    assert "notes.pdf" in batch.failures[0].message
    IngestBatch.model_validate_json(batch.model_dump_json())
