"""``summary.json``: what a run's rows add up to (its table: :mod:`scanrag.runner.summary_table`).

:func:`write_summary` is the one writer of ``summary.json``, used by ``scanrag run`` and
``scanrag score``. Counts and usage are recomputed from the rows on disk, so the summary is
right whatever number of sessions (or commands) wrote them; metrics per grid cell come from
the scoring backend's ``summarize`` with the run's scorer parameters.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scanrag.config import ExperimentConfig, RunCell, ScoringSpec
from scanrag.protocols import ScoringBackend, ScoringJob
from scanrag.rundir import RunDir, row_key
from scanrag.runner.conditions import cell_conditions, decider_entry, headline_scorers
from scanrag.runner.scoring import summarize
from scanrag.runner.usage import usage_from_json
from scanrag.schemas import Sample, Usage


def usage_of_rows(rows: Iterable[dict[str, Any]]) -> Usage:
    """Total usage of trajectory or score rows (their per-stage ``usage`` mappings)."""
    total = Usage()
    for row in rows:
        usage = row.get("usage")
        if not isinstance(usage, dict):
            continue
        if "calls" in usage and not isinstance(usage.get("calls"), dict):
            total = total.add(Usage.model_validate(usage))
            continue
        total = total.add(Usage.sum(usage_from_json(usage).values()))
    return total


def _usage_by_stage(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    stages: dict[str, Usage] = defaultdict(Usage)
    for row in rows:
        usage = row.get("usage")
        if isinstance(usage, dict) and not (
            "calls" in usage and not isinstance(usage["calls"], dict)
        ):
            for stage, stage_usage in usage_from_json(usage).items():
                stages[stage] = stages[stage].add(stage_usage)
    data = {k: v.model_dump() for k, v in sorted(stages.items())}
    data["total"] = Usage.sum(stages.values()).model_dump()
    return data


def cell_descriptions(
    cells: Sequence[RunCell] | None, trajectories: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The grid cells: the config's (``cells``), or (for a folder without a config) those
    of the rows."""
    if cells is not None:
        return [
            {
                "run_key": c.run_key,
                "strategy": c.strategy.name,
                "retriever": c.retriever,
                "models": c.models,
            }
            for c in cells
        ]
    seen: dict[str, dict[str, Any]] = {}
    for row in trajectories:
        key = row_key(row)[0]
        seen.setdefault(
            key,
            {
                "run_key": key,
                "strategy": row.get("strategy"),
                "retriever": row.get("retriever"),
                "models": row.get("models") or {},
            },
        )
    return list(seen.values())


def _latest_score_keys(scores: Iterable[Mapping[str, Any]]) -> set[tuple[str, str, str]]:
    """One key per (cell, sample, scorer): a re-scored pair counts once."""
    return {(*row_key(r), str(r.get("scorer"))) for r in scores}


def build_summary(
    run: RunDir,
    config: ExperimentConfig | None,
    stop_reason: str | None,
    manifest: Mapping[str, Any],
    *,
    samples: Mapping[str, Sample],
    score_pending: int | None = None,
    scoring: ScoringSpec | None = None,
    backend: ScoringBackend | None = None,
) -> dict[str, Any]:
    """The run's summary, recomputed from the rows on disk.

    ``score_pending`` is the number of (trajectory, scorer) pairs still without a row after
    the score stage (``None`` when scoring did not run this session). ``scoring`` gives the
    scorer parameters and bootstrap settings (default: the config's); ``backend`` is the
    scoring backend that scored the rows (default: the registered one).
    """
    trajectories = run.trajectory_rows()
    scores = run.score_rows()
    cells = cell_descriptions(config.cells() if config is not None else None, trajectories)
    n_samples = sum(int(d.get("samples", 0)) for d in manifest.get("datasets", [])) or len(samples)
    planned = n_samples * len(cells)
    by_cell: dict[str, Counter[str]] = defaultdict(Counter)
    seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    spent: dict[str, Usage] = defaultdict(Usage)
    for row in trajectories:
        key = row_key(row)[0]
        by_cell[key][str(row.get("status", "ok"))] += 1
        for name, value in _seconds(row).items():
            seconds[key][name] += value
        spent[key] = spent[key].add(usage_of_rows([row]))
    done_keys = {row_key(r) for r in trajectories}
    scored_keys = {row_key(r) for r in scores}
    complete = stop_reason is None and len(done_keys) >= planned
    scoring = scoring or (config.scoring if config is not None else ScoringSpec())
    if scoring.enabled:
        complete = complete and not score_pending
    job = ScoringJob(
        rows=scores,
        samples=samples,
        params=scoring.params,
        resamples=scoring.resamples,
        seed=scoring.seed,
    )
    metrics = summarize(job, backend)
    decider = config.report.decider if config is not None else manifest.get("decider")
    keys = [cell["run_key"] for cell in cells]
    conditions = cell_conditions(keys, manifest, trajectories, scores, decider)
    cells_out = {}
    for cell in cells:
        key = cell["run_key"]
        counts = by_cell.get(key, Counter())
        n = sum(counts.values())
        cells_out[key] = {
            **{k: cell[k] for k in ("strategy", "retriever", "models")},
            "items": n,
            "status": dict(sorted(counts.items())),
            "seconds_per_item": _per_item(seconds[key], "total", n),
            "model_seconds_per_item": _per_item(seconds[key], "model", n),
            "wait_seconds_per_item": _per_item(seconds[key], "wait", n),
            "count_seconds_per_item": _per_item(seconds[key], "count", n),
            "usage": spent[key].model_dump(),
            "usd_per_item": round(spent[key].cost_usd / n, 6) if n else None,
            **conditions[key],
        }
    name = config.name if config is not None else run.summary().get("name") or run.path.name
    return {
        "name": name,
        "run_dir": str(run.path),
        "complete": complete,
        "stop_reason": stop_reason,
        "resume": None if complete else f"scanrag run --resume {run.path}",
        "counts": {
            "samples": n_samples,
            "cells": len(cells),
            "planned": planned,
            "trajectories": len(done_keys),
            "scored": len(scored_keys & done_keys),
            "score_rows": len(_latest_score_keys(scores)),
            "score_pending": score_pending,
        },
        "datasets": [_dataset_counts(d) for d in manifest.get("datasets", [])],
        "cells": cells_out,
        "metrics": metrics["all"],
        "headline": metrics["headline"],
        "headline_scorers": headline_scorers(metrics["headline"]),
        "decider": decider_entry(decider, scores, manifest),
        "scoring": metrics["detail"],
        "usage": {"run": _usage_by_stage(trajectories), "score": _usage_by_stage(scores)},
        "sessions": manifest.get("sessions", []),
    }


def _seconds(row: Mapping[str, Any]) -> dict[str, float]:
    """Wall, model, wait and token-counting seconds of one trajectory row, and whether it
    timed its calls (``timed``) and its token counts (``counted``)."""
    timings = row.get("timings") or {}
    out = {"total": float(timings.get("total", 0.0))}
    if "model" in timings:
        out |= {"model": float(timings["model"]), "wait": float(timings.get("wait", 0.0))}
        out["timed"] = 1.0
    if "count" in timings:
        out |= {"count": float(timings["count"]), "counted": 1.0}
    return out


def _per_item(seconds: Mapping[str, float], name: str, n: int) -> float | None:
    """Mean seconds per item; model and wait only when every item timed its calls, count
    when every item timed its token counts (rows written before counts were timed: ``None``)."""
    flag = {"total": None, "count": "counted"}.get(name, "timed")
    timed = n if flag is None else int(seconds.get(flag, 0))
    return round(seconds.get(name, 0.0) / n, 3) if n and timed == n else None


def write_summary(
    run: RunDir,
    config: ExperimentConfig | None,
    stop_reason: str | None = None,
    manifest: Mapping[str, Any] | None = None,
    *,
    samples: Mapping[str, Sample] | None = None,
    score_pending: int | None = None,
    scoring: ScoringSpec | None = None,
    backend: ScoringBackend | None = None,
) -> dict[str, Any]:
    """Rebuild ``summary.json`` from the rows on disk and write it (the only writer)."""
    if samples is None:
        samples = {s.id: s for s in run.samples()[0]}
    summary = build_summary(
        run,
        config,
        stop_reason,
        run.manifest() if manifest is None else manifest,
        samples=samples,
        score_pending=score_pending,
        scoring=scoring,
        backend=backend,
    )
    run.write_json(RunDir.SUMMARY, summary)
    return summary


def _dataset_counts(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Samples run, rows the loader dropped and samples recorded as input errors."""
    report = entry.get("report") or {}
    return {
        "name": entry.get("name"),
        "samples": entry.get("samples"),
        "rows_dropped": len(report.get("dropped") or []),
        "input_errors": len(entry.get("input_errors") or {}),
    }
