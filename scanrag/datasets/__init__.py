"""Benchmark datasets: the generic JSONL format, load reports and the loader registry.

``load_dataset(name, path)`` picks a loader from :data:`LOADERS` (``generic``, ``synthetic``,
plus whatever other packages register). Importing this package stays light: PDFs are opened
only inside the validation functions.
"""

from scanrag.datasets.base import (
    LOADERS,
    Dataset,
    DatasetError,
    DroppedRow,
    LoadReport,
    load_dataset,
    page_count,
    validate_against_pdfs,
)
from scanrag.datasets.generic import load_generic, sample_from_row, sample_to_row, write_generic

__all__ = [
    "LOADERS",
    "Dataset",
    "DatasetError",
    "DroppedRow",
    "LoadReport",
    "load_dataset",
    "load_generic",
    "page_count",
    "sample_from_row",
    "sample_to_row",
    "validate_against_pdfs",
    "write_generic",
]
