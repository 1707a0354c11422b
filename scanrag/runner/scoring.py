"""The score stage: the one scoring path of ``scanrag run`` and ``scanrag score``.

:func:`scoring_job` reads what a run scores from its folder (trajectories, samples, PDF
folders) and takes scorers, their parameters and the judge models from the run's recorded
config, so both commands score a run the same way; ``scanrag score`` then replaces the fields
the user asked to change. :func:`score_run_dir` hands the job to the registered scoring
backend (``scoring`` in :data:`scanrag.registry.BACKENDS`; the built-in one lives in
``evaluation``), so the kernel never imports ``evaluation``: ``plan`` checks the job and
lists the pairs without a current row, ``score`` scores them, ``summarize`` (through
:func:`summarize`) aggregates the rows. Each new row is appended durably as soon as it is
done, trajectories are fed in chunks and the budget gate is asked between chunks, so a stop
loses at most the pairs in flight.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanrag.llm.types import ChatModel
from scanrag.protocols import ScoringBackend, ScoringFailedError, ScoringJob
from scanrag.rundir import JsonlLog, RunDir
from scanrag.runner.components import SetupError
from scanrag.runner.outcome import Stop
from scanrag.runner.progress import RunProgress
from scanrag.runner.scoring_checks import scoring_problems
from scanrag.runner.usage import MeteredModel, UsageTally
from scanrag.schemas import Trajectory, Usage
from scanrag.tasks import default_scorer_names

if TYPE_CHECKING:
    from scanrag.config import ExperimentConfig

log = logging.getLogger(__name__)
BARE_CONCURRENCY = 8  # judge calls at once for a folder without a recorded config


@dataclass
class ScoreOutcome:
    stop: Stop | None = None  # the gate's (a spent budget)
    pending: int = 0  # pairs still without a row (failed scorers, a stop)
    failures: dict[tuple[str, str, str], str] = field(default_factory=dict)
    new_rows: int = 0


def backend() -> ScoringBackend:
    """The registered scoring backend (``scoring`` in ``scanrag.backends``)."""
    from scanrag.registry import BACKENDS

    return BACKENDS.create("scoring")


def judge_models(
    recorded: Mapping[str, str],
    every: str | None = None,
    roles: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Judge model per role: the recorded ones (``ExperimentConfig.judge_models()``), else
    ``every`` for every role, then ``roles`` (role → model) one role each."""
    judges = {"default": every} if every is not None else dict(recorded)
    return {**judges, **(roles or {})}


def scoring_job(
    run: RunDir,
    config: ExperimentConfig | None,
    *,
    samples_path: Path | None = None,
    pdf_dirs: Sequence[Path] = (),
) -> tuple[ScoringJob, list[str]]:
    """The job that scores ``run`` as its recorded ``config`` says (``None``: a folder
    ``scanrag run`` did not write: the samples' default scorers, no judges but the default),
    with one message per samples row or trajectory line that could not be read.

    ``samples_path`` replaces the run's ``samples.jsonl``; ``pdf_dirs`` are searched before
    the run's PDF folders. The caller holds the run's lock.
    """
    from scanrag.config import ScoringSpec

    samples, sample_dir, warnings = run.samples(samples_path)
    folders = [*pdf_dirs, *run.pdf_dirs()]
    if sample_dir not in folders:
        folders.append(sample_dir)
    recorded = config.scoring if config is not None else ScoringSpec()
    names = recorded.scorers
    if names is None:
        names = default_scorer_names(sorted({s.task for s in samples}))
    trajectories, bad = run.trajectories()
    runner = config.runner if config is not None else None
    job = ScoringJob(
        trajectories=trajectories,
        samples={s.id: s for s in samples},
        scorers=list(names),
        params=recorded.params,
        judges=config.judge_models() if config is not None else {},
        judge_prompts=dict(recorded.judge_prompts),
        pdf_dirs=folders,
        cache_dir=Path(runner.cache_dir) if runner else run.path / "cache",
        dpi=runner.render_dpi if runner else 144,
        allow_outside_pdf_dir=any(e.get("allow_outside_pdf_dir") for e in run.datasets()),
        concurrency=runner.concurrency if runner else BARE_CONCURRENCY,
        resamples=recorded.resamples,
        seed=recorded.seed,
    )
    return job, [*warnings, *bad]


def score_run_dir(
    run: RunDir,
    job: ScoringJob,
    *,
    scores: JsonlLog | None = None,
    make_llm: Callable[[], ChatModel | None] | None = None,
    progress: RunProgress | None = None,
    tally: UsageTally | None = None,
    gate: Callable[[], Stop | None] = lambda: None,
    scoring: ScoringBackend | None = None,
) -> ScoreOutcome:
    """Score every (trajectory, scorer) pair of ``job`` (:func:`scoring_job`) without a
    current row in ``run``'s ``scores.jsonl``.

    Raises :class:`SetupError` listing every scorer, parameter, judge role or prompt file
    that cannot be used (:mod:`scanrag.runner.scoring_checks`) before anything is scored.
    ``scores`` is the open log to append to (the runner's); otherwise the folder's
    ``scores.jsonl`` is opened here. ``job.llm`` is the judges' client, else ``make_llm()``
    builds one when there is something to judge. ``scoring`` is the backend a run's preflight
    checked the job's scorers with (not checked again here); without one, the registered
    backend is created and the job checked. The caller holds the run's lock.
    """
    if scoring is None:
        scoring = backend()
        _refuse(run, scoring_problems(job, scoring))
    outcome = ScoreOutcome()
    own_log = scores is None
    log_ = scores if scores is not None else run.log(RunDir.SCORES)
    try:
        if own_log:
            log_.repair()
        job = replace(job, rows=list(log_.rows()))
        plan = scoring.plan(job)  # the judge models decide which rows are stale
        _refuse(run, plan.problems)
        if plan.pending:
            _score(job, plan.pending, scoring, log_, outcome, make_llm, progress, tally, gate)
    finally:
        if own_log:
            log_.close()
    return outcome


def _refuse(run: RunDir, problems: Sequence[str]) -> None:
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SetupError(f"cannot score {run.path}:\n{lines}")


def _score(
    job: ScoringJob,
    pending: Sequence[tuple[Trajectory, str]],
    scoring: ScoringBackend,
    scores: JsonlLog,
    outcome: ScoreOutcome,
    make_llm: Callable[[], ChatModel | None] | None,
    progress: RunProgress | None,
    tally: UsageTally | None,
    gate: Callable[[], Stop | None],
) -> None:
    llm = job.llm
    if llm is None and make_llm is not None:
        llm = make_llm()
    tally = tally or UsageTally()
    metered = MeteredModel(llm, [tally]) if llm is not None else None
    todo = list({(t.run_key, t.sample_id): t for t, _ in pending}.values())
    chunk = max(1, job.concurrency * 4)
    progress = progress or RunProgress(False, log=None)
    with progress.stage("score", len(pending)) as stage:

        def on_row(row: Any) -> None:
            scores.append(row)
            outcome.new_rows += 1
            failed = bool(getattr(row, "failed", False))
            stage.advance(usage=_sum(row.usage) if row.usage else None, error=failed)

        async def score_all() -> None:
            # One event loop for every chunk: the judge context's semaphore lives in it.
            for start in range(0, len(todo), chunk):
                outcome.stop = gate()
                if outcome.stop is not None:
                    return
                part = todo[start : start + chunk]
                try:
                    await scoring.score(replace(job, trajectories=part, llm=metered, on_row=on_row))
                except ScoringFailedError as exc:
                    outcome.failures.update(exc.failures)
                    log.warning("scoring: %s", exc)

        asyncio.run(score_all())
    left = scoring.plan(replace(job, rows=list(scores.rows()), retry_failed=False)).pending
    if job.retry_failed:  # rows that failed again stay failed rows, not pending pairs
        tried = {(t.run_key, t.sample_id, name) for t, name in pending}
        left = [(t, name) for t, name in left if (t.run_key, t.sample_id, name) not in tried]
    outcome.pending = len(left)


def _sum(usage: Mapping[str, Any]) -> Usage:
    return Usage.sum(usage.values())


def summarize(job: ScoringJob, scoring: ScoringBackend | None = None) -> dict[str, Any]:
    """The evaluation summary of ``job.rows`` (per grid cell, every scorer's aggregates), by
    ``scoring``'s ``summarize`` (default: the registered backend's); without rows, an empty
    one (no backend needed)."""
    if not job.rows:
        return {"headline": {}, "all": {}, "detail": None}
    return (scoring or backend()).summarize(job)


__all__ = [
    "ScoreOutcome",
    "backend",
    "judge_models",
    "score_run_dir",
    "scoring_job",
    "summarize",
]
