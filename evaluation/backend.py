"""The judge-and-score stage as the kernel's runner drives it (a ``ScoringBackend``).

Registered as ``scoring`` in the ``scanrag.backends`` entry-point group, so the runner in
``scanrag`` reaches the scorers without importing this package. Every method is a thin
adapter over :mod:`scanrag.evaluation.stage`: scorers and their parameters are named, rows cross the
boundary as :class:`~scanrag.evaluation.schemas.ScoreRow` objects or their JSON form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scanrag.evaluation.base import StatsOptions, default_scorer_names
from scanrag.evaluation.judging import ROLES, JudgeConfig, JudgeContext
from scanrag.evaluation.stage import (
    build_scorers,
    latest_rows,
    latest_trajectories,
    pending_pairs,
    score_run,
    summarize,
)
from scanrag.protocols import JudgeSetup
from scanrag.schemas import Sample, Trajectory


class EvaluationBackend:
    """The built-in scoring backend."""

    def default_scorers(self, tasks: Sequence[str]) -> list[str]:
        return default_scorer_names(sorted(set(tasks)))

    def judge_context(self, setup: JudgeSetup) -> JudgeContext:
        from scanrag.evaluation.documents import DocumentSource
        from scanrag.evaluation.judge_prompts import read_prompt_files

        prompts = read_prompt_files(dict(getattr(setup, "judge_prompts", None) or {}))
        config = JudgeConfig.from_mapping(
            setup.judges, concurrency=setup.concurrency, prompts=prompts
        )
        documents = DocumentSource(
            list(setup.pdf_dirs),
            cache_dir=setup.cache_dir,
            dpi=setup.dpi,
            allow_outside=setup.allow_outside_pdf_dir,
        )
        return JudgeContext(llm=setup.llm, config=config, documents=documents)

    def judge_problems(
        self, judges: Mapping[str, str], judge_prompts: Mapping[str, str]
    ) -> list[tuple[str, str]]:
        """``(config key, message)`` for each judge role no scorer has and each prompt file
        that cannot be used (unreadable, too large, a role without prompts, unknown fields)."""
        from scanrag.evaluation.judge_prompts import PromptFileError, read_prompt_files

        problems = [
            (
                f"models.judges.{role}",
                f"unknown judge role {role!r}; known roles: {', '.join(ROLES)}",
            )
            for role in judges
            if role != "default" and role not in ROLES
        ]
        for role, path in judge_prompts.items():
            try:
                read_prompt_files({role: path})
            except PromptFileError as exc:
                problems.append((f"scoring.judge_prompts.{role}", str(exc)))
        return problems

    def pending(
        self,
        trajectories: Sequence[Trajectory],
        samples: Mapping[str, Sample],
        scorers: Sequence[str],
        existing: Sequence[Mapping[str, Any]],
        params: Mapping[str, Mapping[str, Any]],
        judge_ctx: JudgeContext,
        retry_failed: bool = False,
    ) -> list[tuple[Trajectory, str]]:
        built = build_scorers(scorers, params)
        todo = pending_pairs(
            latest_trajectories(trajectories),
            samples,
            built,
            latest_rows(existing),
            retry_failed,
            judges=judge_ctx.config,
        )
        return [(traj, scorer.name) for traj, _, scorer in todo]

    async def score(
        self,
        trajectories: Sequence[Trajectory],
        samples: Mapping[str, Sample],
        scorers: Sequence[str],
        judge_ctx: JudgeContext,
        existing: Sequence[Mapping[str, Any]],
        params: Mapping[str, Mapping[str, Any]],
        concurrency: int,
        on_row: Callable[[Any], None],
        retry_failed: bool = False,
    ) -> None:
        # raises scanrag.evaluation.stage.ScoringError, a ScoringFailedError, when some pairs raised
        await score_run(
            trajectories,
            samples,
            scorers,
            judge_ctx,
            existing,
            scorer_params=params,
            concurrency=concurrency,
            on_row=on_row,
            retry_failed=retry_failed,
        )

    def summarize(
        self,
        rows: Sequence[Mapping[str, Any]],
        samples: Mapping[str, Sample],
        params: Mapping[str, Mapping[str, Any]],
        resamples: int,
        seed: int,
    ) -> dict[str, Any]:
        stats = StatsOptions(n_resamples=resamples, seed=seed)
        summary = summarize(rows, samples, stats=stats, scorer_params=params)
        return {
            "headline": summary.flat(headline_only=True),
            "all": summary.flat(),
            "detail": summary.model_dump(mode="json"),
        }
