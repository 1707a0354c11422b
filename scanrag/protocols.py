"""Contracts between layers: what a retriever and a strategy must provide.

The kernel names these protocols so the runner can drive any registered implementation
without importing the upper packages (``retrievers``, ``agents``, ``graphs``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from scanrag.llm.types import ChatModel
from scanrag.schemas import Document, PageHit, Sample, Trajectory


@runtime_checkable
class Retriever(Protocol):
    """Page-level search over ingested documents.

    ``doc_ids`` scopes a search to those ``Document.id`` values (``None``: the whole store).
    Hits come back best first, ranks 1..n, ties broken by (doc_id, page).
    """

    name: str

    def add(self, documents: Sequence[Document]) -> None: ...

    def search(self, query: str, k: int, doc_ids: Sequence[str] | None = None) -> list[PageHit]: ...

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | None = None
    ) -> list[list[PageHit]]: ...

    def manifest(self) -> dict[str, Any]: ...


class PageRenderer(Protocol):
    """Renders a page to a PNG file (cached) and returns its path."""

    def render(self, document: Document, page: int, dpi: int | None = None) -> Path: ...


@dataclass
class StrategyContext:
    """Everything a strategy needs for one sample, injected by the runner or a test.

    ``documents`` maps the names used in ``Sample.doc_ids`` / ``cited_doc_ids`` to ingested
    documents. ``models`` maps roles (``reader``, ``planner`` ...) to model names; ``llm``
    answers every call.
    """

    llm: ChatModel
    documents: Mapping[str, Document]
    models: Mapping[str, str]
    retriever: Retriever | None = None
    renderer: PageRenderer | None = None
    checkpoint_dir: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def model_for(self, role: str) -> str:
        if role in self.models:
            return self.models[role]
        if "reader" in self.models:
            return self.models["reader"]
        raise KeyError(f"no model configured for role {role!r}; roles: {sorted(self.models)}")


@runtime_checkable
class Strategy(Protocol):
    """Turns one sample into one trajectory. Never raises for per-item failures: it records
    them in ``Trajectory.status`` / ``errors``."""

    name: str

    async def run(self, sample: Sample, ctx: StrategyContext) -> Trajectory: ...

    def describe(self) -> dict[str, Any]: ...
