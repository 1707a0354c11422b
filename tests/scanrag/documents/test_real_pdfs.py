"""Ingestion of the real MMLongBench-Doc PDFs (read in place from the shared data folder)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import ingest_many, ocr_available
from scanrag.documents.extract import PageOptions
from scanrag.documents.pages import extract_page
from scanrag.schemas import Document


@pytest.fixture(scope="module")
def real_documents(mmlb_dir: Path) -> list[tuple[Path, Document]]:
    paths = sorted((mmlb_dir / "pdfs").glob("*.pdf"))
    assert len(paths) == 12
    batch = ingest_many(paths, ocr="never")
    assert batch.failures == []
    return list(zip(paths, batch.documents, strict=True))


def test_every_file_ingests_with_matching_page_count(
    real_documents: list[tuple[Path, Document]],
) -> None:
    for path, doc in real_documents:
        with pymupdf.open(path) as fz:
            assert doc.num_pages == fz.page_count == len(doc.pages), path.name
        assert [p.number for p in doc.pages] == list(range(1, doc.num_pages + 1))
        assert all(p.error is None for p in doc.pages), path.name


def test_words_are_normalized_and_text_present(
    real_documents: list[tuple[Path, Document]],
) -> None:
    for path, doc in real_documents:
        words = [w for p in doc.pages for w in p.words]
        boxes = [b.bbox for p in doc.pages for b in p.blocks]
        assert all(0.0 <= w[0] <= w[2] <= 1.0 and 0.0 <= w[1] <= w[3] <= 1.0 for w in words)
        assert all(0.0 <= b.x1 <= b.x2 <= 1.0 and 0.0 <= b.y1 <= b.y2 <= 1.0 for b in boxes)
        if not any(p.text.strip() for p in doc.pages):
            # Slide decks exported as images: no text layer, an image on every page.
            assert all(p.text_source == "none" for p in doc.pages), path.name
            assert all(any(b.kind == "image" for b in p.blocks) for p in doc.pages), path.name
    with_text = [d for _, d in real_documents if any(p.text.strip() for p in d.pages)]
    assert len(with_text) >= 10
    total_words = sum(len(p.words) for _, d in real_documents for p in d.pages)
    assert total_words > 50_000


def test_words_match_pymupdf(real_documents: list[tuple[Path, Document]]) -> None:
    path, doc = next((p, d) for p, d in real_documents if p.name == "2303.05039v2.pdf")
    with pymupdf.open(path) as fz:
        page = fz[0]
        raw = page.get_text("words")
        width, height = page.rect.width, page.rect.height
    ours = doc.page(1).words
    assert [w[4] for w in ours] == [w[4] for w in raw]
    for mine, theirs in zip(ours[:50], raw[:50], strict=False):
        assert mine[:4] == pytest.approx(
            (theirs[0] / width, theirs[1] / height, theirs[2] / width, theirs[3] / height),
            abs=1e-4,
        )


def test_known_printed_labels(real_documents: list[tuple[Path, Document]]) -> None:
    by_name = {path.name: doc for path, doc in real_documents}
    # PDF page-label rules (this guide book starts its numbering at 287 on page 6).
    sf = by_name["san-francisco-11-contents.pdf"]
    assert [p.doc_page for p in sf.pages[:7]] == ["1", "2", "3", "16", "17", "287", "288"]
    # No label rules: numbers printed in the margin.
    pew = by_name["05-03-18-political-release.pdf"]
    assert pew.page(4).doc_page == "2" and pew.page(17).doc_page == "15"
    # An arXiv paper without printed page numbers (figure ticks are not labels).
    assert {p.doc_page for p in by_name["2303.08559v2.pdf"].pages} == {"none"}


@pytest.mark.skipif(not ocr_available("eng"), reason="Tesseract language data not installed")
def test_image_slide_gets_ocr(mmlb_dir: Path) -> None:
    path = (
        mmlb_dir / "pdfs" / "indonesiamobilemarketresearch-ag-150106055934-conversion-gate02_95.pdf"
    )
    with pymupdf.open(path) as fz:
        page = extract_page(fz[1], 2, "", PageOptions(ocr="auto", ocr_dpi=150))
    assert page.text_source == "ocr" and page.error is None
    assert len(page.words) > 10
    assert all(0.0 <= w[0] <= w[2] <= 1.0 and 0.0 <= w[1] <= w[3] <= 1.0 for w in page.words)
