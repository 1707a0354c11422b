"""Scorers, their parameters and the judges, checked before anything is run or scored.

``scoring.params`` names scorers and gives each its constructor's keyword arguments; a judge
role gets a model, and maybe a prompt file of the user's. A typo in any of them used to
surface only at the score stage, after every item had run and its model calls were paid for
(or never: parameters under a misspelt scorer name were silently ignored). Here each scorer
the run will use, and each one ``scoring.params`` names, is resolved in the registry, its
parameters checked against its signature (:func:`scanrag.params.param_problems`: names,
annotated types, its own ``check_params`` rules) and then the scorer is *built* with them
(scorers are cheap to construct; building runs every rule the constructor has). Judge roles
and prompt files are checked by the scoring backend, which owns them: its ``plan`` of the job
without trajectories.

``scanrag run`` (preflight), ``scanrag run --resume`` and ``scanrag score`` all call
:func:`scoring_problems`; every problem comes back as one ``config.key: message`` line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from scanrag.params import param_problems
from scanrag.protocols import ScoringBackend, ScoringJob
from scanrag.registry import BACKENDS, SCORERS, RegistryError, UnknownNameError
from scanrag.tasks import default_scorer_names

if TYPE_CHECKING:
    from scanrag.config import ScoringSpec


def unknown_scorer(name: str, known: Sequence[str]) -> str:
    """``unknown scorer 'page' (did you mean 'pages'?); known scorer names: ...``."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown scorer {name!r}{hint}; known scorer names: {', '.join(known)}"


def scoring_problems(job: ScoringJob, scoring: ScoringBackend | None = None) -> list[str]:
    """Every problem with building ``job.scorers`` (and the scorers ``job.params`` names) with
    their parameters, and, through ``scoring``'s plan, with the judge roles and prompt
    files."""
    known = SCORERS.names()
    params: Mapping[str, Any] = job.params
    problems = [
        f"scoring.scorers: {unknown_scorer(str(name), known)}"
        for name in job.scorers
        if name not in known
    ]
    for name, value in params.items():
        key = f"scoring.params.{name}"
        if name not in known:
            problems.append(f"{key}: {unknown_scorer(str(name), known)}")
        elif value is not None and not isinstance(value, Mapping):
            problems.append(f"{key}: expected a mapping of parameter: value, got {value!r:.40}")
    for name in dict.fromkeys([*job.scorers, *params]):
        given = params.get(name)
        if name in known and (given is None or isinstance(given, Mapping)):
            problems += _build_problems(name, dict(given or {}))
    if scoring is not None:
        problems += scoring.plan(replace(job, trajectories=(), rows=())).problems
    return problems


def _build_problems(name: str, given: dict[str, Any]) -> list[str]:
    """Whether scorer ``name`` takes ``given``: its signature, then a real construction."""
    key = f"scoring.params.{name}"
    try:
        factory = SCORERS.get(name)
    except (UnknownNameError, RegistryError) as exc:
        return [f"{key}: {exc}"]
    found = param_problems(factory, given)
    if found:
        return [f"{key}.{where}: {msg}" if where else f"{key}: {msg}" for where, msg in found]
    try:
        factory(**given)
    except Exception as exc:  # any rule of the constructor: reported, never raised
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [f"{key}: {message}"]
    return []


def optional_backend() -> ScoringBackend | None:
    """The registered scoring backend, or ``None`` when none loads (the score stage then
    says so itself)."""
    try:
        scoring: ScoringBackend = BACKENDS.create("scoring")
    except Exception:
        return None
    return scoring


def check_config_scoring(
    spec: ScoringSpec,
    judges: Mapping[str, str],
    tasks: Sequence[str],
    scoring: ScoringBackend | None,
) -> list[str]:
    """:func:`scoring_problems` for a run's ``scoring`` section: its scorers (or the defaults
    of ``tasks``), parameters and prompt files, with the config's judge models (``judges``:
    ``ExperimentConfig.judge_models()``), through ``scoring``'s plan (:func:`optional_backend`),
    which binds the scorers it checked for the run."""
    names = spec.scorers
    if names is None:
        try:
            names = default_scorer_names(list(tasks))
        except Exception:  # a scorer that fails to load: reported by the score stage
            names = []
    job = ScoringJob(
        scorers=names, params=spec.params, judges=judges, judge_prompts=spec.judge_prompts
    )
    return scoring_problems(job, scoring)
