"""The judge-and-score stage as the kernel's runner drives it (a ``ScoringBackend``).

Registered as ``scoring`` in the ``scanrag.backends`` entry-point group, so the runner in
``scanrag`` reaches the scorers without importing this package. Each method takes one
:class:`~scanrag.protocols.ScoringJob` and hands its fields to :mod:`scanrag.evaluation.stage`;
rows go out as :class:`~scanrag.evaluation.schemas.ScoreRow` objects and come back as their
JSON form.

The judges of a job (models, prompt files, documents, client) become one
:class:`~scanrag.evaluation.judging.JudgeContext`, built once per backend and setup: the
runner scores a run in chunks, and the chunks share the context's opened documents.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Sequence
from typing import Any

from scanrag.evaluation.base import ScorerTable, StatsOptions
from scanrag.evaluation.judging import ROLES, JudgeConfig, JudgeContext
from scanrag.evaluation.stage import (
    latest_rows,
    latest_trajectories,
    pending_pairs,
    score_run,
    summarize,
)
from scanrag.protocols import ScoringJob, ScoringPlan
from scanrag.registry import RegistryError, UnknownNameError


def judge_problems(job: ScoringJob, table: ScorerTable | None = None) -> list[str]:
    """``config.key: message`` for each judge role no scorer has, each prompt file that
    cannot be used (unreadable, too large, a role without prompts, unknown fields) or that no
    scorer of the job would read, and what a scorer's own ``job_problems`` finds (an
    ``extractor`` prompt with ``mmlongbench`` told not to extract)."""
    from scanrag.evaluation.judge_prompts import PromptFileError, read_prompt_files

    problems = [
        f"models.judges.{role}: unknown judge role {role!r}; known roles: {', '.join(ROLES)}"
        for role in job.judges
        if role != "default" and role not in ROLES
    ]
    readable = []
    for role, path in job.judge_prompts.items():
        try:
            read_prompt_files({role: path})
        except PromptFileError as exc:
            problems.append(f"scoring.judge_prompts.{role}: {exc}")
        else:
            readable.append(role)
    factories = _factories(job.scorers, table or ScorerTable())
    roles = {r for f in factories.values() for r in getattr(getattr(f, "cls", f), "roles", ())}
    if len(factories) == len(job.scorers):  # an unknown scorer's roles are not known
        problems += [
            f"scoring.judge_prompts.{role}: no scorer of this run has the {role!r} judge role "
            f"(scorers: {', '.join(job.scorers) or 'none'}), so the prompt file would go unused"
            for role in readable
            if role not in roles
        ]
    for name, factory in factories.items():
        check = getattr(getattr(factory, "cls", factory), "job_problems", None)
        if callable(check):
            problems += check(job.params.get(name) or {}, job.judge_prompts)
    return problems


def _factories(names: Sequence[str], table: ScorerTable) -> dict[str, Any]:
    """The factories of ``names`` that load, bound in ``table`` (the others are the scoring
    checks' to report)."""
    found = {}
    for name in names:
        try:
            found[name] = table.factory(name)
        except (RegistryError, UnknownNameError):
            continue
    return found


class EvaluationBackend:
    """The built-in scoring backend."""

    def __init__(self) -> None:
        self._contexts: dict[Hashable, JudgeContext] = {}
        self.table = ScorerTable()  # the scorers of the jobs planned, bound once

    def plan(self, job: ScoringJob) -> ScoringPlan:
        problems = judge_problems(job, self.table)
        if not problems:
            # bind what the summary aggregates as well; a scorer that fails to load fails
            # the summary, as it would unbound
            with contextlib.suppress(RegistryError):
                self.table.dependents(job.scorers)
        if problems or not job.trajectories:
            return ScoringPlan(problems=problems)
        todo = pending_pairs(
            latest_trajectories(job.trajectories),
            job.samples,
            self.table.build(job.scorers, job.params),
            latest_rows(job.rows),
            job.retry_failed,
            judges=self.judge_context(job).config,
        )
        return ScoringPlan(pending=[(traj, scorer.name) for traj, _, scorer in todo])

    async def score(self, job: ScoringJob) -> None:
        # a scorer that raises gets a scorer_error row: nothing is raised for it
        await score_run(
            job.trajectories,
            job.samples,
            job.scorers,
            self.judge_context(job),
            job.rows,
            scorer_params=job.params,
            concurrency=job.concurrency,
            on_row=job.on_row,
            retry_failed=job.retry_failed,
            table=self.table,
        )

    def summarize(self, job: ScoringJob) -> dict[str, Any]:
        stats = StatsOptions(n_resamples=job.resamples, seed=job.seed)
        summary = summarize(
            job.rows, job.samples, stats=stats, scorer_params=job.params, table=self.table
        )
        return {
            "headline": summary.flat(headline_only=True),
            "all": summary.flat(),
            "detail": summary.model_dump(mode="json"),
        }

    def judge_context(self, job: ScoringJob) -> JudgeContext:
        """The job's judges: its models per role and prompt files (read here; a bad one
        raises :class:`~scanrag.evaluation.judge_prompts.PromptFileError`), its client and
        its documents; one context per setup, shared by every job that has it."""
        key = (
            tuple(job.judges.items()),
            tuple(job.judge_prompts.items()),
            job.concurrency,
            id(job.llm),  # the context holds the client, so the id stays its own
            tuple(job.pdf_dirs),
            job.cache_dir,
            job.dpi,
            job.allow_outside_pdf_dir,
        )
        if key not in self._contexts:
            self._contexts[key] = _new_context(job)
        return self._contexts[key]


def _new_context(job: ScoringJob) -> JudgeContext:
    from scanrag.evaluation.documents import DocumentSource
    from scanrag.evaluation.judge_prompts import read_prompt_files

    prompts = read_prompt_files(dict(job.judge_prompts))
    config = JudgeConfig.from_mapping(job.judges, concurrency=job.concurrency, prompts=prompts)
    documents = DocumentSource(
        list(job.pdf_dirs),
        cache_dir=job.cache_dir,
        dpi=job.dpi,
        allow_outside=job.allow_outside_pdf_dir,
    )
    return JudgeContext(llm=job.llm, config=config, documents=documents)
