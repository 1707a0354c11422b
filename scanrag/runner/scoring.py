"""The score stage: (trajectory, scorer) pairs without a row go through the evaluation stage.

``evaluation.stage.score_run`` scores only the pairs missing from the rows already on disk and
hands each new row to a callback, which appends it durably. Trajectories are fed in chunks and
the budget gate is asked between chunks, so a stop loses at most the pairs in flight and a
resume scores only what is missing. ``evaluation`` is imported lazily, inside these functions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanrag.llm.types import ChatModel
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


def scorer_names(job: RunJob) -> list[str]:
    """The configured scorers, else every registered scorer for the run's task types."""
    if job.config.scoring.scorers is not None:
        return list(job.config.scoring.scorers)
    from evaluation.base import default_scorer_names

    tasks = sorted({s.task for s in samples_of(job).values()})
    return default_scorer_names(tasks)


def _pending(
    trajectories: Sequence[Trajectory],
    samples: Mapping[str, Sample],
    names: Sequence[str],
    existing: Sequence[dict[str, Any]],
    params: Mapping[str, Mapping[str, Any]],
    judges: Any = None,
) -> list[tuple[Trajectory, Any, Any]]:
    from evaluation.stage import build_scorers, latest_rows, latest_trajectories, pending_pairs

    scorers = build_scorers(names, params)
    return pending_pairs(
        latest_trajectories(trajectories),
        samples,
        scorers,
        latest_rows(existing),
        judges=judges,
    )


def judge_context(job: RunJob, llm: ChatModel | None) -> Any:
    from evaluation.documents import DocumentSource
    from evaluation.judging import JudgeConfig, JudgeContext

    runner = job.config.runner
    config = JudgeConfig.from_mapping(job.config.judge_models(), concurrency=runner.concurrency)
    documents = DocumentSource(
        [d.pdf_dir for d in job.datasets.values()],
        cache_dir=Path(runner.cache_dir),
        dpi=runner.render_dpi,
    )
    return JudgeContext(llm=llm, config=config, documents=documents)


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
) -> ScoreOutcome:
    """Score every unscored (trajectory, scorer) pair of the run."""
    names = scorer_names(job)
    params = job.config.scoring.params
    samples = samples_of(job)
    rows = [Trajectory.model_validate(r) for r in trajectories.rows()]
    judges = judge_context(job, None).config  # the judge models rows are scored with
    pending = _pending(rows, samples, names, list(scores.rows()), params, judges)
    if not pending:
        return ScoreOutcome()
    from evaluation.stage import ScoringError, score_run

    if llm is None and make_llm is not None:
        llm = make_llm()
    ctx = judge_context(job, MeteredModel(llm, [tally]) if llm is not None else None)
    todo = list({(t.run_key, t.sample_id): t for t, _, _ in pending}.values())
    existing = list(scores.rows())
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
                    await score_run(
                        todo[start : start + chunk],
                        samples,
                        names,
                        ctx,
                        existing,
                        scorer_params=params,
                        concurrency=job.config.runner.concurrency,
                        on_row=on_row,
                    )
                except ScoringError as exc:
                    outcome.failures += len(exc.failures)
                    log.warning("scoring: %s", exc)

        asyncio.run(score_all())
    outcome.pending = len(_pending(rows, samples, names, list(scores.rows()), params, judges))
    return outcome


def _sum(usage: Mapping[str, Any]) -> Any:
    from scanrag.schemas import Usage

    total = Usage()
    for value in usage.values():
        total = total.add(value if isinstance(value, Usage) else Usage.model_validate(value))
    return total


def summarize_rows(rows: list[dict[str, Any]], samples: Mapping[str, Sample]) -> dict[str, Any]:
    """The evaluation summary of score rows: per grid cell, every scorer's aggregates."""
    from evaluation.stage import summarize

    summary = summarize(rows, samples)
    return {
        "headline": summary.flat(headline_only=True),
        "all": summary.flat(),
        "detail": summary.model_dump(mode="json"),
    }
