"""Where the scoring stage finds documents: PDF paths, page counts and rendered pages.

Sample ``doc_ids`` are file names inside a dataset's PDF folder. A :class:`DocumentSource`
looks them up in explicit paths first, then in each PDF folder in order — a name that would
resolve outside its folder (``..``, an absolute path, a symlink leading out) is not opened
unless the dataset opted in (``allow_outside_pdf_dir``) — and renders pages
through :class:`scanrag.documents.PageRenderer` (cached PNGs; pass the run's own renderer to
share its page cache). Nothing is ingested: the
renderer only needs the file's path, content hash and page count.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scanrag.hashing import doc_id_from_sha, file_sha256
from scanrag.schemas import Document

if TYPE_CHECKING:
    from scanrag.documents import PageRenderer


class DocumentNotFoundError(FileNotFoundError):
    """No PDF for a document id in any known folder."""


class DocumentError(ValueError):
    """A PDF exists but cannot be opened (damaged, encrypted)."""


class DocumentSource:
    """PDF lookup and cached page rendering for scorers."""

    def __init__(
        self,
        pdf_dirs: Sequence[str | Path] = (),
        *,
        paths: Mapping[str, str | Path] | None = None,
        cache_dir: str | Path | None = None,
        dpi: int = 144,
        renderer: PageRenderer | None = None,
        allow_outside: bool = False,
    ) -> None:
        self.pdf_dirs = [Path(p) for p in pdf_dirs]
        self.allow_outside = allow_outside
        self.paths = {k: Path(v) for k, v in (paths or {}).items()}
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.dpi = dpi
        self._documents: dict[str, Document] = {}
        self._lock = threading.Lock()
        self._renderer: PageRenderer | None = renderer

    def pdf_path(self, doc_id: str) -> Path:
        """The PDF behind ``doc_id``; raises :class:`DocumentNotFoundError`."""
        from scanrag.datasets.paths import DocumentPathError, resolve_document

        if doc_id in self.paths:
            return self.paths[doc_id]
        refused = ""
        for folder in self.pdf_dirs:
            try:
                candidate = resolve_document(folder, doc_id, allow_outside=self.allow_outside)
            except DocumentPathError as exc:
                refused = f" ({exc})"
                continue
            if candidate.is_file():
                return candidate
        where = ", ".join(str(d) for d in self.pdf_dirs) or "(no PDF folder given)"
        raise DocumentNotFoundError(f"no PDF for document {doc_id!r} in {where}{refused}")

    def num_pages(self, doc_id: str) -> int:
        return self.document(doc_id).num_pages

    def document(self, doc_id: str) -> Document:
        """A page-less :class:`Document` for rendering (hash and page count only)."""
        with self._lock:
            cached = self._documents.get(doc_id)
        if cached is not None:
            return cached
        from scanrag.datasets import DatasetError, page_count

        path = self.pdf_path(doc_id)
        try:
            pages = page_count(path)
        except DatasetError as exc:
            raise DocumentError(str(exc)) from exc
        sha = file_sha256(path)
        document = Document(
            id=doc_id_from_sha(sha), name=path.name, path=str(path), sha256=sha, num_pages=pages
        )
        with self._lock:
            self._documents[doc_id] = document
        return document

    def render(self, doc_id: str, page: int) -> Path:
        """PNG of physical page ``page``; raises ``DocumentNotFoundError``, ``DocumentError``
        or ``scanrag.documents.RenderError``."""
        from scanrag.documents import PageRenderer

        with self._lock:
            if self._renderer is None:
                if self.cache_dir is None:
                    raise ValueError("DocumentSource needs a cache_dir or a renderer to render")
                self._renderer = PageRenderer(self.cache_dir / "pages", dpi=self.dpi)
            renderer = self._renderer
        return renderer.render(self.document(doc_id), page)

    @property
    def overlay_dir(self) -> Path:
        if self.cache_dir is None:
            raise ValueError("DocumentSource needs a cache_dir to draw overlays")
        return self.cache_dir / "overlays"
