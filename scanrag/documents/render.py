"""Page rendering to PNG with an on-disk cache keyed by file content, page and DPI."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from scanrag.documents.errors import IngestError, RenderError
from scanrag.hashing import file_sha256
from scanrag.schemas import Document

# MuPDF's context is shared by the whole process; serialize rendering across threads.
_MUPDF_LOCK = threading.Lock()


class PageRenderer:
    """Renders document pages to cached PNG files (``scanrag.protocols.PageRenderer``).

    Files live at ``<cache_dir>/<sha256[:16]>/p<page:04d>_<dpi>.png``; a page rendered once
    is never rendered again at that DPI. Writes are atomic (temporary file + rename), so
    concurrent renderers sharing a cache never see half-written images. Before the first
    render of a document the file at ``document.path`` is checked against its ingested hash.
    """

    def __init__(self, cache_dir: str | Path, dpi: int = 144, password: str | None = None) -> None:
        if dpi <= 0:
            raise ValueError(f"dpi must be positive, got {dpi}")
        self.cache_dir = Path(cache_dir)
        self.dpi = dpi
        self.password = password
        self.renders = 0  # pages actually rasterised by this instance (cache misses)
        self._verified: set[tuple[str, str]] = set()

    def path_for(self, document: Document, page: int, dpi: int | None = None) -> Path:
        """Where the PNG of ``page`` at ``dpi`` is (or will be) cached."""
        dpi = dpi or self.dpi
        return self.cache_dir / document.sha256[:16] / f"p{page:04d}_{dpi}.png"

    def render(self, document: Document, page: int, dpi: int | None = None) -> Path:
        """PNG path of physical page ``page`` (1-based), rendering it on a cache miss."""
        dpi = dpi or self.dpi
        if dpi <= 0:
            raise ValueError(f"dpi must be positive, got {dpi}")
        target = self.path_for(document, page, dpi)
        if target.is_file():
            return target
        source = self._source(document, page)
        if not 1 <= page <= document.num_pages:
            raise RenderError(source, page, f"page outside 1..{document.num_pages}")
        png = self._rasterise(source, page, dpi)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(png)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.renders += 1
        return target

    def _source(self, document: Document, page: int) -> Path:
        if not document.path:
            raise RenderError(document.name, page, "document has no file path to render from")
        source = Path(document.path)
        if not source.is_file():
            raise RenderError(source, page, "file not found")
        key = (str(source), document.sha256)
        if key not in self._verified:
            if file_sha256(source) != document.sha256:
                raise RenderError(source, page, "file content changed since it was ingested")
            self._verified.add(key)
        return source

    def _rasterise(self, source: Path, page: int, dpi: int) -> bytes:
        from scanrag.documents.ingest import open_pdf

        with _MUPDF_LOCK:
            try:
                fz_doc = open_pdf(source, self.password)
            except IngestError as exc:
                detail = f"{exc.reason} ({exc.detail})" if exc.detail else exc.reason
                raise RenderError(source, page, detail) from exc
            try:
                if not 1 <= page <= fz_doc.page_count:
                    raise RenderError(source, page, f"page outside 1..{fz_doc.page_count}")
                pix = fz_doc.load_page(page - 1).get_pixmap(dpi=dpi, alpha=False)
                return bytes(pix.tobytes("png"))
            except RenderError:
                raise
            except Exception as exc:
                raise RenderError(source, page, f"{type(exc).__name__}: {exc}") from exc
            finally:
                fz_doc.close()
