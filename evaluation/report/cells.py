"""What a grid cell is, as flat columns: dataset, strategy and its parameters, retriever, models.

Read from the run's ``manifest.json`` (its ``cells``, ``retrievers`` and ``models`` entries),
falling back on the trajectories for a folder without a manifest. The same columns head every
row of the comparison table and of the long export, so a pandas ``groupby`` over any of them
works across runs:

=====================  ==============================================================
``dataset``            the dataset(s) of the cell's items (``+``-joined when several)
``strategy``           the registered strategy name; ``run_key`` names the grid cell
``param.<name>``       each strategy parameter the config sets
``retriever``          the retriever alias; ``none`` for a cell without one (full_doc,
                       oracles), so a ``groupby`` keeps those cells
``retriever_type``     its registered type (``none`` without one); ``retriever.<name>`` its
                       configured parameters
``model.<role>``       the model of each agent role (reader, planner ...)
``model.<role>.<key>`` settings of that model's entry (endpoint, ``sampling.<name>``,
                       output mode...), when the manifest records model entries
``judge.<role>``       the judge model of each judge role; ``judge.<role>.<key>`` its
                       entry's settings (``endpoint`` ...) like a model role's
=====================  ==============================================================

Values keep their types: an integer parameter is an integer (in Parquet an integer column,
read by pandas as the nullable ``Int64``; for CSV pass ``dtype_backend="numpy_nullable"`` to
``pd.read_csv`` so a column with empty cells stays integer).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from scanrag.evaluation.report.data import Group

Scalar = str | int | float | bool | None
NO_RETRIEVER = "none"
"""The ``retriever`` (and ``retriever_type``) of a cell that has none."""


def scalar(value: Any) -> Scalar:
    """A value as one table cell: scalars as they are, anything else as compact JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _manifest_cell(group: Group) -> dict[str, Any]:
    for cell in group.run.manifest.get("cells") or []:
        if isinstance(cell, dict) and cell.get("run_key") == group.key:
            return cell
    return {}


def _datasets(group: Group) -> str | None:
    names = sorted(
        {
            str(t.metadata["dataset"])
            for t in group.trajectories.values()
            if t.metadata.get("dataset")
        }
    )
    return "+".join(names) if names else None


def _model_entry(manifest: Mapping[str, Any], ref: str) -> dict[str, Scalar]:
    """Settings of a model entry (``manifest.models.entries[ref]``), if recorded: nested
    mappings (sampling) one level down as dotted keys; the model only when it is not ``ref``."""
    entries = (manifest.get("models") or {}).get("entries") or {}
    entry = entries.get(ref) if isinstance(entries, dict) else None
    if not isinstance(entry, dict):
        return {}
    out: dict[str, Scalar] = {}
    for key, value in sorted(entry.items()):
        if key == "model" and value == ref:
            continue
        if isinstance(value, dict):
            out |= {f"{key}.{k}": scalar(v) for k, v in sorted(value.items())}
        else:
            out[str(key)] = scalar(value)
    return out


def describe_cell(group: Group) -> dict[str, Scalar]:
    """The columns of :mod:`this module <scanrag.evaluation.report.cells>` for one grid cell."""
    manifest = group.run.manifest
    cell = _manifest_cell(group)
    first = next(iter(group.trajectories.values()), None)
    retriever = cell.get("retriever")
    if retriever is None and first is not None:
        retriever = first.metadata.get("retriever")
    models = cell.get("models") or (dict(first.models) if first is not None else {})
    out: dict[str, Scalar] = {
        "run": group.run.name,
        "cell": group.label,
        "run_key": group.key,
        "dataset": _datasets(group),
        "strategy": group.strategy,
        "retriever": retriever or NO_RETRIEVER,
    }
    for name, value in sorted((cell.get("params") or {}).items()):
        out[f"param.{name}"] = scalar(value)
    spec = (manifest.get("retrievers") or {}).get(retriever) if retriever else None
    if isinstance(spec, dict):
        out["retriever_type"] = scalar(spec.get("type"))
        for name, value in sorted((spec.get("params") or {}).items()):
            out[f"retriever.{name}"] = scalar(value)
    else:
        out["retriever_type"] = retriever or NO_RETRIEVER
    for role, ref in sorted(models.items()):
        out[f"model.{role}"] = str(ref)
        for key, value in _model_entry(manifest, str(ref)).items():
            out[f"model.{role}.{key}"] = value
    judges = (manifest.get("models") or {}).get("judges") or {}
    if isinstance(judges, dict):
        for role, ref in sorted(judges.items()):
            out[f"judge.{role}"] = scalar(ref)
            for key, value in _model_entry(manifest, str(ref)).items():
                out[f"judge.{role}.{key}"] = value
    return out


def union_columns(rows: Iterable[Mapping[str, Any]], first: Iterable[str] = ()) -> list[str]:
    """Every key of ``rows`` in first-seen order, with ``first`` leading."""
    columns = list(first)
    for row in rows:
        columns += [k for k in row if k not in columns]
    return columns
