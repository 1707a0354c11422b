"""PDF ingestion: documents, page rendering, OCR fallback and the document cache (a page store
on disk, read page by page: :mod:`scanrag.documents.pagestore`).

PyMuPDF is imported inside the functions that use it, so importing this package is cheap.
"""

from scanrag.documents.errors import (
    CorruptPDFError,
    EmptyPDFError,
    EncryptedPDFError,
    IngestError,
    MissingFileError,
    NotAPDFError,
    RenderError,
)
from scanrag.documents.extract import PageOptions
from scanrag.documents.ingest import IngestBatch, IngestFailure, ingest_many, ingest_pdf, open_pdf
from scanrag.documents.labels import NO_LABEL, detect_printed_label, labels_from_rules
from scanrag.documents.ocr import OCRUnavailableError, find_tessdata, ocr_available
from scanrag.documents.pagestore import PageSequence, PageStoreError, open_document
from scanrag.documents.render import PageRenderer
from scanrag.documents.store import DocumentStore, load_document, save_document

__all__ = [
    "NO_LABEL",
    "CorruptPDFError",
    "DocumentStore",
    "EmptyPDFError",
    "EncryptedPDFError",
    "IngestBatch",
    "IngestError",
    "IngestFailure",
    "MissingFileError",
    "NotAPDFError",
    "OCRUnavailableError",
    "PageOptions",
    "PageRenderer",
    "PageSequence",
    "PageStoreError",
    "RenderError",
    "detect_printed_label",
    "find_tessdata",
    "ingest_many",
    "ingest_pdf",
    "labels_from_rules",
    "load_document",
    "ocr_available",
    "open_document",
    "open_pdf",
    "save_document",
]
