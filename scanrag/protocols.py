"""Contracts between layers: what a retriever, a strategy and the scoring stage must provide.

The kernel names these protocols so the runner can drive any registered implementation
without importing the upper packages (``retrievers``, ``agents``, ``graphs``, ``evaluation``):
implementations are found through the registries of :mod:`scanrag.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

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


OnDegraded = Literal["record", "fail"]
"""``runner.on_degraded``: an item whose input was reduced below its strategy's promise is kept
``ok`` and flagged (``record``) or ends with status ``degraded`` before the reduced call
(``fail``)."""


class RunSettings(BaseModel):
    """The runner's settings every strategy reads, fixed for a run (one copy per item carries
    its cell's ``run_key``).

    The runner builds them from the config's ``runner`` section
    (:func:`scanrag.runner.components.strategy_settings`): ``seed``, ``render_dpi``, the
    ``page_caps``, ``on_degraded``, then the free-form ``runner.settings``, whose keys may set
    any field here (``context_tokens`` ...); keys that name no field are kept in ``extra`` for
    plugins. A strategy parameter of the same name (``page_cap`` for ``max_pages``,
    ``context_tokens`` ...) wins over a setting; ``None`` here means the setting is off.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 0
    render_dpi: int | None = None
    max_pages: int | None = None
    max_images: int | None = None
    max_chars_per_page: int | None = None
    context_tokens: int | None = None
    on_degraded: OnDegraded = "record"
    run_key: str | None = Field(default=None, description="The item's cell (checkpoint threads).")
    extra: dict[str, Any] = Field(
        default_factory=dict, description="runner.settings keys that name no field."
    )

    @model_validator(mode="before")
    @classmethod
    def _unknown_keys_to_extra(cls, values: Any) -> Any:
        """A mapping's keys that name no field go to ``extra`` (``runner.settings`` is open)."""
        if not isinstance(values, Mapping):
            return values
        known = {k: v for k, v in values.items() if k in cls.model_fields}
        others = {k: v for k, v in values.items() if k not in cls.model_fields}
        if others:
            known["extra"] = {**dict(known.get("extra") or {}), **others}
        return known

    def for_item(self, run_key: str) -> RunSettings:
        """These settings for an item of the cell ``run_key``."""
        return self.model_copy(update={"run_key": run_key})


@dataclass
class StrategyContext:
    """Everything a strategy needs for one sample, injected by the runner or a test.

    ``documents`` maps the names used in ``Sample.doc_ids`` / ``cited_doc_ids`` to ingested
    documents. ``models`` maps roles (``reader``, ``planner`` ...) to model names; ``llm``
    answers every call; ``settings`` are the runner's (:class:`RunSettings`).
    """

    llm: ChatModel
    documents: Mapping[str, Document]
    models: Mapping[str, str]
    retriever: Retriever | None = None
    renderer: PageRenderer | None = None
    checkpoint_dir: Path | None = None
    settings: RunSettings = field(default_factory=RunSettings)

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
class ScoringJob:
    """One scoring job, the only argument of every :class:`ScoringBackend` method.

    The runner builds it from a run folder and its recorded config
    (:func:`scanrag.runner.scoring.scoring_job`); a command replaces fields the user changed
    (``dataclasses.replace``). Each method reads the fields it needs: ``plan`` what to score,
    the scorers and the judges; ``score`` all but ``resamples``/``seed``; ``summarize`` the
    rows, samples, parameters and bootstrap settings.
    """

    # what to score
    trajectories: Sequence[Trajectory] = ()  # later ones replace earlier ones per item
    samples: Mapping[str, Sample] = field(default_factory=dict)  # by sample id
    rows: Sequence[Mapping[str, Any]] = ()  # score rows already written (JSON), later ones win
    # the scorers
    scorers: Sequence[str] = ()  # registry names
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # scorer → kwargs
    # the judges
    judges: Mapping[str, str] = field(default_factory=dict)  # role → model; ``default``: others
    judge_prompts: Mapping[str, str] = field(default_factory=dict)  # role → prompt file, verbatim
    llm: ChatModel | None = None  # None: judged parts are skipped
    # the documents judges and scorers read
    pdf_dirs: Sequence[Path] = ()
    cache_dir: Path | None = None  # page images and overlays
    dpi: int = 144
    allow_outside_pdf_dir: bool = False  # a dataset of the run allows it
    # how
    concurrency: int = 8  # pairs scored at once, and judge calls in flight
    retry_failed: bool = False  # reuse policy: False re-scores only missing and stale rows
    on_row: Callable[[Any], None] | None = None  # gets each new row as soon as it is done
    # summaries
    resamples: int = 1000  # bootstrap resamples, 0: no intervals
    seed: int = 0


@dataclass(frozen=True)
class ScoringPlan:
    """What a backend makes of a job before scoring it. ``problems`` are ``config.key:
    message`` lines for what it cannot use (a judge role, a prompt file); when there are any,
    nothing is planned. ``pending`` are the (trajectory, scorer) pairs of ``job.trajectories``
    without a current row in ``job.rows`` (with ``retry_failed``, also the failed ones)."""

    problems: Sequence[str] = ()
    pending: Sequence[tuple[Trajectory, str]] = ()


@runtime_checkable
class ScoringBackend(Protocol):
    """The judge-and-score stage as the runner sees it (registered under the name ``scoring``
    in :data:`scanrag.registry.BACKENDS`; the built-in one is
    ``scanrag.evaluation.backend.EvaluationBackend``). Every method takes one
    :class:`ScoringJob`; scorers and judges are named in it, never imported."""

    def plan(self, job: ScoringJob) -> ScoringPlan:
        """Check the job's judges and prompt files, then list the pairs left to score.
        Cheap: it calls no judge, and with no trajectories it only checks."""
        ...

    async def score(self, job: ScoringJob) -> None:
        """Score the job's pending pairs, handing each new row to ``job.on_row``; raises
        :class:`ScoringFailedError` at the end when some pairs raised."""
        ...

    def summarize(self, job: ScoringJob) -> dict[str, Any]:
        """``{"headline": {cell: {metric: value}}, "all": {...}, "detail": <JSON summary>}``
        for ``job.rows``: every scorer present aggregated under ``job.params``, bootstrap
        intervals from ``job.resamples`` resamples (0: none) drawn with ``job.seed``."""
        ...


class ReportWriter(Protocol):
    """Writes the report of finished runs (registered as ``report`` in
    :data:`scanrag.registry.BACKENDS`); returns the report's ``index.html`` path."""

    def __call__(self, run_dirs: Sequence[Path], out_dir: Path) -> Path: ...
