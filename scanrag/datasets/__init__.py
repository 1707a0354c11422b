"""Datasets: the generic JSONL format, load reports, validation and document paths.

``load_dataset(name, path)`` picks a loader from :data:`scanrag.registry.LOADERS` (``generic``
here; ``synthetic`` from the ``synth`` package and the benchmark formats from ``loaders``, all
registered as ``scanrag.loaders`` entry points). Importing this package stays light: PDFs are
opened only inside the validation functions.
"""

from scanrag.datasets.base import (
    Dataset,
    DatasetError,
    DroppedRow,
    LoadReport,
    load_dataset,
    page_count,
    validate_against_pdfs,
)
from scanrag.datasets.errors import DocumentPathError
from scanrag.datasets.fields import breakdown
from scanrag.datasets.generic import load_generic, sample_from_row
from scanrag.datasets.generic_write import sample_to_row, write_generic
from scanrag.datasets.paths import resolve_document

__all__ = [
    "Dataset",
    "DatasetError",
    "DocumentPathError",
    "DroppedRow",
    "LoadReport",
    "breakdown",
    "load_dataset",
    "load_generic",
    "page_count",
    "resolve_document",
    "sample_from_row",
    "sample_to_row",
    "validate_against_pdfs",
    "write_generic",
]
