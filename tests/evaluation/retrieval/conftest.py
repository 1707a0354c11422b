"""The retrieval evaluation tests use the retriever tests' corpus: three generated PDFs with one
answerable question each (loaded from ``tests/retrievers/conftest.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_retriever_test_corpus", Path(__file__).parents[2] / "retrievers" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_corpus)

pdf_dir = _corpus.pdf_dir
corpus = _corpus.corpus
by_name = _corpus.by_name
samples = _corpus.samples
