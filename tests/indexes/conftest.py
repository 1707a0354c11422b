"""Fixtures for index tests: documents built in memory (no PDF needed)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from scanrag.hashing import stable_hash
from scanrag.schemas import Document, Page

GOLDEN = Path(__file__).parent / "golden"


def build_document(name: str, texts: Sequence[str]) -> Document:
    sha = stable_hash([name, *texts], length=64)
    pages = [
        Page(number=i, width=612, height=792, text=text) for i, text in enumerate(texts, start=1)
    ]
    return Document(id=sha[:16], name=name, sha256=sha, num_pages=len(pages), pages=pages)


@pytest.fixture(scope="session")
def make_document() -> Callable[[str, Sequence[str]], Document]:
    return build_document


@pytest.fixture(scope="session")
def bm25_golden() -> dict[str, Any]:
    return json.loads((GOLDEN / "bm25_tiny.json").read_text())


@pytest.fixture
def corpus() -> list[Document]:
    """Three small documents; b.pdf has an empty page."""
    return [
        build_document(
            "a.pdf",
            [
                "Photosynthesis converts light energy into chemical energy in plants.",
                "The mitochondria is the powerhouse of the cell.",
                "Quarterly revenue grew by twelve percent in Europe.",
            ],
        ),
        build_document("b.pdf", ["Black holes bend light around them.", "", "Plants need water."]),
        build_document("c.pdf", ["Revenue and profit tables for 2023.", "Annual revenue report."]),
    ]
