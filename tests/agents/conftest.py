"""Builders shared by the agents and graphs tests: documents, a fake renderer, a fake retriever.

``tests/graphs/conftest.py`` loads this file too, so both test folders get the same fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scanrag.llm import ScriptedModel
from scanrag.protocols import RunSettings, StrategyContext
from scanrag.schemas import BBox, Block, Document, Page, PageHit, Region, Sample

DocFactory = Callable[..., Document]


def make_document(
    name: str = "report.pdf",
    num_pages: int = 6,
    *,
    texts: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
    blocks: bool = False,
    path: str | None = None,
) -> Document:
    """A document built straight from the schemas: page i says "Page i body ..."."""
    pages = []
    for i in range(1, num_pages + 1):
        text = texts[i - 1] if texts is not None else f"Page {i} body. Value {i * 10} is reported."
        page_blocks = []
        if blocks:
            page_blocks = [
                Block(kind="text", bbox=BBox(x1=0.1, y1=0.1, x2=0.9, y2=0.2), text=f"Title {i}"),
                Block(kind="text", bbox=BBox(x1=0.1, y1=0.3, x2=0.9, y2=0.5), text=text),
            ]
        pages.append(
            Page(
                number=i,
                doc_page=labels[i - 1] if labels is not None else str(i),
                width=612,
                height=792,
                text=text,
                blocks=page_blocks,
            )
        )
    sha = (name.encode().hex() * 8)[:64]
    return Document(id=sha[:16], name=name, path=path, sha256=sha, num_pages=num_pages, pages=pages)


class FakeRenderer:
    """Writes a small solid PNG per page (color from the page number) and counts calls."""

    def __init__(self, root: Path, fail_pages: Sequence[int] = ()) -> None:
        self.root = root
        self.fail_pages = set(fail_pages)
        self.calls: list[tuple[str, int]] = []

    def render(self, document: Document, page: int, dpi: int | None = None) -> Path:
        from PIL import Image

        self.calls.append((document.id, page))
        if page in self.fail_pages:
            raise RuntimeError(f"cannot render page {page}")
        target = self.root / document.id / f"p{page:04d}.png"
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (60, 80), (page * 20 % 256, 100, 150)).save(target)
        return target


class FakeRetriever:
    """Returns scripted hits per query (or a fixed ranking), recording every search."""

    name = "fake"

    def __init__(
        self,
        ranking: Sequence[int] = (),
        *,
        by_query: dict[str, Sequence[int]] | None = None,
        error: Exception | None = None,
    ) -> None:
        self.ranking = list(ranking)
        self.by_query = {k: list(v) for k, v in (by_query or {}).items()}
        self.error = error
        self.searches: list[tuple[str, int, list[str] | None]] = []

    def add(self, documents: Sequence[Document]) -> None:
        pass

    def search(self, query: str, k: int, doc_ids: Sequence[str] | None = None) -> list[PageHit]:
        self.searches.append((query, k, list(doc_ids) if doc_ids is not None else None))
        if self.error is not None:
            raise self.error
        pages = self.by_query.get(query, self.ranking)[:k]
        doc = doc_ids[0] if doc_ids else "doc"
        return [
            PageHit(doc_id=doc, page=p, score=1.0 / rank, rank=rank)
            for rank, p in enumerate(pages, start=1)
        ]

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | None = None
    ) -> list[list[PageHit]]:
        return [self.search(q, k, doc_ids) for q in queries]

    def manifest(self) -> dict[str, Any]:
        return {"name": self.name}


def make_sample(**fields: Any) -> Sample:
    base: dict[str, Any] = {
        "id": "q1",
        "doc_ids": ["report.pdf"],
        "question": "What value does page 3 report?",
        "answer": "30",
        "gold_pages": [3],
        "gold_regions": [
            Region(page=3, bbox=BBox(x1=0.1, y1=0.3, x2=0.9, y2=0.5), element_type="table")
        ],
    }
    base.update(fields)
    return Sample(**base)


def make_context(
    model: ScriptedModel,
    documents: Sequence[Document],
    *,
    retriever: Any = None,
    renderer: Any = None,
    checkpoint_dir: Path | None = None,
    settings: dict[str, Any] | None = None,
) -> StrategyContext:
    return StrategyContext(
        llm=model,
        documents={d.name: d for d in documents},
        models={"reader": "scripted/reader"},
        retriever=retriever,
        renderer=renderer,
        checkpoint_dir=checkpoint_dir,
        settings=RunSettings.model_validate(settings or {}),
    )


@pytest.fixture
def doc() -> Document:
    return make_document()


@pytest.fixture
def renderer(tmp_path: Path) -> FakeRenderer:
    return FakeRenderer(tmp_path / "pages")


@pytest.fixture
def kit() -> SimpleNamespace:
    """The builders above, for test modules (which cannot import a conftest by name)."""
    return SimpleNamespace(
        make_document=make_document,
        make_sample=make_sample,
        make_context=make_context,
        FakeRenderer=FakeRenderer,
        FakeRetriever=FakeRetriever,
        ScriptedModel=ScriptedModel,
    )
