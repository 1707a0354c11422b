"""DocumentSource: PDF lookup by folder, page counts, rendering, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanrag.evaluation.documents import DocumentError, DocumentNotFoundError, DocumentSource


def make_pdf(path: Path, pages: int) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page(width=100, height=150)
    doc.save(path)
    doc.close()
    return path


def test_lookup_count_and_render(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    make_pdf(second / "x.pdf", 4)
    explicit = make_pdf(tmp_path / "elsewhere.pdf", 2)
    source = DocumentSource(
        [first, second], paths={"y.pdf": explicit}, cache_dir=tmp_path / "c", dpi=36
    )
    assert source.pdf_path("x.pdf") == second / "x.pdf"
    assert source.num_pages("x.pdf") == 4 and source.num_pages("y.pdf") == 2
    png = source.render("x.pdf", 3)
    assert png.is_file() and png.suffix == ".png"
    assert source.document("x.pdf").id == source.document("x.pdf").sha256[:16]


def test_errors_are_typed(tmp_path: Path) -> None:
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    source = DocumentSource([tmp_path])
    with pytest.raises(DocumentNotFoundError, match="missing.pdf"):
        source.pdf_path("missing.pdf")
    with pytest.raises(DocumentError):
        source.document("bad.pdf")
    make_pdf(tmp_path / "ok.pdf", 1)
    with pytest.raises(ValueError, match="cache_dir"):
        source.render("ok.pdf", 1)


def test_names_leading_outside_the_pdf_folder_are_not_opened(tmp_path: Path) -> None:
    folder, outside = tmp_path / "pdfs", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    make_pdf(outside / "secret.pdf", 1)
    (folder / "link.pdf").symlink_to(outside / "secret.pdf")
    source = DocumentSource([folder])
    for name in ("../outside/secret.pdf", str(outside / "secret.pdf"), "link.pdf"):
        with pytest.raises(DocumentNotFoundError, match="outside the PDF folder|absolute path"):
            source.pdf_path(name)
    opted_in = DocumentSource([folder], allow_outside=True)
    assert opted_in.pdf_path("../outside/secret.pdf") == folder / "../outside/secret.pdf"
    assert opted_in.num_pages("link.pdf") == 1
