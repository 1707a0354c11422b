"""The score stage: (trajectory, scorer) pairs without a current row go to the scoring backend.

The backend (``scoring`` in :data:`scanrag.registry.BACKENDS`; the built-in one lives in
``evaluation``) scores only the pairs missing from the rows already on disk, or whose row is
stale, and hands each new row to a callback, which appends it durably. Trajectories are fed in
chunks and the budget gate is asked between chunks, so a stop loses at most the pairs in flight
and a resume scores only what is missing. The kernel never imports ``evaluation`` itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanrag.llm.types import ChatModel
from scanrag.protocols import JudgeSetup, ScoringBackend, ScoringFailedError
from scanrag.runner.executors import RunJob
from scanrag.runner.progress import RunProgress
from scanrag.runner.store import JsonlLog
from scanrag.runner.usage import MeteredModel, UsageTally
from scanrag.schemas import Sample, Trajectory

log = logging.getLogger(__name__)


@dataclass
class ScoreOutcome:
    stop_reason: str | None = None
    pending: int = 0  # pairs still without a row (failed scorers, a stop)
    failures: int = 0  # pairs whose scorer raised this session


def samples_of(job: RunJob) -> dict[str, Sample]:
    return {s.id: s for d in job.datasets.values() for s in d.samples}


def backend() -> ScoringBackend:
    """The registered scoring backend (``scoring`` in ``scanrag.backends``)."""
    from scanrag.registry import BACKENDS

    return BACKENDS.create("scoring")


def scorer_names(job: RunJob, scoring: ScoringBackend | None = None) -> list[str]:
    """The configured scorers, else every registered scorer for the run's task types."""
    if job.config.scoring.scorers is not None:
        return list(job.config.scoring.scorers)
    tasks = sorted({s.task for s in samples_of(job).values()})
    return (scoring or backend()).default_scorers(tasks)


def judge_context(job: RunJob, llm: ChatModel | None, scoring: ScoringBackend) -> Any:
    runner = job.config.runner
    setup = JudgeSetup(
        judges=job.config.judge_models(),
        llm=llm,
        pdf_dirs=[d.pdf_dir for d in job.datasets.values()],
        cache_dir=Path(runner.cache_dir),
        dpi=runner.render_dpi,
        concurrency=runner.concurrency,
        judge_prompts=dict(job.config.scoring.judge_prompts),
    )
    return scoring.judge_context(setup)


def score_stage(
    job: RunJob,
    trajectories: JsonlLog,
    scores: JsonlLog,
    *,
    progress: RunProgress,
    llm: ChatModel | None,
    tally: UsageTally,
    gate: Callable[[], str | None],
    make_llm: Callable[[], ChatModel | None] | None = None,
    retry_failed: bool = False,
) -> ScoreOutcome:
    """Score every unscored (trajectory, scorer) pair of the run; with ``retry_failed`` also
    the pairs whose row failed (judge error, unparsable judge reply, render failure)."""
    scoring = backend()
    names = scorer_names(job, scoring)
    params = job.config.scoring.params
    samples = samples_of(job)
    rows = [Trajectory.model_validate(r) for r in trajectories.rows()]
    plain_ctx = judge_context(job, None, scoring)  # judge models decide which rows are stale
    existing = list(scores.rows())
    pending = scoring.pending(rows, samples, names, existing, params, plain_ctx, retry_failed)
    if not pending:
        return ScoreOutcome()
    if llm is None and make_llm is not None:
        llm = make_llm()
    ctx = judge_context(job, MeteredModel(llm, [tally]) if llm is not None else None, scoring)
    todo = list({(t.run_key, t.sample_id): t for t, _ in pending}.values())
    chunk = max(1, job.config.runner.concurrency * 4)
    outcome = ScoreOutcome()
    with progress.stage("score", len(pending)) as stage:

        def on_row(row: Any) -> None:
            scores.append(row)
            stage.advance(usage=_sum(row.usage) if row.usage else None)

        async def score_all() -> None:
            # One event loop for every chunk: the judge context's semaphore lives in it.
            for start in range(0, len(todo), chunk):
                outcome.stop_reason = gate()
                if outcome.stop_reason is not None:
                    return
                try:
                    await scoring.score(
                        todo[start : start + chunk],
                        samples,
                        names,
                        ctx,
                        existing,
                        params,
                        job.config.runner.concurrency,
                        on_row,
                        retry_failed,
                    )
                except ScoringFailedError as exc:
                    outcome.failures += len(exc.failures)
                    log.warning("scoring: %s", exc)

        asyncio.run(score_all())
    left = scoring.pending(rows, samples, names, list(scores.rows()), params, plain_ctx)
    if retry_failed:  # rows that failed again stay failed rows, not pending pairs
        tried = {(t.run_key, t.sample_id, name) for t, name in pending}
        left = [(t, name) for t, name in left if (t.run_key, t.sample_id, name) not in tried]
    outcome.pending = len(left)
    return outcome


def _sum(usage: Mapping[str, Any]) -> Any:
    from scanrag.schemas import Usage

    total = Usage()
    for value in usage.values():
        total = total.add(value if isinstance(value, Usage) else Usage.model_validate(value))
    return total


def summarize_rows(rows: list[dict[str, Any]], samples: Mapping[str, Sample]) -> dict[str, Any]:
    """The evaluation summary of score rows: per grid cell, every scorer's aggregates."""
    return backend().summarize(rows, samples)
