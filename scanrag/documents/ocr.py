"""OCR through MuPDF's built-in Tesseract engine.

PyMuPDF carries the Tesseract library itself; what a machine must provide is the language
data (``<lang>.traineddata``, Debian package ``tesseract-ocr``). We look for it once, from
``TESSDATA_PREFIX`` and the usual install folders, and report clearly when it is missing.
"""

from __future__ import annotations

import functools
import glob
import os
from pathlib import Path
from typing import Any

_SEARCH_PATTERNS = (
    "/usr/share/tesseract-ocr/*/tessdata",
    "/usr/share/tesseract-ocr/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/usr/local/share/tesseract-ocr/*/tessdata",
    "/opt/homebrew/share/tessdata",
    "/opt/local/share/tessdata",
)


class OCRUnavailableError(RuntimeError):
    """No Tesseract language data was found for the requested language(s)."""


def _has_languages(folder: Path, language: str) -> bool:
    return all((folder / f"{lang}.traineddata").is_file() for lang in language.split("+") if lang)


@functools.cache
def find_tessdata(language: str = "eng") -> Path:
    """Folder holding Tesseract data for every language in ``language`` (``"eng+deu"``).

    Raises ``OCRUnavailableError`` naming the places searched when none has it.
    """
    candidates: list[str] = []
    env = os.environ.get("TESSDATA_PREFIX")
    if env:
        candidates.append(env)
    for pattern in _SEARCH_PATTERNS:
        candidates.extend(sorted(glob.glob(pattern), reverse=True))
    for candidate in candidates:
        folder = Path(candidate)
        for option in (folder, folder / "tessdata"):
            if _has_languages(option, language):
                return option
    searched = ", ".join(candidates) or "no tessdata folder exists"
    raise OCRUnavailableError(
        f"no Tesseract language data for {language!r} (searched: {searched}); install the "
        "tesseract-ocr package or set TESSDATA_PREFIX"
    )


def ocr_available(language: str = "eng") -> bool:
    try:
        find_tessdata(language)
    except OCRUnavailableError:
        return False
    return True


def ocr_page_document(page: Any, *, language: str, dpi: int) -> Any:
    """Render ``page`` at ``dpi`` and OCR it; returns a one-page ``pymupdf.Document`` whose
    text layer holds the recognized words. Its page has the rendered page's aspect ratio, so
    normalizing by its own size gives coordinates on the displayed (rotated) page."""
    import pymupdf

    tessdata = str(find_tessdata(language))
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csRGB, alpha=False)
    data = pix.pdfocr_tobytes(compress=False, language=language, tessdata=tessdata)
    return pymupdf.open("pdf", data)
