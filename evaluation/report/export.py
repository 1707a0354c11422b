"""Tidy exports of finished runs: a long table (item × grid cell × metric) and the wide
comparison (one row per grid cell), as CSV, Parquet or JSON lines.

Both lead with the columns that say what a cell is (:mod:`scanrag.evaluation.report.cells`: dataset,
strategy and parameters, retriever, model per role, judges). The long table then has one row
per (item, cell, scorer, metric); every column and its type is listed in
:mod:`scanrag.evaluation.report.export_types` (``LONG_COLUMNS``, ``WIDE_COLUMNS``) and in
docs/outputs.md. The ``trajectory`` scorer holds the item's own usage and time (``usd``,
``prompt_tokens``, ``completion_tokens``, ``calls``, ``wall_s``, ``model_s``, ``wait_s``,
``count_s``).

:func:`~scanrag.evaluation.report.export_types.read_export` reads any format back with the
documented types; ``pd.read_parquet`` and ``pd.read_json(lines=True)`` read the files as they
are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from scanrag.evaluation.outcomes import Outcome
from scanrag.evaluation.report.breakdown import breakdown_fields
from scanrag.evaluation.report.cells import describe_cell, union_columns
from scanrag.evaluation.report.conditions import decisions, is_degraded
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.export_types import LONG_COLUMNS, ColumnType, column_types
from scanrag.evaluation.report.export_write import Format, parquet_available, write_table
from scanrag.evaluation.report.measures import item_seconds, outcomes
from scanrag.schemas import Sample, Trajectory

ITEM_COLUMNS = (
    "sample_id",
    "dataset",
    "task",
    "doc_id",
    "doc_type",
    "evidence_sources",
    "answer_format",
    "n_evidence_pages",
    "answerable",
    "item_status",
    "outcome",
    "degraded",
    "gold_pages_dropped",
    "pages_dropped",
    "chars_dropped",
    "reductions",
    "decided_by",
    "replayed_calls",
)
LONG_FIRST = ("run", "cell", "run_key", "dataset", "strategy", "retriever")
LONG_LAST = ("scorer", "row_status", "metric", "value")


def _item(
    sample: Sample | None,
    traj: Trajectory | None,
    outcome: Outcome | None,
    decided_by: str | None = None,
) -> dict:
    fields = breakdown_fields(sample) if sample is not None else {}
    dataset = traj.metadata.get("dataset") if traj is not None else None
    return {
        "dataset": None if dataset is None else str(dataset),
        "task": sample.task if sample is not None else None,
        "doc_id": sample.primary_doc if sample is not None else None,
        "doc_type": fields.get("doc_type"),
        "evidence_sources": list(fields.get("evidence_sources") or []) or None,
        "answer_format": fields.get("answer_format"),
        "n_evidence_pages": fields.get("evidence_pages"),
        "answerable": sample.answerable if sample is not None else None,
        "item_status": str(traj.status) if traj is not None else None,
        "outcome": outcome.value if outcome is not None else None,
        **_conditions(traj),
        "decided_by": decided_by,
    }


def _conditions(traj: Trajectory | None) -> dict[str, Any]:
    if traj is None:
        return dict.fromkeys(("degraded", "gold_pages_dropped", "reductions"))
    kinds = reductions_by_kind(traj)
    return {
        "degraded": int(is_degraded(traj)),
        "gold_pages_dropped": list(traj.gold_pages_dropped),
        "pages_dropped": sum(k["pages_dropped"] for k in kinds),
        "chars_dropped": sum(k["chars_dropped"] for k in kinds),
        "reductions": kinds,
        "replayed_calls": traj.replayed_calls,
    }


def reductions_by_kind(traj: Trajectory) -> list[dict[str, Any]]:
    """The item's reductions per kind, in first-seen order: pages and characters dropped."""
    by_kind: dict[str, dict[str, Any]] = {}
    for reduction in traj.reductions:
        entry = by_kind.setdefault(
            reduction.kind, {"kind": reduction.kind, "pages_dropped": 0, "chars_dropped": 0}
        )
        entry["pages_dropped"] += len(reduction.pages_dropped)
        entry["chars_dropped"] += reduction.chars_dropped
    return list(by_kind.values())


def trajectory_metrics(traj: Trajectory) -> dict[str, float | None]:
    """An item's own usage and time as metrics of the ``trajectory`` pseudo-scorer."""
    usage = traj.total_usage
    wall, model, wait = item_seconds(traj)
    return {
        "usd": usage.cost_usd,
        "prompt_tokens": float(usage.prompt_tokens),
        "completion_tokens": float(usage.completion_tokens),
        "calls": float(usage.calls),
        "wall_s": wall,
        "model_s": model,
        "wait_s": wait,
        "count_s": traj.timings.get("count"),
    }


def _group_records(group: Group) -> Iterator[dict[str, Any]]:
    cell = describe_cell(group)
    by_item = outcomes(group)
    decided = decisions(group)
    ids = set(group.trajectories) | {sid for rows in group.rows.values() for sid in rows}
    for sid in sorted(ids):
        traj = group.trajectories.get(sid)
        base = {
            **cell,
            "sample_id": sid,
            **_item(
                group.run.samples.get(sid),
                traj,
                by_item.get(sid),
                decided[sid].scorer if sid in decided else None,
            ),
        }
        if traj is not None:
            status = str(traj.status)
            for metric, value in trajectory_metrics(traj).items():
                yield base | {
                    "scorer": "trajectory",
                    "row_status": status,
                    "metric": metric,
                    "value": value,
                }
        for scorer in sorted(group.rows):
            row = group.rows[scorer].get(sid)
            if row is None:
                continue
            line = base | {"scorer": scorer, "row_status": row.status}
            if line["dataset"] is None:
                line["dataset"] = row.dataset
            if line["item_status"] is None:
                line["item_status"] = row.item_status
            for metric, value in row.metrics.items():
                yield line | {"metric": metric, "value": value}


def long_records(groups: Sequence[Group]) -> list[dict[str, Any]]:
    """Every (item, cell, scorer, metric) of ``groups`` as one flat record."""
    return [record for group in groups for record in _group_records(group)]


def long_columns(records: Sequence[dict[str, Any]]) -> list[str]:
    """Cell columns first, then the item columns, then scorer, status, metric and value."""
    columns = union_columns(records, LONG_FIRST)
    tail = [*ITEM_COLUMNS, *LONG_LAST]
    head = [c for c in columns if c in LONG_FIRST or c not in tail]
    return head + [c for c in tail if c not in head]


def long_types(records: Sequence[dict[str, Any]]) -> dict[str, ColumnType]:
    """Every column of the long table with its documented type, in column order."""
    return column_types(long_columns(records), records, LONG_COLUMNS)


def long_csv(groups: Sequence[Group]) -> str:
    from scanrag.evaluation.report.export_write import csv_text

    records = long_records(groups)
    return csv_text(records, long_types(records))


def export_runs(
    run_dirs: Sequence[str | Path],
    out_dir: str | Path | None = None,
    *,
    fmt: Format = "csv",
    baseline: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[Path]:
    """Write the long table and the wide comparison of ``run_dirs`` into ``out_dir``
    (default: the run's ``exports/`` folder for one run, ``./exports`` for several), each with
    its ``.columns.json``; returns the tables written. Raises :class:`ValueError` for parquet
    without pyarrow."""
    from scanrag.evaluation.report.data import (
        all_groups,
        check_out_folder,
        default_baseline,
        find_group,
        load_runs,
    )
    from scanrag.evaluation.report.table import build_table, wide_rows, wide_types
    from scanrag.rundir import RunDir

    if fmt == "parquet" and not parquet_available():
        raise ValueError("parquet needs pyarrow (pip install 'scanrag[export]'); use --format csv")
    if not run_dirs:
        raise ValueError("export needs at least one run directory")
    paths = [Path(p) for p in run_dirs]
    runs = load_runs(paths)
    groups = all_groups(runs)
    base = find_group(groups, baseline) if baseline else default_baseline(groups)
    default = RunDir(paths[0]).file(RunDir.EXPORTS) if len(paths) == 1 else Path(RunDir.EXPORTS)
    out = check_out_folder(Path(out_dir) if out_dir is not None else default)
    long = long_records(groups)
    table = build_table(groups, base, n_resamples=n_resamples, seed=seed)
    wide = wide_rows(table)
    return [
        write_table(long, long_types(long), out / f"{RunDir.EXPORT_LONG}.{fmt}", fmt),
        write_table(wide, wide_types(table, wide), out / f"{RunDir.EXPORT_WIDE}.{fmt}", fmt),
    ]
