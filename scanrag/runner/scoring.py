"""The score stage: the one scoring path of ``scanrag run`` and ``scanrag score``.

:func:`score_run_dir` reads what it scores from the run folder (trajectories, samples, PDF
folders, the rows already written) and takes scorers, their parameters and the judge models
from the run's recorded config, so both commands score a run the same way; a
:class:`ScoreRequest` only overrides what the user asked to change. It reaches the judge-and-
score stage through the registered scoring backend (``scoring`` in
:data:`scanrag.registry.BACKENDS`; the built-in one lives in ``evaluation``), so the kernel
never imports ``evaluation``. Only pairs without a current row are scored; each new row is
appended durably as soon as it is done, trajectories are fed in chunks and the budget gate is
asked between chunks, so a stop loses at most the pairs in flight.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanrag.llm.types import ChatModel
from scanrag.protocols import JudgeSetup, ScoringBackend, ScoringFailedError
from scanrag.rundir import JsonlLog, RunDir
from scanrag.runner.components import SetupError
from scanrag.runner.outcome import Stop
from scanrag.runner.progress import RunProgress
from scanrag.runner.scoring_checks import scoring_problems
from scanrag.runner.usage import MeteredModel, UsageTally
from scanrag.schemas import Sample, Trajectory, Usage

FAILED_ROW_STATUSES = frozenset({"judge_error", "judge_parse_error", "render_failed"})

if TYPE_CHECKING:
    from scanrag.config import ExperimentConfig

log = logging.getLogger(__name__)
BARE_CONCURRENCY = 8  # judge calls at once for a folder without a recorded config


@dataclass
class ScoreRequest:
    """What to change from the run's recorded scoring setup (``None``: keep it)."""

    scorers: list[str] | None = None
    params: Mapping[str, Mapping[str, Any]] | None = None
    judge_model: str | None = None  # every judge role
    role_models: Mapping[str, str] = field(default_factory=dict)  # one role each
    retry_failed: bool = False
    concurrency: int | None = None
    judge_prompts: Mapping[str, str] | None = None  # role → prompt file used verbatim
    samples_path: Path | None = None  # a folder without samples.jsonl
    pdf_dirs: Sequence[Path] = ()
    cache_dir: Path | None = None


@dataclass
class ScoringInputs:
    """Everything read from the run folder that scoring needs."""

    trajectories: list[Trajectory]
    samples: dict[str, Sample]
    pdf_dirs: list[Path]
    scorers: list[str]
    params: dict[str, dict[str, Any]]
    judges: dict[str, str]
    judge_prompts: dict[str, str]
    concurrency: int
    cache_dir: Path
    dpi: int
    allow_outside_pdf_dir: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class ScoreOutcome:
    stop: Stop | None = None  # the gate's (a spent budget)
    pending: int = 0  # pairs still without a row (failed scorers, a stop)
    failures: dict[tuple[str, str, str], str] = field(default_factory=dict)
    new_rows: int = 0
    warnings: list[str] = field(default_factory=list)


def backend() -> ScoringBackend:
    """The registered scoring backend (``scoring`` in ``scanrag.backends``)."""
    from scanrag.registry import BACKENDS

    return BACKENDS.create("scoring")


def judge_models(recorded: Mapping[str, str], request: ScoreRequest) -> dict[str, str]:
    """Judge model per role: the recorded ones (``ExperimentConfig.judge_models()``), else
    ``request.judge_model`` for every role, then ``request.role_models`` per role."""
    judges = dict(recorded)
    if request.judge_model is not None:
        judges = {"default": request.judge_model}
    return {**judges, **request.role_models}


def scoring_inputs(
    run: RunDir,
    config: ExperimentConfig | None,
    request: ScoreRequest,
    scoring: ScoringBackend,
) -> ScoringInputs:
    """Read the run folder and resolve scorers, parameters and judges; raise
    :class:`SetupError` listing every scorer, parameter, judge role or prompt file that cannot
    be used (:mod:`scanrag.runner.scoring_checks`) before anything is scored."""
    samples, sample_dir, warnings = run.samples(request.samples_path)
    folders = [*request.pdf_dirs, *run.pdf_dirs()]
    if sample_dir not in folders:
        folders.append(sample_dir)
    recorded = config.scoring if config is not None else None
    names = request.scorers
    if names is None and recorded is not None and recorded.scorers is not None:
        names = list(recorded.scorers)
    if names is None:
        names = scoring.default_scorers(sorted({s.task for s in samples}))
    params = request.params if request.params is not None else (recorded.params if recorded else {})
    judges = judge_models(config.judge_models() if config is not None else {}, request)
    prompts = dict(
        request.judge_prompts
        if request.judge_prompts is not None
        else (recorded.judge_prompts if recorded else {})
    )
    problems = scoring_problems(names, params, judges, prompts, scoring)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SetupError(f"cannot score {run.path}:\n{lines}")
    trajectories, bad = run.trajectories()
    runner = config.runner if config is not None else None
    return ScoringInputs(
        trajectories=trajectories,
        samples={s.id: s for s in samples},
        pdf_dirs=folders,
        scorers=list(names),
        params={k: dict(v) for k, v in params.items() if isinstance(v, Mapping)},
        judges=judges,
        judge_prompts=prompts,
        concurrency=request.concurrency or (runner.concurrency if runner else BARE_CONCURRENCY),
        cache_dir=request.cache_dir or (Path(runner.cache_dir) if runner else run.path / "cache"),
        dpi=runner.render_dpi if runner else 144,
        allow_outside_pdf_dir=any(e.get("allow_outside_pdf_dir") for e in run.datasets()),
        warnings=[*warnings, *bad],
    )


def _judge_context(inputs: ScoringInputs, llm: ChatModel | None, scoring: ScoringBackend) -> Any:
    setup = JudgeSetup(
        judges=inputs.judges,
        llm=llm,
        pdf_dirs=inputs.pdf_dirs,
        cache_dir=inputs.cache_dir,
        dpi=inputs.dpi,
        concurrency=inputs.concurrency,
        judge_prompts=inputs.judge_prompts,
        allow_outside_pdf_dir=inputs.allow_outside_pdf_dir,
    )
    return scoring.judge_context(setup)


def score_run_dir(
    run: RunDir,
    config: ExperimentConfig | None,
    request: ScoreRequest | None = None,
    *,
    scores: JsonlLog | None = None,
    llm: ChatModel | None = None,
    make_llm: Callable[[], ChatModel | None] | None = None,
    progress: RunProgress | None = None,
    tally: UsageTally | None = None,
    gate: Callable[[], Stop | None] = lambda: None,
) -> ScoreOutcome:
    """Score every (trajectory, scorer) pair of ``run`` without a current row.

    ``config`` is the run's recorded config (``None`` for a folder ``scanrag run`` did not
    write). ``scores`` is the open log to append to (the runner's); otherwise the folder's
    ``scores.jsonl`` is opened here. ``llm`` is the judges' client, else ``make_llm()`` builds
    one when there is something to judge. The caller holds the run's lock.
    """
    request = request or ScoreRequest()
    scoring = backend()
    inputs = scoring_inputs(run, config, request, scoring)
    outcome = ScoreOutcome(warnings=list(inputs.warnings))
    own_log = scores is None
    log_ = scores if scores is not None else run.log(RunDir.SCORES)
    try:
        if own_log:
            log_.repair()
        _score(inputs, scoring, log_, outcome, request, llm, make_llm, progress, tally, gate)
    finally:
        if own_log:
            log_.close()
    return outcome


def _score(
    inputs: ScoringInputs,
    scoring: ScoringBackend,
    scores: JsonlLog,
    outcome: ScoreOutcome,
    request: ScoreRequest,
    llm: ChatModel | None,
    make_llm: Callable[[], ChatModel | None] | None,
    progress: RunProgress | None,
    tally: UsageTally | None,
    gate: Callable[[], Stop | None],
) -> None:
    plain_ctx = _judge_context(inputs, None, scoring)  # judge models decide which rows are stale
    existing = list(scores.rows())
    args = (inputs.trajectories, inputs.samples, inputs.scorers)
    pending = scoring.pending(*args, existing, inputs.params, plain_ctx, request.retry_failed)
    if not pending:
        return
    if llm is None and make_llm is not None:
        llm = make_llm()
    tally = tally or UsageTally()
    ctx = _judge_context(inputs, MeteredModel(llm, [tally]) if llm is not None else None, scoring)
    todo = list({(t.run_key, t.sample_id): t for t, _ in pending}.values())
    chunk = max(1, inputs.concurrency * 4)
    progress = progress or RunProgress(False, log=None)
    with progress.stage("score", len(pending)) as stage:

        def on_row(row: Any) -> None:
            scores.append(row)
            outcome.new_rows += 1
            failed = getattr(row, "status", "ok") in FAILED_ROW_STATUSES
            stage.advance(usage=_sum(row.usage) if row.usage else None, error=failed)

        async def score_all() -> None:
            # One event loop for every chunk: the judge context's semaphore lives in it.
            for start in range(0, len(todo), chunk):
                outcome.stop = gate()
                if outcome.stop is not None:
                    return
                try:
                    await scoring.score(
                        todo[start : start + chunk],
                        inputs.samples,
                        inputs.scorers,
                        ctx,
                        existing,
                        inputs.params,
                        inputs.concurrency,
                        on_row,
                        request.retry_failed,
                    )
                except ScoringFailedError as exc:
                    outcome.failures.update(exc.failures)
                    log.warning("scoring: %s", exc)

        asyncio.run(score_all())
    left = scoring.pending(*args, list(scores.rows()), inputs.params, plain_ctx)
    if request.retry_failed:  # rows that failed again stay failed rows, not pending pairs
        tried = {(t.run_key, t.sample_id, name) for t, name in pending}
        left = [(t, name) for t, name in left if (t.run_key, t.sample_id, name) not in tried]
    outcome.pending = len(left)


def _sum(usage: Mapping[str, Any]) -> Usage:
    return Usage.sum(usage.values())


def summarize_rows(
    rows: Sequence[Mapping[str, Any]],
    samples: Mapping[str, Sample],
    params: Mapping[str, Mapping[str, Any]] | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """The evaluation summary of score rows: per grid cell, every scorer's aggregates."""
    if not rows:
        return {"headline": {}, "all": {}, "detail": None}
    return backend().summarize(rows, samples, params or {}, resamples, seed)


__all__ = [
    "ScoreOutcome",
    "ScoreRequest",
    "ScoringInputs",
    "backend",
    "judge_models",
    "score_run_dir",
    "scoring_inputs",
    "summarize_rows",
]
