"""Page images for the trajectory viewer: rendered pages and gold/predicted box overlays.

Pages are rendered through :class:`scanrag.evaluation.documents.DocumentSource` (cached PNGs in the
run's cache folder, or a temporary one) and copied into the report folder, so the report only
references files of its own. Overlays reuse the region judge's drawing
(:func:`scanrag.evaluation.docscope.overlay.draw_overlay`): gold boxes green, predicted boxes red.
A page that cannot be rendered is recorded in :attr:`PageImages.errors`, never raised.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanrag.evaluation.report.data import RunData
from scanrag.schemas import BBox

IMAGE_DIR = "img"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(text: str, limit: int = 60) -> str:
    return _UNSAFE.sub("-", text).strip("-")[:limit] or "x"


class PageImages:
    """Renders pages of each run's documents and writes overlays into ``out_dir/img``."""

    def __init__(self, out_dir: Path, cache_dir: Path, dpi: int) -> None:
        self.out_dir = out_dir
        self.folder = out_dir / IMAGE_DIR
        self.cache_dir = cache_dir
        self.dpi = dpi
        self.errors: list[str] = []
        self._sources: dict[Path, Any] = {}
        self._pages: dict[tuple[Path, str, int], Path | None] = {}

    def _source(self, run: RunData) -> Any:
        from scanrag.evaluation.documents import DocumentSource

        if run.path not in self._sources:
            cache = run.cache_dir if run.cache_dir and run.cache_dir.is_dir() else self.cache_dir
            self._sources[run.path] = DocumentSource(run.pdf_dirs, cache_dir=cache, dpi=self.dpi)
        return self._sources[run.path]

    def rendered(self, run: RunData, doc_id: str, page: int) -> Path | None:
        """The cached render of ``page`` (outside the report folder), or ``None``."""
        key = (run.path, doc_id, page)
        if key not in self._pages:
            try:
                self._pages[key] = Path(self._source(run).render(doc_id, page))
            except Exception as exc:  # missing PDF, damaged file, page out of range
                self.errors.append(f"{doc_id} page {page}: {type(exc).__name__}: {exc}")
                self._pages[key] = None
        return self._pages[key]

    def page(self, run: RunData, doc_id: str, page: int) -> str | None:
        """Path (relative to the report folder) of a plain copy of the page image."""
        source = self.rendered(run, doc_id, page)
        if source is None:
            return None
        name = f"{slug(run.name, 30)}_{slug(Path(doc_id).stem)}_p{page:04d}.png"
        target = self.folder / name
        if not target.is_file():
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return f"{IMAGE_DIR}/{name}"

    def overlay(
        self,
        run: RunData,
        doc_id: str,
        page: int,
        gold: Sequence[BBox],
        predicted: Sequence[BBox],
        name: str,
    ) -> str | None:
        """Path (relative to the report folder) of the page with boxes drawn on it."""
        from scanrag.evaluation.docscope.overlay import draw_overlay

        if not gold and not predicted:
            return self.page(run, doc_id, page)
        source = self.rendered(run, doc_id, page)
        if source is None:
            return None
        target = self.folder / f"{slug(name, 100)}.png"
        try:
            draw_overlay(source, gold, predicted, target)
        except OSError as exc:
            self.errors.append(f"overlay {target.name}: {exc}")
            return None
        return f"{IMAGE_DIR}/{target.name}"
