"""The whole experiment and its grid of run cells."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Self

import yaml
from pydantic import Field, field_validator, model_validator

from scanrag.config.models import collect_entries, ref_of
from scanrag.config.sections import (
    DEFAULT_MODEL,
    NAME_RE,
    DatasetSpec,
    GridSpec,
    ModelsSpec,
    ReportSpec,
    RetrieverSpec,
    RunnerSpec,
    ScoringSpec,
    StrategySpec,
    StrictModel,
    check_name,
)
from scanrag.llm.endpoints import ModelEntry
from scanrag.registry import RETRIEVERS


@dataclass(frozen=True)
class RunCell:
    """One grid cell: a strategy with one retriever alias and one model assignment (role → the
    model's ref: a model string or a model entry's name)."""

    run_key: str
    strategy: StrategySpec
    retriever: str | None
    models: dict[str, str]

    def describe(self) -> dict[str, Any]:
        return {
            "run_key": self.run_key,
            "strategy": self.strategy.name,
            "label": self.strategy.key,
            "params": self.strategy.params,
            "retriever": self.retriever,
            "models": self.models,
        }


class ExperimentConfig(StrictModel):
    """The whole experiment."""

    name: str
    description: str = ""
    plugins: list[str] = Field(
        default_factory=list,
        description="Modules imported before validation; they register extra components.",
    )
    datasets: list[DatasetSpec] = Field(min_length=1)
    retrievers: dict[str, RetrieverSpec] = Field(default_factory=dict)
    strategies: list[StrategySpec] = Field(min_length=1)
    models: ModelsSpec = Field(default_factory=ModelsSpec)
    grid: GridSpec = Field(default_factory=GridSpec)
    runner: RunnerSpec = Field(default_factory=RunnerSpec)
    scoring: ScoringSpec = Field(default_factory=ScoringSpec)
    report: ReportSpec = Field(default_factory=ReportSpec)

    @field_validator("name")
    @classmethod
    def _name_ok(cls, name: str) -> str:
        if not NAME_RE.match(name):
            raise ValueError(f"name {name!r} must match {NAME_RE.pattern} (used in folder names)")
        return name

    @field_validator("retrievers")
    @classmethod
    def _known_retrievers(cls, specs: dict[str, RetrieverSpec]) -> dict[str, RetrieverSpec]:
        for alias, spec in specs.items():
            if not NAME_RE.match(alias):
                raise ValueError(f"retriever alias {alias!r} must match {NAME_RE.pattern}")
            try:
                check_name(RETRIEVERS, spec.type or alias)
            except ValueError as exc:
                raise ValueError(f"{alias}: {exc}") from None
        return specs

    @model_validator(mode="after")
    def _cross_references(self) -> Self:
        aliases = sorted(self.retrievers)
        for i, strategy in enumerate(self.strategies):
            for alias in strategy.retriever_aliases:
                if alias is not None and alias not in self.retrievers:
                    listing = ", ".join(aliases) if aliases else "(none defined)"
                    raise ValueError(
                        f"strategies.{i}.retriever: {alias!r} is not defined under 'retrievers'; "
                        f"defined: {listing}"
                    )
        keys = [s.key for s in self.strategies]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"strategies: duplicate label(s) {dupes}; give each a unique 'label'")
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise ValueError(f"datasets: duplicate names {names}; give each a unique 'name'")
        self.model_entries()  # one ref, one entry
        return self

    def model_uses(self) -> list[tuple[str, str | ModelEntry]]:
        """(config key, model string or entry) of every role that names a model."""
        uses: list[tuple[str, str | ModelEntry]] = []
        for section, roles in (("agents", self.models.agents), ("judges", self.models.judges)):
            uses += [(f"models.{section}.{role}", value) for role, value in roles.items()]
        for i, strategy in enumerate(self.strategies):
            uses += [(f"strategies.{i}.models.{r}", v) for r, v in strategy.models.items()]
        for role, values in self.grid.models.items():
            uses += [(f"grid.models.{role}.{j}", v) for j, v in enumerate(values)]
        return uses

    def model_entries(self) -> dict[str, ModelEntry]:
        """ref → model entry for every entry the config defines or uses (what the gateway
        needs to resolve the refs roles carry); bare model strings need none."""
        return collect_entries(self.models.entries, self.model_uses())

    def cells(self) -> list[RunCell]:
        """The grid: strategy × retriever alias × swept model roles, in config order."""
        axes = sorted(self.grid.models.items())
        combos = list(itertools.product(*[values for _, values in axes])) if axes else [()]
        cells: list[RunCell] = []
        for strategy in self.strategies:
            for alias in strategy.retriever_aliases:
                for combo in combos:
                    swept = {
                        role: ref_of(value) for (role, _), value in zip(axes, combo, strict=True)
                    }
                    chosen = {**self.models.agents, **strategy.models}
                    models = {**{r: ref_of(v) for r, v in chosen.items()}, **swept}
                    key = strategy.key + (f"+{alias}" if alias else "")
                    key += "".join(f"@{role}={value}" for role, value in swept.items())
                    cells.append(RunCell(key, strategy, alias, models))
        return cells

    def agent_models(self) -> list[str]:
        return sorted({m for cell in self.cells() for m in cell.models.values()})

    def judge_models(self) -> dict[str, str]:
        """Judge model per role, ``default`` included: the project's default model when the
        config names none (what the scoring stage will use, so the manifest records it)."""
        judges = {role: ref_of(value) for role, value in self.models.judges.items()}
        return {"default": DEFAULT_MODEL, **judges}

    def to_yaml(self) -> str:
        data = self.model_dump(mode="json")
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
