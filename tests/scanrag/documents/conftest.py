"""PDF builders for the ingestion tests. Every PDF is generated with PyMuPDF into tmp_path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest

PAGE_W, PAGE_H = 600.0, 800.0


def text_pdf(path: Path, pages: list[list[tuple[float, float, str]]], **page_size: float) -> Path:
    """One page per entry; each entry lists ``(x, baseline_y, text)`` insertions."""
    width = page_size.get("width", PAGE_W)
    height = page_size.get("height", PAGE_H)
    doc = pymupdf.open()
    for items in pages:
        page = doc.new_page(width=width, height=height)
        for x, y, text in items:
            page.insert_text((x, y), text, fontsize=11)
    doc.save(path)
    doc.close()
    return path


def zero_page_pdf_bytes() -> bytes:
    """A syntactically valid PDF whose page tree is empty (PyMuPDF refuses to save one)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [] /Count 0 >>",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def scanned_page_pdf(path: Path, text: str = "INVOICE TOTAL 4711") -> Path:
    """One page holding only a raster image of printed text (no text layer)."""
    src = pymupdf.open()
    page = src.new_page(width=PAGE_W, height=PAGE_H)
    page.insert_text((60, 200), text, fontsize=36)
    pix = page.get_pixmap(dpi=200)
    src.close()
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    page.insert_image(page.rect, pixmap=pix)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture
def make_text_pdf(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1_000_000))

    def build(pages: list[list[tuple[float, float, str]]], **page_size: float) -> Path:
        return text_pdf(tmp_path / f"text-{next(counter)}.pdf", pages, **page_size)

    return build


@pytest.fixture
def simple_pdf(tmp_path: Path) -> Path:
    """Three pages of plain text."""
    pages = [[(72, 100, f"Page {n} says hello to the reader")] for n in range(1, 4)]
    return text_pdf(tmp_path / "simple.pdf", pages)


@pytest.fixture
def scanned_pdf(tmp_path: Path) -> Path:
    return scanned_page_pdf(tmp_path / "scanned.pdf")


@pytest.fixture
def zero_page_pdf(tmp_path: Path) -> Path:
    path = tmp_path / "empty.pdf"
    path.write_bytes(zero_page_pdf_bytes())
    return path


@pytest.fixture
def pdf_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The PDFs the document cache reads (its misses), in order."""
    from scanrag.documents import store as store_module

    calls: list[Path] = []
    real = store_module.read_pdfs

    def counting(paths, **kw):  # type: ignore[no-untyped-def]
        calls.extend(Path(p) for p in paths)
        return real(paths, **kw)

    monkeypatch.setattr(store_module, "read_pdfs", counting)
    return calls
