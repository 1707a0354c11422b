"""Tidy exports of finished runs: a long table (item × grid cell × metric) and the wide
comparison (one row per grid cell), as CSV or Parquet.

Both lead with the columns that say what a cell is (:mod:`scanrag.evaluation.report.cells`: dataset,
strategy and parameters, retriever, model per role, judges). The long table then has one row
per (item, cell, scorer, metric):

==================  ===================================================================
``sample_id``       the item; ``dataset`` is the item's own dataset
``task``            its task type; ``doc_id`` its primary document
``doc_type`` …      the breakdown fields: ``doc_type``, ``evidence_sources`` (``|``-joined),
                    ``answer_format``, ``n_evidence_pages`` (how many gold pages; the
                    dataset's ``evidence_pages`` is the page list), ``answerable``
``item_status``     the trajectory's status (``ok`` or an error kind)
``outcome``         correct / wrong / unanswered / error / unscored
(:mod:`scanrag.evaluation.outcomes`)
``degraded``        1 when the item's input was reduced below its strategy's promise;
                    ``gold_pages_dropped`` the gold pages those reductions never showed
                    (``|``-joined); ``reductions`` their kinds (``page_cap|context``)
``decided_by``      the scorer whose ``correct`` gave the outcome (``report.decider``)
``replayed_calls``  model calls of the item answered from the response cache
``scorer``          the scorer, or ``trajectory`` for the item's own usage and time
                    (``usd``, ``prompt_tokens``, ``completion_tokens``, ``calls``, ``wall_s``,
                    ``model_s``, ``wait_s``)
``row_status``      the score row's status (``ok``, ``skipped``, ``judge_error`` …)
``metric``          the metric name; ``value`` its per-item value (empty when undefined)
==================  ===================================================================

``pd.read_csv(path)`` or ``pd.read_parquet(path)`` reads either; see docs/outputs.md.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from scanrag.evaluation.outcomes import Outcome
from scanrag.evaluation.report.breakdown import breakdown_fields
from scanrag.evaluation.report.cells import describe_cell, union_columns
from scanrag.evaluation.report.conditions import decisions, is_degraded
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.measures import item_seconds, outcomes
from scanrag.schemas import Sample, Trajectory

Format = Literal["csv", "parquet"]
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
    "reductions",
    "decided_by",
    "replayed_calls",
)
LONG_FIRST = ("run", "cell", "run_key", "dataset", "strategy", "retriever")
LONG_LAST = ("scorer", "row_status", "metric", "value")


def parquet_available() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


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
        "evidence_sources": "|".join(fields.get("evidence_sources") or []) or None,
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
        return {"degraded": None, "gold_pages_dropped": None, "reductions": None}
    kinds = dict.fromkeys(r.kind for r in traj.reductions)
    return {
        "degraded": int(is_degraded(traj)),
        "gold_pages_dropped": "|".join(map(str, traj.gold_pages_dropped)) or None,
        "reductions": "|".join(kinds) or None,
        "replayed_calls": traj.replayed_calls,
    }


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


def long_csv(groups: Sequence[Group]) -> str:
    from scanrag.evaluation.report.table import records_csv

    records = long_records(groups)
    return records_csv(records, long_columns(records))


def write_table(
    records: Sequence[dict[str, Any]], columns: Sequence[str], path: Path, fmt: Format
) -> Path:
    """``records`` as ``path`` in CSV or Parquet, scrubbed of secrets like every run file."""
    from scanrag.rundir import write_atomic
    from scanrag.scrub import scrub_data, scrub_text

    if fmt == "csv":
        from scanrag.evaluation.report.table import records_csv

        write_atomic(path, scrub_text(records_csv(records, columns)))
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    clean = scrub_data([dict(r) for r in records])
    data = {c: _uniform([r.get(c) for r in clean]) for c in columns}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(_with_pandas_types(pa.table(data)), tmp)
    tmp.replace(path)
    return path


def _with_pandas_types(table: Any) -> Any:
    """``table`` with pandas metadata that names the nullable ``Int64`` / ``boolean`` dtypes
    for integer and boolean columns with empty cells, so ``pd.read_parquet`` keeps
    ``param.k`` an integer where some cells lack it (pyarrow alone reads such a column as
    floats); the file's own column types are integers either way."""
    import pyarrow as pa

    if importlib.util.find_spec("pandas") is None:
        return table
    nullable = {pa.int64(): "Int64", pa.bool_(): "boolean"}
    gaps = {
        field.name: nullable[field.type]
        for field, column in zip(table.schema, table.columns, strict=True)
        if field.type in nullable and column.null_count
    }
    if not gaps:
        return table
    frame = table.to_pandas().astype(gaps)
    return pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False)


def _uniform(values: list[Any]) -> list[Any]:
    """One type per column: numbers stay numbers (bools too), anything mixed becomes text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {bool} or kinds <= {int} or kinds <= {int, float} or kinds <= {str}:
        return [float(v) if kinds == {int, float} and v is not None else v for v in values]
    return [None if v is None else str(v) for v in values]


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
    (default: the run's ``exports/`` folder for one run, ``./exports`` for several); returns
    the files written. Raises :class:`ValueError` for parquet without pyarrow."""
    from scanrag.evaluation.report.data import (
        all_groups,
        check_out_folder,
        default_baseline,
        find_group,
        load_runs,
    )
    from scanrag.evaluation.report.table import build_table, wide_columns, wide_rows
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
        write_table(long, long_columns(long), out / f"{RunDir.EXPORT_LONG}.{fmt}", fmt),
        write_table(wide, wide_columns(table, wide), out / f"{RunDir.EXPORT_WIDE}.{fmt}", fmt),
    ]
