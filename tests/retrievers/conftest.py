"""Shared corpus and retriever factories for the retriever tests.

The corpus is three real PDFs generated with PyMuPDF and ingested with ``ingest_pdf``, so image
based retrievers can render their pages too. ``CONTRACT_FACTORIES`` holds the retrievers that
cannot be built with ``create_retriever(name)`` alone (the oracle needs samples; a retriever
whose default model cannot be loaded offline adds its test configuration here).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scanrag.protocols import Retriever
from scanrag.retriever_specs import create_retriever
from scanrag.schemas import Document, Sample

PAGES: dict[str, list[str]] = {
    "energy.pdf": [
        "Photosynthesis converts sunlight into chemical energy in green plants.",
        "Solar panels convert sunlight into electricity for homes.",
        "",
        "The mitochondria produce energy for the cell.",
    ],
    "finance.pdf": [
        "Quarterly revenue grew twelve percent in Europe.",
        "Operating costs fell while profit margins widened.",
    ],
    "space.pdf": [
        "Black holes bend light and swallow stars.",
        "The telescope observed a distant galaxy cluster.",
        "Rocket launch schedules for the next decade.",
    ],
}
# question → (document file name, gold page)
QUESTIONS: dict[str, tuple[str, int]] = {
    "How do green plants turn sunlight into energy?": ("energy.pdf", 1),
    "By how much did revenue grow in Europe?": ("finance.pdf", 1),
    "What did the telescope observe?": ("space.pdf", 2),
}
MODEL_RETRIEVERS = {"dense", "hybrid", "colpali"}


def write_pdf(path: Path, texts: list[str]) -> Path:
    import pymupdf

    pdf = pymupdf.open()
    for text in texts:
        page = pdf.new_page(width=595, height=842)
        if text:
            page.insert_textbox(pymupdf.Rect(56, 72, 540, 400), text, fontsize=14)
    pdf.save(path)
    pdf.close()
    return path


def contract_samples() -> list[Sample]:
    return [
        Sample(id=f"q{i}", doc_ids=[doc], question=question, gold_pages=[page])
        for i, (question, (doc, page)) in enumerate(QUESTIONS.items())
    ]


def _tiny_colpali() -> Retriever:
    """ColPali with a tiny randomly initialized ColQwen2 built offline (no weights exist here)."""
    from scanrag.indexes.colpali_tiny import tiny_model_dir

    return create_retriever("colpali", {"model": str(tiny_model_dir("colqwen2")), "device": "cpu"})


CONTRACT_FACTORIES: dict[str, Callable[[], Retriever]] = {
    "oracle": lambda: create_retriever("oracle", {"samples": contract_samples()}),
    "colpali": _tiny_colpali,
}


def make_retriever(name: str) -> Retriever:
    factory = CONTRACT_FACTORIES.get(name)
    return factory() if factory else create_retriever(name)


@pytest.fixture(scope="session")
def pdf_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pdfs")
    for name, texts in PAGES.items():
        write_pdf(folder / name, texts)
    return folder


@pytest.fixture(scope="session")
def corpus(pdf_dir) -> list[Document]:
    from scanrag.documents import ingest_pdf

    return [ingest_pdf(pdf_dir / name, ocr="never") for name in PAGES]


@pytest.fixture(scope="session")
def by_name(corpus) -> dict[str, Document]:
    return {d.name: d for d in corpus}


@pytest.fixture(scope="session")
def indexed(corpus) -> Callable[[str], Retriever]:
    """``indexed(name)``: the named retriever with the corpus added, built once per session."""
    cache: dict[str, Retriever] = {}

    def get(name: str) -> Retriever:
        if name not in cache:
            retriever = make_retriever(name)
            retriever.add(corpus)
            cache[name] = retriever
        return cache[name]

    return get


@pytest.fixture(scope="session")
def samples() -> list[Sample]:
    """One answerable question per document (see ``QUESTIONS``)."""
    return contract_samples()
