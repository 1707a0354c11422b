"""Typed ingestion errors. Every message names the file, and the page where one is involved."""

from __future__ import annotations

from pathlib import Path


class IngestError(Exception):
    """Base class: a PDF (or one of its pages) could not be read.

    ``path`` is the file involved; ``page`` is the 1-based physical page, or ``None`` when the
    whole file is affected.
    """

    reason = "could not be ingested"

    def __init__(self, path: str | Path, detail: str = "", page: int | None = None) -> None:
        self.path = str(path)
        self.page = page
        self.detail = detail
        where = f"{self.path}, page {page}" if page is not None else self.path
        message = f"{where}: {self.reason}"
        if detail:
            message = f"{message} ({detail})"
        super().__init__(message)

    def __reduce__(self) -> tuple[type[IngestError], tuple[str, str, int | None]]:
        # Keep the exception picklable across process pools.
        return (type(self), (self.path, self.detail, self.page))


class MissingFileError(IngestError):
    reason = "file not found"


class NotAPDFError(IngestError):
    reason = "not a PDF file"


class CorruptPDFError(IngestError):
    reason = "PDF is damaged and cannot be opened"


class EncryptedPDFError(IngestError):
    reason = "PDF is encrypted and needs a password"


class EmptyPDFError(IngestError):
    reason = "PDF has no pages"


class RenderError(IngestError):
    """A page could not be rendered to an image."""

    reason = "page could not be rendered"

    def __init__(self, path: str | Path, page: int | None, detail: str = "") -> None:
        super().__init__(path, detail, page)

    def __reduce__(self) -> tuple[type[IngestError], tuple[str, int | None, str]]:  # type: ignore[override]
        return (type(self), (self.path, self.page, self.detail))
