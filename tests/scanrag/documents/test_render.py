"""PageRenderer: PNGs cached by content hash, page and DPI; failures name file and page."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import PageRenderer, RenderError, ingest_pdf
from scanrag.protocols import PageRenderer as PageRendererProtocol


def _png_size(path: Path) -> tuple[int, int]:
    pix = pymupdf.Pixmap(str(path))
    return pix.width, pix.height


def test_render_writes_png_at_dpi(simple_pdf: Path, tmp_path: Path) -> None:
    doc = ingest_pdf(simple_pdf)
    renderer: PageRendererProtocol = PageRenderer(tmp_path / "cache", dpi=72)
    png = renderer.render(doc, 2)
    assert png == tmp_path / "cache" / doc.sha256[:16] / "p0002_72.png"
    assert png.read_bytes().startswith(b"\x89PNG")
    assert _png_size(png) == (600, 800)  # 600 x 800 pt at 72 dpi
    hi = renderer.render(doc, 2, dpi=144)
    assert hi.name == "p0002_144.png" and _png_size(hi) == (1200, 1600)
    assert not list(png.parent.glob("*.tmp"))  # atomic writes leave no temporaries


def test_second_render_is_a_cache_hit(simple_pdf: Path, tmp_path: Path) -> None:
    doc = ingest_pdf(simple_pdf)
    renderer = PageRenderer(tmp_path / "cache", dpi=36)
    first = renderer.render(doc, 1)
    stamp = first.stat().st_mtime_ns
    os.utime(first, ns=(stamp - 10**9, stamp - 10**9))
    stamp = first.stat().st_mtime_ns
    assert renderer.render(doc, 1) == first
    assert renderer.renders == 1 and first.stat().st_mtime_ns == stamp
    # A fresh renderer over the same cache directory re-uses the file too.
    other = PageRenderer(tmp_path / "cache", dpi=36)
    assert other.render(doc, 1) == first and other.renders == 0


def test_cache_is_keyed_by_content_not_path(simple_pdf: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy" / "renamed.pdf"
    copy.parent.mkdir()
    shutil.copy(simple_pdf, copy)
    renderer = PageRenderer(tmp_path / "cache", dpi=36)
    a = renderer.render(ingest_pdf(simple_pdf), 3)
    b = renderer.render(ingest_pdf(copy), 3)
    assert a == b and renderer.renders == 1


def test_page_out_of_range(simple_pdf: Path, tmp_path: Path) -> None:
    doc = ingest_pdf(simple_pdf)
    renderer = PageRenderer(tmp_path / "cache")
    for bad in (0, 4):
        with pytest.raises(RenderError) as info:
            renderer.render(doc, bad)
        assert info.value.page == bad and "simple.pdf" in str(info.value)
        assert f"page {bad}" in str(info.value) and "outside 1..3" in str(info.value)


def test_missing_or_changed_file(simple_pdf: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved.pdf"
    shutil.copy(simple_pdf, moved)
    doc = ingest_pdf(moved)
    renderer = PageRenderer(tmp_path / "cache")
    moved.write_bytes(simple_pdf.read_bytes() + b"\n% appended\n")
    with pytest.raises(RenderError, match="changed since it was ingested"):
        renderer.render(doc, 1)
    moved.unlink()
    with pytest.raises(RenderError, match=r"moved.pdf, page 1: .*file not found"):
        renderer.render(doc, 1)
    with pytest.raises(RenderError, match="no file path"):
        renderer.render(doc.model_copy(update={"path": None}), 1)


def test_invalid_dpi(simple_pdf: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        PageRenderer(tmp_path, dpi=0)
    with pytest.raises(ValueError):
        PageRenderer(tmp_path).render(ingest_pdf(simple_pdf), 1, dpi=-5)
