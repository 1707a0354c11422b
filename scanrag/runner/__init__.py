"""The experiment runner: ``start_run`` a config, ``resume_run`` an interrupted run.

Stages: ingest (document cache) → index (each retriever built once) → run (bounded concurrency,
per-provider limits in the model client) → score (evaluation stage) → summary. Everything the
runner drives is resolved by name through the registries, once, by preflight
(:class:`~scanrag.runner.preflight.Checked`: the retriever specs and the scoring backend with
every name bound); the stages build from what preflight checked. Nothing from ``retrievers``,
``agents``, ``graphs`` or ``evaluation`` is imported at module level.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from scanrag.config import ConfigError, ExperimentConfig, load_config, parse_override, read_yaml
from scanrag.llm.types import ChatModel
from scanrag.protocols import ScoringBackend, Strategy
from scanrag.rundir import RunDir, RunDirError
from scanrag.runner.components import SetupError, build_strategies
from scanrag.runner.engine import Runner, RunResult
from scanrag.runner.guard import RunAbortedError, guarded
from scanrag.runner.preflight import preflight
from scanrag.runner.progress import Log, RunProgress, stderr_log
from scanrag.runner.scoring_checks import check_config_scoring, optional_backend
from scanrag.scrub import MASK, masked_paths

# On resume only these sections may change: anything else would change what the rows mean.
RESUMABLE_SECTIONS = ("runner", "scoring", "report")

__all__ = [
    "RunAbortedError",
    "RunResult",
    "Runner",
    "SetupError",
    "resume_run",
    "start_run",
]


def start_run(
    config: ExperimentConfig | str | Path,
    *,
    overrides: Iterable[str] = (),
    limit: int | None = None,
    model: str | None = None,
    llm: ChatModel | None = None,
    judge_llm: ChatModel | None = None,
    progress: RunProgress | None = None,
    log: Log | None = stderr_log,
) -> RunResult:
    """Create ``<runs_dir>/<timestamp>_<name>/`` and run the experiment in it.

    ``llm`` replaces the gateway client (tests pass a ``ScriptedModel``). Strategy and
    retriever parameters, dataset paths and loader options, model names and
    ``runner.per_provider`` keys are checked, and the datasets loaded and checked, before the
    run folder is created (:mod:`scanrag.runner.preflight`); every problem is listed at once.
    """
    if not isinstance(config, ExperimentConfig):
        config = load_config(config, overrides, limit=limit, model=model)
    elif list(overrides) or limit is not None or model is not None:
        raise ValueError("overrides/limit/model apply to a config file, not a loaded config")
    # loads and checks every dataset once; the models of roles ``llm`` serves are not checked
    checked = preflight(config, agent_models=llm is None, judge_models=(judge_llm or llm) is None)
    strategies: dict[str, Strategy] = build_strategies(config.cells())
    run_dir = RunDir.create(config.runner.runs_dir, config.name)

    def run() -> RunResult:
        run_dir.write_config(config)
        if log is not None:
            log(f"run directory: {run_dir.path}")
        runner = Runner(
            config,
            run_dir,
            strategies=strategies,
            llm=llm,
            judge_llm=judge_llm,
            progress=progress,
            log=log,
            checked=checked,
        )
        return runner.execute()

    return guarded(run_dir, run, fresh=True)


def resume_run(
    run_dir: str | Path,
    *,
    overrides: Iterable[str] = (),
    retry_errors: bool = False,
    llm: ChatModel | None = None,
    judge_llm: ChatModel | None = None,
    progress: RunProgress | None = None,
    log: Log | None = stderr_log,
) -> RunResult:
    """Finish an interrupted run: rows already written are kept, only missing ones are run.

    ``overrides`` may change the ``runner`` and ``scoring`` sections (budget, concurrency,
    executor...), nothing that would change what the existing rows mean. Scorers, their
    parameters, judge roles and prompt files are checked before anything runs.
    """
    run = RunDir.open(run_dir)
    overrides = list(overrides)
    for text in overrides:
        path, _ = parse_override(text)
        if path[0] not in RESUMABLE_SECTIONS:
            allowed = ", ".join(f"{s}.*" for s in RESUMABLE_SECTIONS)
            raise ConfigError(
                "--set", [f"{'.'.join(path)}: cannot change on resume; {allowed} can"]
            )
    config_path = run.file(RunDir.CONFIG)
    masked = masked_paths(read_yaml(config_path))
    config = load_config(config_path, overrides)
    if masked and log is not None:
        log(
            f"warning: {', '.join(masked)} held secrets when the run started and were recorded "
            f"as {MASK}; pass them again with --set (or read them from the environment)"
        )
    scoring = _check_scoring(run, config) if config.scoring.enabled else None

    def resume() -> RunResult:
        if overrides:
            run.write_config(config)
        runner = Runner(
            config,
            run,
            llm=llm,
            judge_llm=judge_llm,
            progress=progress,
            log=log,
            resuming=True,
            retry_errors=retry_errors,
            scoring=scoring,
        )
        return runner.execute()

    return guarded(run, resume, fresh=False)


def _check_scoring(run: RunDir, config: ExperimentConfig) -> ScoringBackend | None:
    """Refuse a resume whose score stage could not run (a bad ``scoring.params`` given with
    ``--set``, or recorded by an older version that did not check it); return the backend
    that checked it (its scorers bound for the session)."""
    try:
        tasks = sorted({s.task for s in run.samples()[0]})
    except RunDirError:  # no samples yet (killed before they were written): defaults unknown
        tasks = []
    scoring = optional_backend()
    problems = check_config_scoring(config.scoring, config.judge_models(), tasks, scoring)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SetupError(f"the run cannot resume:\n{lines}")
    return scoring
