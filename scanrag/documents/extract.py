"""The MuPDF side of ingestion: one normalized TextPage per page, read into plain tuples.

The TextPage is built with a matrix that maps the displayed page (rotation included) onto the
unit square and a clip to that square, so MuPDF returns words and blocks already normalized.
Everything here touches PyMuPDF objects and runs on the thread that opened the document;
turning the tuples into models (``scanrag.documents.pages``) is pure Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scanrag.documents.tables import Table, TableMode, find_tables_full

OCRMode = Literal["auto", "never", "force"]
TextSource = Literal["text_layer", "ocr", "none"]

_UNIT = (0.0, 0.0, 1.0, 1.0)

# A page counts as lacking a text layer below this many words...
OCR_MAX_WORDS = 5
# ...when images cover at least this fraction of it.
OCR_MIN_IMAGE_AREA = 0.1


@dataclass(frozen=True, slots=True)
class PageOptions:
    ocr: OCRMode = "auto"
    ocr_language: str = "eng"
    ocr_dpi: int = 300
    tables: TableMode = "fast"


@dataclass(slots=True)
class RawPage:
    """What MuPDF gave for one page: ``extractWORDS`` / ``extractBLOCKS`` tuples with
    normalized coordinates, the page size in points, and how the text was obtained."""

    width: float
    height: float
    words: list[tuple[Any, ...]]
    blocks: list[tuple[Any, ...]]
    source: TextSource = "text_layer"
    error: str | None = None
    tables: list[Table] | None = field(default=None)  # set by the slow "full" finder only


# Character boxes as MuPDF measures them, without PyMuPDF's ascender/descender "quad
# corrections". Importing PyMuPDF's layout add-ons (pymupdf-layout, pymupdf4llm), which
# ``import pymupdf`` does when they are installed, switches the corrections off for the whole
# process; ingestion workers keep those add-ons out (they are slow to load), so every reader
# sets the switch itself and word boxes never depend on which add-ons are installed.
SKIP_QUAD_CORRECTIONS = True


def pin_text_settings() -> None:
    """Apply the process-wide PyMuPDF text settings ingestion relies on (cheap when set)."""
    import pymupdf

    if pymupdf.TOOLS.unset_quad_corrections() != SKIP_QUAD_CORRECTIONS:
        pymupdf.TOOLS.unset_quad_corrections(SKIP_QUAD_CORRECTIONS)


def _flags() -> int:
    import pymupdf

    return int(pymupdf.TEXTFLAGS_WORDS | pymupdf.TEXT_PRESERVE_IMAGES)


def _textpage(fz_page: Any, width: float, height: float) -> Any:
    """A TextPage of the page as displayed (rotation applied), scaled onto the unit square.

    MuPDF's own page transform already applies ``/Rotate``; ``Page.get_textpage`` undoes that
    (it reports unrotated coordinates) at the cost of two rotation look-ups per page, so we
    call the layer beneath it when this PyMuPDF has it.
    """
    import pymupdf

    matrix = pymupdf.Matrix(1.0 / width, 1.0 / height)
    low_level = getattr(fz_page, "_get_textpage", None)
    if low_level is not None:
        return pymupdf.TextPage(low_level(_UNIT, flags=_flags(), matrix=matrix))
    if fz_page.rotation:
        matrix = fz_page.rotation_matrix * matrix
    return fz_page.get_textpage(clip=_UNIT, flags=_flags(), matrix=matrix)


def _read(fz_page: Any, width: float, height: float) -> tuple[list[Any], list[Any]]:
    textpage = _textpage(fz_page, width, height)
    return textpage.extractWORDS(), textpage.extractBLOCKS()


def image_area(raw_blocks: Sequence[tuple[Any, ...]]) -> float:
    """Fraction of the page covered by image blocks (overlaps counted twice, capped at 1)."""
    area = 0.0
    for b in raw_blocks:
        if b[6] == 1:
            x1, y1 = max(0.0, b[0]), max(0.0, b[1])
            x2, y2 = min(1.0, b[2]), min(1.0, b[3])
            if x2 > x1 and y2 > y1:
                area += (x2 - x1) * (y2 - y1)
    return min(1.0, area)


def _wants_ocr(mode: OCRMode, words: Sequence[Any], blocks: Sequence[Any]) -> bool:
    if mode == "force":
        return True
    if mode == "never":
        return False
    return len(words) < OCR_MAX_WORDS and image_area(blocks) >= OCR_MIN_IMAGE_AREA


def _ocr(fz_page: Any, options: PageOptions) -> tuple[list[Any], list[Any]]:
    from scanrag.documents.ocr import ocr_page_document

    ocr_doc = ocr_page_document(fz_page, language=options.ocr_language, dpi=options.ocr_dpi)
    try:
        ocr_page = ocr_doc[0]
        rect = ocr_page.rect
        return _read(ocr_page, rect.width, rect.height)
    finally:
        ocr_doc.close()


def read_page(fz_page: Any, options: PageOptions) -> RawPage:
    """Read one PyMuPDF page: text layer, OCR when ``options`` ask for it, full-mode tables."""
    pin_text_settings()
    rect = fz_page.rect
    width, height = float(rect.width), float(rect.height)
    words, blocks = _read(fz_page, width, height)
    raw = RawPage(width, height, words, blocks)
    if _wants_ocr(options.ocr, words, blocks):
        try:
            raw.words, raw.blocks = _ocr(fz_page, options)
            raw.source = "ocr"
        except Exception as exc:  # OCR is best effort: keep the text layer, record why
            raw.error = f"OCR failed: {exc}"
    if options.tables == "full":
        raw.tables = find_tables_full(fz_page, width, height, raw.blocks)
    return raw


def page_size(fz_doc: Any, index: int) -> tuple[float, float]:
    """Size of page ``index`` in points, or US Letter when even that cannot be read."""
    try:
        rect = fz_doc.load_page(index).rect
        if rect.width > 0 and rect.height > 0:
            return float(rect.width), float(rect.height)
    except Exception:
        pass
    return 612.0, 792.0
