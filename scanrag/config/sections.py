"""The sections of an experiment config: datasets, retrievers, strategies, models, runner.

Every section forbids unknown keys and names the allowed ones; values that must come from a
registry (strategy, retriever, scorer, dataset loader names) are checked against it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scanrag.bounds import (
    MAX_CHARS_PER_PAGE,
    MAX_CONCURRENCY,
    MAX_CPUS,
    MAX_IMAGES,
    MAX_IN_FLIGHT,
    MAX_PAGES,
    MAX_RESAMPLES,
    MAX_RESTARTS,
    MAX_RETRIES,
    MAX_ROWS,
    MAX_TOKENS_BUDGET,
    SEED_MAX,
)
from scanrag.config.models import ModelRef, check_role_strings, name_entries, ref_of
from scanrag.counts import Count
from scanrag.llm.endpoints import ModelEntry
from scanrag.protocols import OnDegraded, RunSettings
from scanrag.registry import LOADERS, SCORERS, STRATEGIES, Registry, did_you_mean
from scanrag.tasks import check_task

DEFAULT_MODEL = "local/qwen2.5-0.5b"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ProviderLimit = Annotated[Count, Field(ge=1, le=MAX_CONCURRENCY)]


class ConfigError(ValueError):
    """An invalid configuration. ``problems`` holds one ``key.path: message`` line each."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"invalid config {source}:\n{lines}")


class StrictModel(BaseModel):
    """A config section: unknown keys are errors that list the allowed ones."""

    model_config = ConfigDict(extra="forbid", validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            allowed = set(cls.model_fields)
            unknown = sorted(str(k) for k in data if k not in allowed)
            if unknown:
                keys = ", ".join(f"{k!r}{did_you_mean(k, allowed)}" for k in unknown)
                raise ValueError(
                    f"unknown key(s) {keys}; allowed keys: {', '.join(sorted(allowed))}"
                )
        return data


def check_name(registry: Registry[Any], name: str) -> str:
    known = registry.names()
    if name not in known:
        listing = ", ".join(known) if known else "(none registered)"
        hint = did_you_mean(name, known)
        raise ValueError(
            f"unknown {registry.kind} {name!r}{hint}; known {registry.kind} names: {listing}"
        )
    return name


class SyntheticSpec(StrictModel):
    """A generated corpus (the ``synthetic`` loader of the ``synth`` package), written under the
    cache dir on first use."""

    seed: Count = Field(default=0, ge=0, le=SEED_MAX)
    docs: Count = Field(default=4, ge=1, le=500)
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra generate_corpus arguments: min_pages, max_pages, questions_per_doc, "
        "scan_docs.",
    )


class DatasetSpec(StrictModel):
    """One dataset: a file read by a named loader, or a synthetic corpus."""

    name: str | None = None
    loader: str = "generic"
    path: Path | None = None
    pdf_dir: Path | None = None
    synthetic: SyntheticSpec | None = None
    limit: Count | None = Field(default=None, ge=1, le=MAX_ROWS)
    ids: list[str] | None = None
    tasks: list[str] | None = Field(default=None, description="Keep only these task types.")
    options: dict[str, Any] = Field(default_factory=dict, description="Loader keyword arguments.")
    allow_outside_pdf_dir: bool = Field(
        default=False,
        description="Let document names reach outside pdf_dir (absolute paths, ../, symlinks) "
        "for datasets that really span folders; off, such a sample is an input error.",
    )

    @field_validator("loader")
    @classmethod
    def _known_loader(cls, loader: str) -> str:
        known = LOADERS.names()
        if loader not in known:
            raise ValueError(
                f"unknown dataset loader {loader!r}; known loaders: {', '.join(known)}"
            )
        return loader

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, tasks: list[str] | None) -> list[str] | None:
        for task in tasks or []:
            check_task(task)
        return tasks

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.path is None) == (self.synthetic is None):
            raise ValueError("give exactly one of 'path' (a dataset file) or 'synthetic'")
        if self.name is None:
            self.name = "synthetic" if self.synthetic is not None else Path(str(self.path)).stem
        return self


class RetrieverSpec(StrictModel):
    """A retriever alias: the registry ``type`` (default: the alias) and its parameters."""

    type: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class StrategySpec(StrictModel):
    """A strategy to run. ``retriever`` names one alias, or a list swept as a grid axis."""

    name: str
    label: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    retriever: str | list[str] | None = None
    models: dict[str, ModelRef] = Field(
        default_factory=dict, description="Role → model overrides for this strategy only."
    )

    @field_validator("name")
    @classmethod
    def _known_strategy(cls, name: str) -> str:
        return check_name(STRATEGIES, name)

    @field_validator("label")
    @classmethod
    def _label_ok(cls, label: str | None) -> str | None:
        if label is not None and not NAME_RE.match(label):
            raise ValueError(f"label {label!r} must match {NAME_RE.pattern}")
        return label

    @property
    def key(self) -> str:
        return self.label or self.name

    @property
    def retriever_aliases(self) -> list[str | None]:
        if self.retriever is None:
            return [None]
        return [self.retriever] if isinstance(self.retriever, str) else list(self.retriever)


def _default_agents() -> dict[str, str | ModelEntry]:
    return {"reader": DEFAULT_MODEL}


class ModelsSpec(StrictModel):
    """Models per role. ``agents`` roles: reader, planner, ...; ``judges`` roles: answer,
    region, fact, ... (``default`` applies to any judge role not named).

    A role's value is a model string, the name of an entry under ``entries``, or an inline
    model entry (server, key variable, sampling, output mode: see ``scanrag.llm.endpoints``).
    """

    agents: dict[str, ModelRef] = Field(default_factory=_default_agents)
    judges: dict[str, ModelRef] = Field(default_factory=dict)
    entries: dict[str, ModelEntry] = Field(
        default_factory=dict, description="Named model entries roles and grid axes refer to."
    )

    @field_validator("agents", "judges")
    @classmethod
    def _non_empty(cls, roles: dict[str, str | ModelEntry]) -> dict[str, str | ModelEntry]:
        check_role_strings(roles)
        return roles

    @field_validator("entries", mode="before")
    @classmethod
    def _entries_are_mappings(cls, entries: Any) -> Any:
        if isinstance(entries, Mapping):
            for key, value in entries.items():
                if not isinstance(value, Mapping | ModelEntry):
                    raise ValueError(f"entries.{key}: expected a mapping with at least 'model'")
        return entries

    @field_validator("entries")
    @classmethod
    def _named(cls, entries: dict[str, ModelEntry]) -> dict[str, ModelEntry]:
        return name_entries(entries)


class GridSpec(StrictModel):
    """Axes swept for every strategy: agent role → list of models (strings or entries)."""

    models: dict[str, list[ModelRef]] = Field(default_factory=dict)

    @field_validator("models")
    @classmethod
    def _non_empty_axes(
        cls, axes: dict[str, list[str | ModelEntry]]
    ) -> dict[str, list[str | ModelEntry]]:
        for role, values in axes.items():
            if not values:
                raise ValueError(f"grid axis {role!r} has no values")
            refs = [ref_of(v) for v in values]
            if len(set(refs)) != len(refs):
                raise ValueError(
                    f"grid axis {role!r} repeats a value; give entries of one model their own "
                    "'name'"
                )
        return axes


class BudgetSpec(StrictModel):
    """Stop starting new items once the run has spent this much (either limit)."""

    usd: float | None = Field(default=None, gt=0)
    tokens: Count | None = Field(default=None, ge=1, le=MAX_TOKENS_BUDGET)

    @property
    def enabled(self) -> bool:
        return self.usd is not None or self.tokens is not None


class PageCaps(StrictModel):
    """Limits strategies honour when they put pages into a prompt."""

    max_pages: Count | None = Field(
        default=60, ge=1, le=MAX_PAGES, description="Pages read by full-doc readers."
    )
    max_images: Count | None = Field(
        default=8, ge=1, le=MAX_IMAGES, description="Page images per model call."
    )
    max_chars_per_page: Count | None = Field(default=None, ge=100, le=MAX_CHARS_PER_PAGE)


class RaySpec(StrictModel):
    address: str | None = Field(default=None, description="Cluster address; None starts one.")
    num_cpus: Count | None = Field(
        default=None, ge=1, le=MAX_CPUS, description="CPUs for a local ray.init."
    )
    cpus_per_item: float = Field(default=1.0, gt=0)
    max_in_flight: Count | None = Field(default=None, ge=1, le=MAX_IN_FLIGHT)
    actor_restarts: Count = Field(
        default=3,
        ge=0,
        le=MAX_RESTARTS,
        description="Times Ray restarts a dead retriever actor (index reloaded).",
    )


class LLMSpec(StrictModel):
    """Settings of the model gateway every call goes through."""

    cache: bool = Field(default=True, description="Serve repeated calls from the disk cache.")
    cache_scripted: bool = Field(default=False, description="Cache scripted test models too.")
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: Count = Field(default=4, ge=0, le=MAX_RETRIES)
    retry_after_max_s: float = Field(
        default=60.0, ge=0, description="Longest wait a server's Retry-After may impose."
    )


class RunnerSpec(StrictModel):
    executor: Literal["local", "ray"] = "local"
    concurrency: Count = Field(
        default=4, ge=1, le=MAX_CONCURRENCY, description="Items in flight (local executor)."
    )
    per_provider: dict[str, ProviderLimit] = Field(
        default_factory=dict, description="Concurrent model calls per provider prefix."
    )
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    cache_dir: Path = Path(".scanrag_cache")
    runs_dir: Path = Path("runs")
    render_dpi: Count = Field(default=144, ge=36, le=600)
    page_caps: PageCaps = Field(default_factory=PageCaps)
    seed: Count = Field(default=0, ge=0, le=SEED_MAX)
    item_timeout_s: float | None = Field(default=None, gt=0)
    fsync_interval_s: float = Field(
        default=0.2,
        ge=0,
        description="Group commit: rows reach the disk at most this late (0: fsync every row). "
        "Every row reaches the kernel at once, so a killed process loses none.",
    )
    progress: bool | None = Field(default=None, description="None: only on a terminal.")
    progress_interval_s: float = Field(
        default=30.0,
        gt=0,
        description="Without a terminal, a plain progress line this often (done/total, rate, "
        "ETA, errors so far).",
    )
    on_degraded: OnDegraded = Field(
        default="record",
        description="An item whose input was reduced below its strategy's promise (page cap, "
        "context window...): 'record' keeps it ok and flags it degraded; 'fail' makes it an "
        "error (status degraded) without calling the model on the reduced input.",
    )
    fail_threshold: float | None = Field(
        default=None,
        ge=0,
        lt=1,
        description="Exit code 6 when more than this share of the run's items is not ok.",
    )
    ray: RaySpec = Field(default_factory=RaySpec)
    llm: LLMSpec = Field(default_factory=LLMSpec)
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="Passed to every strategy in StrategyContext.settings (RunSettings): a key "
        "naming one of its fields (context_tokens ...) sets it, any other is kept in its extra.",
    )

    @field_validator("settings")
    @classmethod
    def _typed_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        RunSettings.model_validate(settings)  # a field's value of the wrong type stops the run
        return settings

    @field_validator("budget", mode="before")
    @classmethod
    def _no_budget(cls, value: Any) -> Any:
        return {} if value is None else value


AUTO_DECIDER = "auto"


class ReportSpec(StrictModel):
    """How the report and the summary read the scores."""

    decider: str = Field(
        default="auto",
        description="The scorer whose 'correct' decides ✓/✗ and the accuracy headline: auto "
        "(the answer judge where it scored the item, else answer_rules), or one scorer with a "
        "'correct' metric (answer, answer_rules, answer_official, mmlongbench ...).",
    )

    @field_validator("decider")
    @classmethod
    def _known_decider(cls, decider: str) -> str:
        return decider if decider == AUTO_DECIDER else check_name(SCORERS, decider)


class ScoringSpec(StrictModel):
    enabled: bool = True
    scorers: list[str] | None = Field(default=None, description="None: the evaluation default.")
    params: dict[str, Any] = Field(default_factory=dict)
    resamples: Count = Field(
        default=1000, ge=0, le=MAX_RESAMPLES, description="Bootstrap resamples (0: none)."
    )
    seed: Count = Field(
        default=0, ge=0, le=SEED_MAX, description="Seed of the bootstrap resampling."
    )
    judge_prompts: dict[str, str] = Field(
        default_factory=dict,
        description="Prompt files replacing a judge role's built-in prompt (role → path), "
        "used verbatim; see docs/docscope-scoring.md.",
    )

    @field_validator("judge_prompts")
    @classmethod
    def _prompt_files_exist(cls, files: dict[str, str]) -> dict[str, str]:
        missing = {role: path for role, path in files.items() if not Path(path).is_file()}
        if missing:
            raise ValueError(f"judge prompt files not found: {missing}")
        return files

    @field_validator("scorers")
    @classmethod
    def _known_scorers(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            check_name(SCORERS, name)
        return names
