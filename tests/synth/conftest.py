"""A synthetic corpus generated once per test session, opened read-only by the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import Dataset, load_generic
from scanrag.synth import generate_corpus

CORPUS_PARAMS: dict[str, int] = {
    "seed": 7,
    "n_docs": 4,
    "min_pages": 20,
    "max_pages": 32,
    "questions_per_doc": 8,
    "scan_docs": 1,
}


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_corpus(tmp_path_factory.mktemp("synth") / "corpus", **CORPUS_PARAMS)


@pytest.fixture(scope="session")
def corpus(corpus_dir: Path) -> Dataset:
    return load_generic(corpus_dir / "samples.jsonl", corpus_dir / "pdfs")


@pytest.fixture(scope="session")
def manifest(corpus_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((corpus_dir / "manifest.json").read_text())
    return data
