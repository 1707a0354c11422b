"""The scoring stage: score (trajectory, scorer) pairs that have no row yet, then summarize.

:func:`score_run` is idempotent: given the rows already written it scores only the missing
pairs, so running it twice, or after a crash, never repeats a judge call whose row reached
disk. Rows are handed to ``on_row`` as soon as each one is done (the CLI appends and fsyncs
there). A scorer that raises on an item does not stop the others and drops nothing: the
pair gets a ``scorer_error`` row carrying the exception's type and message (and the end of
its traceback), counted in the summary like a judge failure and scored again with
``retry_failed``.

:func:`summarize` groups rows by grid cell (run key) and calls each scorer's ``aggregate``;
it never calls a judge. Beside the status counts it counts each scorer's failed rows by
cause (:func:`scanrag.evaluation.failures.failure_counts`). A scorer whose ``aggregate``
raises gets no metrics in that cell and its exception in ``aggregate_errors``; the other
scorers and cells are summarized as usual.
"""

from __future__ import annotations

import asyncio
import dataclasses
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from scanrag.evaluation.base import (
    RowGroup,
    Scorer,
    ScorerTable,
    StatsOptions,
    aggregate_counting_errors,
    item_statuses,
    status_counts,
)
from scanrag.evaluation.failures import failure_counts
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.schemas import GroupSummary, RowKey, ScoreRow, Summary
from scanrag.hashing import stable_hash
from scanrag.schemas import Sample, Trajectory

RowSink = Callable[[ScoreRow], None]
MESSAGE_CHARS = 500  # of a scorer exception's message on its row
TRACE_CHARS = 2000  # of its traceback's end


def _message(exc: BaseException) -> str:
    """An exception's message on one line, cut to :data:`MESSAGE_CHARS`."""
    return " ".join(str(exc).split())[:MESSAGE_CHARS]


def error_text(exc: BaseException) -> str:
    """An exception as a row or a summary records it: its type and message."""
    message = _message(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def scorer_error_row(
    trajectory: Trajectory, sample: Sample, scorer: Scorer, exc: BaseException
) -> ScoreRow:
    """The ``scorer_error`` row of a pair whose scorer raised ``exc``: the exception's type
    and message as its reason, the end of the traceback in ``details`` (built by the base
    class's ``new_row``: the scorer's own code is what failed)."""
    trace = "".join(traceback.format_exception(exc))[-TRACE_CHARS:]
    return Scorer.new_row(
        scorer,
        trajectory,
        sample,
        status="scorer_error",
        reason=error_text(exc),
        details={"exception": type(exc).__name__, "message": _message(exc), "traceback": trace},
    )


def _as_trajectory(item: Trajectory | Mapping[str, Any]) -> Trajectory:
    return item if isinstance(item, Trajectory) else Trajectory.model_validate(item)


def _as_row(item: ScoreRow | Mapping[str, Any]) -> ScoreRow:
    return item if isinstance(item, ScoreRow) else ScoreRow.model_validate(item)


def latest_rows(rows: Iterable[ScoreRow | Mapping[str, Any]]) -> dict[RowKey, ScoreRow]:
    """Rows by key; a later row for the same key replaces an earlier one."""
    out: dict[RowKey, ScoreRow] = {}
    for item in rows:
        row = _as_row(item)
        out[row.key] = row
    return out


def latest_trajectories(
    trajectories: Iterable[Trajectory | Mapping[str, Any]],
) -> list[Trajectory]:
    """One trajectory per (grid cell, sample): the last one written."""
    by_key: dict[tuple[str, str], Trajectory] = {}
    for item in trajectories:
        traj = _as_trajectory(item)
        by_key[(traj.run_key or traj.strategy, traj.sample_id)] = traj
    return list(by_key.values())


def _sample_map(samples: Mapping[str, Sample] | Iterable[Sample]) -> Mapping[str, Sample]:
    if isinstance(samples, Mapping):
        return samples
    return {s.id: s for s in samples}


def _plain(value: Any) -> Any:
    """A JSON-able stand-in for a scorer attribute that is stable across processes."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if value is None or isinstance(value, str | int | float | bool | list | tuple | dict):
        return value
    return type(value).__qualname__  # no repr: it may carry a memory address


def content_hash(trajectory: Trajectory, sample: Sample | None) -> str:
    """Hash of what a trajectory's rows are computed from on the item side (the trajectory
    and its sample); computed once per trajectory and shared by its scorers' bases."""
    return stable_hash(
        {
            "trajectory": trajectory.model_dump(mode="json"),
            "sample": sample.model_dump(mode="json") if sample is not None else None,
        },
        length=24,
    )


def row_basis(content: str, scorer: Scorer, judges: JudgeConfig | None = None) -> str:
    """What a row is computed from: the item (``content``, see :func:`content_hash`), the
    scorer with its parameters, the judge model configured for each of its roles and any
    user prompt replacing a role's built-in one.

    Re-scoring compares it with the basis stored on the existing row, so a re-run trajectory,
    a changed gold, other scorer parameters or another judge model (a vision judge added
    after a ``skipped`` region row, say) are scored again, and nothing else is.
    """
    config = judges if judges is not None else JudgeConfig()
    params = {  # the name is the basis's "scorer" already
        k: _plain(v) for k, v in vars(scorer).items() if not k.startswith("_") and k != "name"
    }
    basis: dict[str, Any] = {
        "content": content,
        "scorer": scorer.name,
        "params": params,
        "judges": {role: config.model_for(role) for role in scorer.roles},
    }
    prompts = {r: stable_hash(config.prompts[r]) for r in scorer.roles if r in config.prompts}
    if prompts:  # only then, so rows scored with the built-in prompts keep their basis
        basis["prompts"] = prompts
    return stable_hash(basis, length=24)


def pending_pairs(
    trajectories: Sequence[Trajectory],
    samples: Mapping[str, Sample],
    scorers: Mapping[str, Scorer],
    existing: Mapping[RowKey, ScoreRow],
    retry_failed: bool = False,
    judges: JudgeConfig | None = None,
) -> list[tuple[Trajectory, Sample | None, Scorer]]:
    """The (trajectory, sample, scorer) triples that still need a row: no row yet, a row
    whose basis (:func:`row_basis`) is stale, or, with ``retry_failed``, a failed or partial
    row. Rows written before bases were recorded (``basis=None``) count as current."""
    todo = []
    for traj in trajectories:
        sample = samples.get(traj.sample_id)
        group = traj.run_key or traj.strategy
        content: str | None = None
        for name, scorer in scorers.items():
            if not scorer.item_level or (sample is not None and not scorer.applies(sample)):
                continue
            prior = existing.get((group, traj.sample_id, name))
            if prior is not None:
                if prior.basis is not None and content is None:
                    content = content_hash(traj, sample)
                stale = prior.basis is not None and prior.basis != row_basis(
                    content or "", scorer, judges
                )
                retry = retry_failed and (prior.failed or prior.status == "partial")
                if not (stale or retry):
                    continue
            todo.append((traj, sample, scorer))
    return todo


async def score_run(
    trajectories: Iterable[Trajectory | Mapping[str, Any]],
    samples: Mapping[str, Sample] | Iterable[Sample],
    scorer_names: Sequence[str],
    judge_ctx: JudgeContext | None = None,
    existing_rows: Iterable[ScoreRow | Mapping[str, Any]] = (),
    *,
    scorer_params: Mapping[str, Mapping[str, Any]] | None = None,
    concurrency: int = 8,
    on_row: RowSink | None = None,
    retry_failed: bool = False,
    table: ScorerTable | None = None,
) -> list[ScoreRow]:
    """Score every (trajectory, scorer) pair missing from ``existing_rows``; return new rows.

    ``retry_failed`` also re-scores pairs whose existing row failed or is partial, and a row
    whose basis is stale is always re-scored (the new row supersedes the old one: readers
    keep the last row per key). A trajectory whose sample is unknown gets a ``skipped`` row
    per scorer; a scorer that raises gets a ``scorer_error`` row (:func:`scorer_error_row`).
    ``table``: the scorers as a backend bound them (default: looked up now).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
    sample_map = _sample_map(samples)
    scorers = (table or ScorerTable()).build(scorer_names, scorer_params)
    ctx = judge_ctx if judge_ctx is not None else JudgeContext()
    todo = pending_pairs(
        latest_trajectories(trajectories),
        sample_map,
        scorers,
        latest_rows(existing_rows),
        retry_failed,
        ctx.config,
    )
    gate = asyncio.Semaphore(concurrency)
    contents: dict[tuple[str, str], str] = {}  # content hash per item, shared by its scorers
    done: list[ScoreRow] = []

    async def one(traj: Trajectory, sample: Sample | None, scorer: Scorer) -> None:
        async with gate:
            if sample is None:
                row = ScoreRow(
                    sample_id=traj.sample_id,
                    run_key=traj.run_key,
                    strategy=traj.strategy,
                    scorer=scorer.name,
                    status="skipped",
                    reason="no sample with this id among the run's samples",
                )
            else:
                try:
                    row = await scorer.score(traj, sample, judge=ctx)
                except Exception as exc:  # a scorer's bug is this pair's recorded status
                    row = scorer_error_row(traj, sample, scorer, exc)
        key_of_item = (traj.run_key or traj.strategy, traj.sample_id)
        if key_of_item not in contents:
            contents[key_of_item] = content_hash(traj, sample)
        row.basis = row_basis(contents[key_of_item], scorer, ctx.config)
        if on_row is not None:
            on_row(row)
        done.append(row)

    await asyncio.gather(*(one(t, s, sc) for t, s, sc in todo))
    return done


# --------------------------------------------------------------------------- summaries


def _aggregate_names(
    present: Sequence[str], requested: Sequence[str] | None, table: ScorerTable
) -> list[str]:
    names = list(requested) if requested is not None else list(present)
    if requested is None:
        names += table.dependents(present)
    return [n for n in dict.fromkeys(names)]


def summarize(
    rows: Iterable[ScoreRow | Mapping[str, Any]],
    samples: Mapping[str, Sample] | Iterable[Sample] | None = None,
    *,
    scorer_names: Sequence[str] | None = None,
    stats: StatsOptions | None = None,
    scorer_params: Mapping[str, Mapping[str, Any]] | None = None,
    table: ScorerTable | None = None,
) -> Summary:
    """Aggregate rows per grid cell. Later rows for a key replace earlier ones.

    ``scorer_names`` defaults to the scorers present in the rows plus every aggregate-only
    scorer (``item_level = False``) depending on one of them. Rows of scorers that are not
    registered any more are counted but not aggregated. ``table``: the scorers as a backend
    bound them (default: looked up now).
    """
    table = table or ScorerTable()
    stats = stats or StatsOptions()
    latest = latest_rows(rows)
    sample_map = _sample_map(samples) if samples is not None else {}
    grouped: dict[str, dict[str, dict[str, ScoreRow]]] = defaultdict(lambda: defaultdict(dict))
    strategies: dict[str, str] = {}
    judges: dict[str, set[str]] = defaultdict(set)
    for row in latest.values():
        grouped[row.group][row.scorer][row.sample_id] = row
        strategies.setdefault(row.group, row.strategy)
        for record in row.judges:
            if record.model:
                judges[record.role].add(f"{record.model}@{record.prompt_hash}")
    present = sorted({row.scorer for row in latest.values()})
    names = _aggregate_names(present, scorer_names, table)
    scorers = table.build([n for n in names if n in table], scorer_params)
    summary = Summary(
        scorers=names,
        judges={role: sorted(v) for role, v in sorted(judges.items())},
        n_resamples=stats.n_resamples,
        seed=stats.seed,
    )
    for group_name in sorted(grouped):
        by_scorer = {k: dict(v) for k, v in grouped[group_name].items()}
        group = RowGroup(group_name, strategies[group_name], by_scorer, sample_map)
        out = GroupSummary(
            group=group_name,
            strategy=strategies[group_name],
            items=len({sid for rows_ in by_scorer.values() for sid in rows_}),
            status={
                name: dict(sorted(status_counts(rows_.values()).items()))
                for name, rows_ in sorted(by_scorer.items())
            },
            item_status=item_statuses(by_scorer),
        )
        for name, rows_ in sorted(by_scorer.items()):
            has_judges = bool(scorers[name].roles) if name in scorers else True
            counts = failure_counts(rows_.values(), has_judges)
            if counts.failed:
                out.judge_errors[name] = counts
        for name, scorer in scorers.items():
            scorer_rows = list(by_scorer.get(name, {}).values())
            if scorer.item_level and not scorer_rows:
                continue
            try:
                result = aggregate_counting_errors(scorer, scorer_rows, group, stats)
            except Exception as exc:  # one scorer's aggregate must not lose the whole summary
                out.aggregate_errors[name] = error_text(exc)
                continue
            out.metrics.update({f"{name}.{k}": v for k, v in result.metrics.items()})
            out.tables.update({f"{name}.{k}": v for k, v in result.tables.items()})
        summary.groups[group_name] = out
    return summary
