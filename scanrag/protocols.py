"""Contracts between layers: what a retriever, a strategy and the scoring stage must provide.

The kernel names these protocols so the runner can drive any registered implementation
without importing the upper packages (``retrievers``, ``agents``, ``graphs``, ``evaluation``):
implementations are found through the registries of :mod:`scanrag.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


class ScoringFailedError(RuntimeError):
    """Some (trajectory, scorer) pairs raised while being scored; ``failures`` maps each pair's
    key (run key, sample id, scorer) to its error text. Every other pair was scored."""

    def __init__(self, failures: Mapping[tuple[str, str, str], str]) -> None:
        self.failures = dict(failures)
        first_key, first_error = next(iter(self.failures.items()))
        last_line = first_error.strip().splitlines()[-1] if first_error.strip() else ""
        count = len(self.failures)
        message = f"{count} (trajectory, scorer) pairs failed; first {first_key}"
        super().__init__(f"{message}: {last_line}")


@dataclass(frozen=True)
class JudgeSetup:
    """What the scoring stage needs to build its judges: model names per judge role
    (``default`` plus roles), the model client, where the PDFs are, the render cache and DPI,
    how many judge calls may run at once, prompt files replacing a role's built-in judge
    prompt (role → path, ``scoring.judge_prompts``), and whether a dataset of the run allows
    documents outside its PDF folder (``allow_outside_pdf_dir``)."""

    judges: Mapping[str, str]
    llm: ChatModel | None
    pdf_dirs: Sequence[Path]
    cache_dir: Path
    dpi: int
    concurrency: int
    judge_prompts: Mapping[str, str] = field(default_factory=dict)
    allow_outside_pdf_dir: bool = False


@runtime_checkable
class ScoringBackend(Protocol):
    """The shared judge-and-score stage as the runner sees it (registered under the name
    ``scoring`` in :data:`scanrag.registry.BACKENDS`; the built-in one is
    ``scanrag.evaluation.backend.EvaluationBackend``). Scorers and parameters are given by name."""

    def default_scorers(self, tasks: Sequence[str]) -> list[str]: ...

    def judge_context(self, setup: JudgeSetup) -> Any: ...

    def judge_problems(
        self, judges: Mapping[str, str], judge_prompts: Mapping[str, str]
    ) -> list[tuple[str, str]]:
        """``(config key, message)`` for each judge role (``models.judges``) or prompt file
        (``scoring.judge_prompts``, role → path) that scoring could not use; checked before a
        run starts (a backend without this method skips the check)."""
        ...

    def pending(
        self,
        trajectories: Sequence[Trajectory],
        samples: Mapping[str, Sample],
        scorers: Sequence[str],
        existing: Sequence[Mapping[str, Any]],
        params: Mapping[str, Mapping[str, Any]],
        judge_ctx: Any,
        retry_failed: bool = False,
    ) -> list[tuple[Trajectory, str]]:
        """(trajectory, scorer) pairs without a current row (or, with ``retry_failed``, with
        a failed one)."""
        ...

    async def score(
        self,
        trajectories: Sequence[Trajectory],
        samples: Mapping[str, Sample],
        scorers: Sequence[str],
        judge_ctx: Any,
        existing: Sequence[Mapping[str, Any]],
        params: Mapping[str, Mapping[str, Any]],
        concurrency: int,
        on_row: Callable[[Any], None],
        retry_failed: bool = False,
    ) -> None:
        """Score the pending pairs, handing each new row to ``on_row``; raises
        :class:`ScoringFailedError` at the end when some pairs raised."""
        ...

    def summarize(
        self,
        rows: Sequence[Mapping[str, Any]],
        samples: Mapping[str, Sample],
        params: Mapping[str, Mapping[str, Any]],
        resamples: int,
        seed: int,
    ) -> dict[str, Any]:
        """``{"headline": {cell: {metric: value}}, "all": {...}, "detail": <JSON summary>}``
        with each scorer aggregated under its configured ``params`` and bootstrap intervals
        from ``resamples`` resamples (0: none) drawn with ``seed``."""
        ...


class ReportWriter(Protocol):
    """Writes the report of finished runs (registered as ``report`` in
    :data:`scanrag.registry.BACKENDS`); returns the report's ``index.html`` path."""

    def __call__(self, run_dirs: Sequence[Path], out_dir: Path) -> Path: ...
