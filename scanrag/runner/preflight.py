"""Checks that a config can start, made before its run folder is created.

Strategy parameters (against each strategy's parameter class: names, types and rules) and
retriever parameters (names, annotated types and each class's ``check_params`` rules, through
composites and config aliases, see ``scanrag.retriever_specs``) and
dataset loader options (names and types) are checked against their factories without building
anything (a retriever may load a model; a loader with an ``option_problems`` method, such as
the synthetic one, checks its own). Scorers are built with their ``scoring.params``, judge
roles and prompt files checked (:mod:`scanrag.runner.scoring_checks`). Dataset paths must
exist, and every dataset is then loaded once (:func:`scanrag.runner.datasets.load_checked`): an
empty file, a file whose rows the loader all drops, ``ids`` that match nothing, or a dataset
none of whose samples has usable PDFs stops the run. Every model a role of the run uses must be
servable (:mod:`scanrag.llm.checks`: a registered scripted model, an embedded model whose
weights are installed, a provider litellm knows), judges only when the run scores and only the
roles its scorers use besides the ones the config names; every ``runner.per_provider`` key must
name a concurrency group. Every problem is reported at once, each under its config key, and the
loaded datasets go on to the run.
A synthetic corpus that is not in the cache yet is generated (the one slow check) only when
nothing else is wrong; a refusal before that says so.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanrag.config import (
    DEFAULT_MODEL,
    DatasetSpec,
    ExperimentConfig,
    ScoringSpec,
    StrategySpec,
)
from scanrag.config.models import ref_of
from scanrag.llm.checks import ModelChecker
from scanrag.llm.endpoints import ModelEntry
from scanrag.params import param_problems
from scanrag.protocols import ScoringBackend
from scanrag.registry import LOADERS, SCORERS, STRATEGIES, RegistryError, UnknownNameError
from scanrag.retriever_specs import RetrieverSpecs
from scanrag.runner.components import LoadedDataset, SetupError
from scanrag.runner.datasets import (
    SYNTHETIC_LOADER,
    load_checked,
    synthetic_dir,
    synthetic_options,
)
from scanrag.runner.scoring_checks import check_config_scoring, optional_backend
from scanrag.tasks import default_scorer_names

# Arguments the runner fills in itself rather than the config.
INJECTED = frozenset({"samples"})


@dataclass(frozen=True)
class Checked:
    """What preflight hands the run: the datasets, loaded once, and the components every
    name of the config was checked against — the retriever specs with each registered type
    bound to its factory, and the scoring backend with the run's scorers bound (``None``
    when the run does not score, or no backend loads). The run builds from these without
    looking the names up again."""

    datasets: list[LoadedDataset]
    retrievers: RetrieverSpecs
    scoring: ScoringBackend | None = None


@dataclass(frozen=True)
class ModelUses:
    """The config's model references, derived once: every ``(config key, model string or
    entry)`` that names a model, the entries refs resolve to, the models the grid calls and
    the judge roles ``models.judges`` names."""

    uses: list[tuple[str, str | ModelEntry]]
    entries: dict[str, ModelEntry]
    called: frozenset[str]
    judge_roles: frozenset[str]

    def entry(self, value: str | ModelEntry) -> ModelEntry:
        if isinstance(value, ModelEntry):
            return value
        return self.entries.get(value) or ModelEntry(model=value)


def preflight(
    config: ExperimentConfig, *, agent_models: bool = True, judge_models: bool = True
) -> Checked:
    """Raise :class:`SetupError` listing every problem that would stop the run later; return
    the datasets, loaded once, and the checked components (``start_run`` hands them to the
    runner).

    ``agent_models`` / ``judge_models``: whether to check the models of the agent / judge
    roles (not when the caller serves them with a client of its own).
    """
    checker = ModelChecker()
    cache_dir = Path(config.runner.cache_dir)
    specs, scoring, judges = config.datasets, config.scoring, config.judge_models()
    called = frozenset(m for cell in config.cells() for m in cell.models.values())
    judge_roles = frozenset(config.models.judges)
    uses = ModelUses(config.model_uses(), config.model_entries(), called, judge_roles)
    retrievers = RetrieverSpecs(config.retrievers)
    backend = optional_backend() if scoring.enabled else None

    def model_problems(datasets: list[LoadedDataset]) -> list[str]:
        found = _model_problems(uses, scoring, checker, agent_models, judge_models, datasets)
        return found + _scoring_problems(scoring, judges, datasets, backend)

    sound, spec_problems = _dataset_spec_problems(specs)
    slow = [i for i in sound if _needs_generation(specs[i], cache_dir)]
    datasets, dataset_problems = load_checked(specs, cache_dir, [i for i in sound if i not in slow])
    dataset_problems = spec_problems + dataset_problems
    components = [*_retriever_problems(retrievers), *_strategy_problems(config.strategies)]
    limits = _per_provider_problems(list(config.runner.per_provider), uses, checker)
    models = model_problems(datasets)
    if slow and not (dataset_problems or components or models or limits):
        # a run that can start: generate the corpora, then check every dataset together
        datasets, dataset_problems = load_checked(specs, cache_dir, sound)
        dataset_problems = spec_problems + dataset_problems
        models = model_problems(datasets)
        slow = []
    problems = [*dataset_problems, *components, *models, *limits]
    return Checked(_refuse_or(datasets, problems, slow), retrievers, backend)


def _refuse_or(
    datasets: list[LoadedDataset], problems: list[str], ungenerated: list[int]
) -> list[LoadedDataset]:
    if not problems:
        return datasets
    lines = "\n".join(f"  {p}" for p in problems)
    keys = ", ".join(f"datasets.{i}" for i in ungenerated)
    note = f"\n  ({keys}: synthetic, generated and checked once these are fixed)" if keys else ""
    raise SetupError(f"the run cannot start:\n{lines}{note}")


def _needs_generation(spec: DatasetSpec, cache_dir: Path) -> bool:
    """Whether the dataset ``spec`` is a synthetic corpus not in the cache yet: generating one
    takes seconds to minutes, so it waits until every cheaper check has passed."""
    if spec.synthetic is None:
        return False
    return not synthetic_dir(cache_dir, spec.synthetic).exists()


def _retriever_problems(retrievers: RetrieverSpecs) -> list[str]:
    """Every retriever alias against its real constructor, recursively through composites
    (alias references, cycles, names, types, the retriever's own cheap rules); no model
    loads. The specs keep the factories they resolved."""
    return retrievers.problems(skip=sorted(INJECTED))


def _strategy_problems(strategies: Sequence[StrategySpec]) -> list[str]:
    """Every strategy's parameters against its parameter class (names, types, rules), without
    building the strategy."""
    problems = []
    for i, spec in enumerate(strategies):
        try:
            factory = STRATEGIES.get(spec.name)
        except (UnknownNameError, RegistryError) as exc:
            problems.append(f"strategies.{i}.name: {exc}")
            continue
        for name, message in param_problems(factory, spec.params):
            at = f"strategies.{i}.params" + (f".{name}" if name else "")
            problems.append(f"{at}: {message}")
    return problems


def _model_problems(
    models: ModelUses,
    scoring: ScoringSpec,
    checker: ModelChecker,
    agents: bool,
    judges: bool,
    datasets: list[LoadedDataset],
) -> list[str]:
    """Every model a role of the run will call, each under the key that names it."""
    judging = judges and scoring.enabled
    uses = []
    for key, value in models.uses:
        if key.startswith("models.judges."):
            if judging:
                uses.append((key, value))
        elif agents and ref_of(value) in models.called:  # not a role the grid always overrides
            uses.append((key, value))
    if judging and "default" not in models.judge_roles:
        roles = _default_judge_roles(scoring, models.judge_roles, datasets)
        if roles:
            key = f"models.judges.default (not set: {DEFAULT_MODEL} judges {', '.join(roles)})"
            uses.append((key, DEFAULT_MODEL))
    problems = []
    for key, value in uses:
        entry = models.entry(value)
        problem = checker.problem(entry)
        if problem:
            label = entry.model if entry.ref == entry.model else f"{entry.ref} ({entry.model})"
            problems.append(f"{key}: {label}: {problem}")
    return problems


def _scoring_problems(
    scoring: ScoringSpec,
    judges: Mapping[str, str],
    datasets: list[LoadedDataset],
    backend: ScoringBackend | None,
) -> list[str]:
    """Scorers (configured, or the tasks' defaults, plus every one ``scoring.params`` names)
    built with their parameters; judge roles and prompt files (:mod:`.scoring_checks`)."""
    if not scoring.enabled:
        return []
    tasks = sorted({s.task for d in datasets for s in d.samples})
    return check_config_scoring(scoring, judges, tasks, backend)


def _default_judge_roles(
    scoring: ScoringSpec, named: Collection[str], datasets: list[LoadedDataset]
) -> list[str]:
    """The judge roles of the run's scorers that no ``models.judges`` entry names (``named``;
    the default judge takes them); ``[]`` when the scorers cannot be resolved here (scoring
    reports it)."""
    names = scoring.scorers
    try:
        if names is None:
            tasks = sorted({s.task for d in datasets for s in d.samples})
            names = default_scorer_names(tasks)
        roles = {role for n in names for role in getattr(SCORERS.get(n), "roles", ())}
    except Exception:  # a scorer that fails to load: not a model problem
        return []
    return sorted(roles - set(named))


def _per_provider_problems(
    keys: Sequence[str], models: ModelUses, checker: ModelChecker
) -> list[str]:
    """``runner.per_provider`` ``keys`` that name no concurrency group the gateway uses."""
    if not keys:
        return []
    entries = [models.entry(value) for _, value in models.uses]
    in_use = {checker.group(m) for m in entries if checker.problem(m) is None}
    found = checker.per_provider_problems(list(keys), in_use)
    return [f"runner.per_provider.{key}: {message}" for key, message in found.items()]


def _dataset_spec_problems(specs: Sequence[DatasetSpec]) -> tuple[list[int], list[str]]:
    """Paths and loader options of every dataset, without loading any: the positions of the
    sound specs (to load) and the problems of the others."""
    problems, sound = [], []
    for i, spec in enumerate(specs):
        found = _spec_problems(f"datasets.{i}", spec)
        problems += found
        if not found:
            sound.append(i)
    return sound, problems


def _spec_problems(key: str, spec: DatasetSpec) -> list[str]:
    if spec.synthetic is not None:
        return _loader_problems(
            f"{key}.synthetic", SYNTHETIC_LOADER, synthetic_options(spec.synthetic)
        )
    problems = []
    if spec.path is not None and not Path(spec.path).exists():
        problems.append(f"{key}.path: {spec.path} does not exist")
    if spec.pdf_dir is not None and not Path(spec.pdf_dir).is_dir():
        problems.append(f"{key}.pdf_dir: {spec.pdf_dir} is not a folder")
    options = dict(spec.options)
    if spec.allow_outside_pdf_dir:
        options["allow_outside_pdf_dir"] = True
    return problems + _loader_problems(key, spec.loader, options, positional=2)


def _loader_problems(
    key: str, name: str, options: Mapping[str, Any], positional: int = 0
) -> list[str]:
    """Whether loader ``name`` takes ``options``: its own ``option_problems`` (``(where,
    message)`` pairs) when it has one, else a check against its signature."""
    try:
        loader = LOADERS.get(name)
    except (UnknownNameError, RegistryError) as exc:
        return [f"{key}: {exc}"]
    check = getattr(loader, "option_problems", None)
    if callable(check):
        return [
            f"{key}.{where}: {msg}" if where else f"{key}: {msg}" for where, msg in check(options)
        ]
    given = {k: v for k, v in options.items() if k not in INJECTED}
    found = param_problems(loader, given, positional=positional, skip=sorted(INJECTED))
    at = f"{key}.options"
    return [f"{at}.{where}: {msg}" if where else f"{at}: {msg}" for where, msg in found]
