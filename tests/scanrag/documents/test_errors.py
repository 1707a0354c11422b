"""Every kind of unreadable PDF gives its own typed error naming the file."""

from __future__ import annotations

import pickle
from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import (
    CorruptPDFError,
    EmptyPDFError,
    EncryptedPDFError,
    IngestError,
    MissingFileError,
    NotAPDFError,
    RenderError,
    ingest_pdf,
)
from scanrag.documents.ingest import REPAIRED_WARNING


def test_non_pdf_bytes(tmp_path: Path) -> None:
    path = tmp_path / "photo.pdf"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(NotAPDFError) as info:
        ingest_pdf(path)
    assert str(path) in str(info.value) and "not a PDF" in str(info.value)
    assert info.value.path == str(path) and info.value.page is None


def test_empty_file_is_not_a_pdf(tmp_path: Path) -> None:
    path = tmp_path / "zero-bytes.pdf"
    path.write_bytes(b"")
    with pytest.raises(NotAPDFError, match="empty"):
        ingest_pdf(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(MissingFileError, match="missing.pdf: file not found"):
        ingest_pdf(tmp_path / "missing.pdf")


@pytest.mark.parametrize("keep", [12, 40, 200])
def test_truncated_pdf_is_corrupt(simple_pdf: Path, tmp_path: Path, keep: int) -> None:
    path = tmp_path / f"cut-{keep}.pdf"
    path.write_bytes(simple_pdf.read_bytes()[:keep])
    with pytest.raises(CorruptPDFError) as info:
        ingest_pdf(path)
    assert path.name in str(info.value) and "damaged" in str(info.value)


def test_garbage_after_header_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
    with pytest.raises(CorruptPDFError):
        ingest_pdf(path)


def test_damaged_but_repairable_pdf_still_ingests(simple_pdf: Path, tmp_path: Path) -> None:
    data = simple_pdf.read_bytes()
    path = tmp_path / "no-xref.pdf"
    path.write_bytes(data[: data.rindex(b"xref")])  # cross-reference table lost
    doc = ingest_pdf(path)
    assert doc.num_pages == 3 and doc.metadata.get("repaired") == "true"
    assert doc.metadata["warning"] == REPAIRED_WARNING
    assert "Page 3" in doc.page(3).text


def test_encrypted_pdf_needs_password(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "secret text")
    path = tmp_path / "locked.pdf"
    pdf.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="hunter2", owner_pw="owner")
    with pytest.raises(EncryptedPDFError, match="locked.pdf: PDF is encrypted") as info:
        ingest_pdf(path)
    assert "no password" in str(info.value)
    with pytest.raises(EncryptedPDFError, match="wrong password"):
        ingest_pdf(path, password="guess")
    assert "secret text" in ingest_pdf(path, password="hunter2").page(1).text


def test_owner_password_only_opens_without_password(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "readable")
    path = tmp_path / "owner-only.pdf"
    pdf.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="")
    assert "readable" in ingest_pdf(path).page(1).text


def test_zero_pages(zero_page_pdf: Path) -> None:
    assert pymupdf.open(zero_page_pdf).page_count == 0  # the crafted file really is valid
    with pytest.raises(EmptyPDFError, match="empty.pdf: PDF has no pages"):
        ingest_pdf(zero_page_pdf)


def test_errors_share_a_base_and_pickle() -> None:
    for cls in (NotAPDFError, CorruptPDFError, EncryptedPDFError, EmptyPDFError):
        err = cls("/data/x.pdf", "detail")
        assert isinstance(err, IngestError)
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is cls and str(again) == str(err)
    render = RenderError("/data/x.pdf", 7, "boom")
    assert str(render) == "/data/x.pdf, page 7: page could not be rendered (boom)"
    again = pickle.loads(pickle.dumps(render))
    assert (again.path, again.page, str(again)) == (render.path, 7, str(render))
