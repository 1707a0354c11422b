"""One documented type per export column, the same in CSV, Parquet and JSON lines.

Every column of ``items_long`` and ``comparison`` is listed here (:data:`CELL_COLUMNS`,
:data:`LONG_COLUMNS`, :data:`WIDE_COLUMNS`, a ``<...>`` in a name standing for a family of
columns) with one type of :data:`TYPE_MEANINGS`: ``str``, ``int``, ``float``, ``bool``,
``list[str]``, ``list[int]``, ``reductions`` (a list of ``{kind, pages_dropped,
chars_dropped}``) or ``json`` (an object as text); a cell column takes its values' type.
The writers (:mod:`scanrag.evaluation.report.export_write`) refuse a column listed nowhere, and
docs/outputs.md is generated from these lists.

CSV has no lists: a list column holds JSON text there. Each table is written with
``<table>.columns.json`` beside it, and :func:`read_export` reads any of the three formats
into pandas with the documented types, so each gives the same frame.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ColumnType = Literal["str", "int", "float", "bool", "list[str]", "list[int]", "reductions", "json"]
LIST_TYPES = frozenset({"list[str]", "list[int]", "reductions"})
INFERRED: Literal["inferred"] = "inferred"  # a cell column: the type of its values
PANDAS_DTYPES: dict[str, str] = {
    "str": "string",
    "int": "Int64",
    "float": "Float64",
    "bool": "boolean",
    "json": "string",
    "list[str]": "object",
    "list[int]": "object",
    "reductions": "object",
}
TYPES_SUFFIX = ".columns.json"
TYPE_MEANINGS: dict[str, str] = {
    "str": "text",
    "int": "a whole number (a count, a page number, a 0/1 flag); pandas `Int64`",
    "float": "a number (a metric value, seconds, dollars); pandas `Float64`",
    "bool": "true / false; pandas `boolean`",
    "list[str]": "a list of texts",
    "list[int]": "a list of whole numbers",
    "reductions": 'a list of `{"kind": str, "pages_dropped": int, "chars_dropped": int}`, '
    "one entry per reduction kind",
    "json": "a JSON object as text (caps, replay sources), the same text in every format",
    INFERRED: "a cell column: `int`, `float`, `bool` or `str` by its values (a list or "
    "mapping as JSON text), one type per column; values of several types make it `str`",
}
FORMAT_NOTES = (
    "An empty cell (`null` in JSON lines and Parquet) means no value; a count that is zero "
    "is 0. CSV has no lists: a list column holds the list as JSON text (`[5, 7]`); Parquet "
    "and JSON lines keep lists as lists. `read_export(path)` (`from "
    "scanrag.evaluation.report.export_types import read_export`) reads any of the three "
    "formats with these types (`Int64`, `Float64`, `boolean`, `string`, lists as Python "
    "lists): the same frame from each."
)


@dataclass(frozen=True)
class Column:
    """One column, or a family of columns (``<...>`` in the name stands for any text)."""

    name: str
    type: ColumnType | Literal["inferred"]
    meaning: str

    def matches(self, column: str, metrics: Collection[str] = ()) -> bool:
        """Whether ``column`` is this column, or one of this family; ``<metric>`` stands
        only for one of ``metrics`` (the table's headline metrics)."""
        if "<" not in self.name:
            return column == self.name
        pattern = "".join(
            f"(?P<{part[1:-1]}>.+)" if part.startswith("<") else re.escape(part)
            for part in re.split(r"(<[^>]+>)", self.name)
        )
        found = re.fullmatch(pattern, column)
        if found is None:
            return False
        return "metric" not in found.groupdict() or found.group("metric") in metrics


CELL_COLUMNS = (
    Column("run", "str", "the run's name"),
    Column("cell", "str", "the grid cell's label (prefixed with the run's name when needed)"),
    Column("run_key", "str", "the grid cell's key"),
    Column("dataset", "str", "the dataset(s) of the cell's items (`+`-joined when several)"),
    Column("strategy", "str", "the registered strategy name"),
    Column("retriever", "str", "the retriever alias (`none` for a cell without one)"),
    Column("retriever_type", "str", "its registered type (`none` without one)"),
    Column("param.<name>", INFERRED, "each strategy parameter the config sets"),
    Column("retriever.<name>", INFERRED, "the retriever's configured parameters"),
    Column("model.<role>", "str", "the model of each agent role (reader, planner ...)"),
    Column(
        "model.<role>.<key>",
        INFERRED,
        "that model's entry settings (endpoint, sampling.<name>, output_mode ...)",
    ),
    Column("judge.<role>", "str", "the judge model of each judge role"),
    Column("judge.<role>.<key>", INFERRED, "that judge's entry settings"),
)

LONG_COLUMNS = (
    Column("sample_id", "str", "the item"),
    Column("task", "str", "its task type"),
    Column("doc_id", "str", "its primary document"),
    Column("doc_type", "str", "the document type (breakdown field)"),
    Column("evidence_sources", "list[str]", "where the gold evidence sits (Table, Chart ...)"),
    Column("answer_format", "str", "Str, Int, Float, List or None"),
    Column("n_evidence_pages", "int", "how many gold pages the item has"),
    Column("answerable", "bool", "whether the question has an answer in the document"),
    Column("item_status", "str", "the trajectory's status (ok or an error kind)"),
    Column("outcome", "str", "correct / wrong / unanswered / error / unscored"),
    Column("degraded", "int", "1 when the input was reduced below the strategy's promise"),
    Column("gold_pages_dropped", "list[int]", "gold pages the item's reductions never showed"),
    Column("pages_dropped", "int", "pages its reductions left out (all kinds)"),
    Column("chars_dropped", "int", "characters of page text its reductions left out"),
    Column("reductions", "reductions", "per reduction kind: pages and characters dropped"),
    Column("decided_by", "str", "the scorer whose correct gave the outcome (report.decider)"),
    Column("replayed_calls", "int", "model calls of the item answered from the response cache"),
    Column("scorer", "str", "the scorer, or trajectory for the item's own usage and time"),
    Column("row_status", "str", "the score row's status (ok, skipped, judge_error ...)"),
    Column("metric", "str", "the metric name"),
    Column("value", "float", "its per-item value (empty when undefined)"),
)

WIDE_COLUMNS = (
    Column("label", "str", "the cell's label"),
    Column("baseline", "int", "1 for the baseline cell"),
    Column("n_correct", "int", "items correct"),
    Column("n_wrong", "int", "items wrong"),
    Column("n_unanswered", "int", "items unanswered"),
    Column("n_error", "int", "items that ended in an error"),
    Column("n_unscored", "int", "items not scored"),
    Column("errors.<kind>", "int", "items per error kind (0 where none)"),
    Column("cell_label", "str", "the label with the caps its items were read under"),
    Column("caps", "json", "the caps (pages, chars_per_page, images, windows)"),
    Column("n_degraded", "int", "degraded items"),
    Column("n_gold_pages_dropped", "int", "degraded items that lost gold pages"),
    Column("decider", "str", "the decider (report.decider)"),
    Column("judge_models", "list[str]", "the judge models of the deciding scorers"),
    Column("judge_rules_items", "int", "items both the answer judge and the rules scored"),
    Column("judge_rules_disagree", "int", "of those, items where they disagree"),
    Column("judge_rules_disagreement", "float", "the disagreement rate (empty without items)"),
    Column("replayed_calls", "int", "model calls replayed from the response cache"),
    Column("replayed_items", "int", "items with a replayed call"),
    Column("replayed_from", "json", "run folder → calls replayed from it"),
    Column("decided_by.<scorer>", "int", "items each scorer decided (0 where none)"),
    Column("<metric>.low", "float", "the low end of its 95% interval"),
    Column("<metric>.high", "float", "the high end of its 95% interval"),
    Column("<metric>.n", "int", "items the metric is over"),
    Column("<metric>.errors", "int", "of those, items that ended in an error"),
    Column("<metric>.diff", "float", "difference from the baseline (paired bootstrap)"),
    Column("<metric>.p_value", "float", "its p-value"),
    Column("<metric>", "float", "each headline metric's value"),
    Column("items", "int", "items of the cell"),
    Column("usd_per_q", "float", "USD per question (reader)"),
    Column("tokens_per_q", "float", "tokens per question"),
    Column("model_seconds_per_q", "float", "seconds in model calls per question"),
    Column("wait_seconds_per_q", "float", "seconds waiting around model calls per question"),
    Column("count_seconds_per_q", "float", "seconds counting prompt tokens per question"),
    Column("seconds_per_q", "float", "wall seconds per question"),
    Column("judge_usd_per_q", "float", "judge USD per question"),
)


def infer_type(values: Iterable[Any]) -> ColumnType:
    """The one type of a cell column's values: bool, int, float (ints and floats), else str."""
    kinds = {type(v) for v in values if v is not None}
    if kinds and kinds <= {bool}:
        return "bool"
    if kinds and kinds <= {int}:
        return "int"
    if kinds and kinds <= {int, float}:
        return "float"
    return "str"


def column_types(
    columns: Sequence[str],
    records: Sequence[Mapping[str, Any]],
    schema: Sequence[Column],
    metrics: Collection[str] = (),
) -> dict[str, ColumnType]:
    """The type of every column: the entry of ``schema`` (or of the cell columns) that names
    it exactly, else the first family it belongs to; a cell column's from its values. A
    column no entry names is an error: every column an export writes is documented."""
    out: dict[str, ColumnType] = {}
    entries = [*CELL_COLUMNS, *schema]
    exact = {e.name: e for e in entries if "<" not in e.name}
    families = [e for e in entries if "<" in e.name]
    for name in columns:
        entry = exact.get(name) or next((e for e in families if e.matches(name, metrics)), None)
        if entry is None:
            raise ValueError(f"export column {name!r} has no documented type")
        kind = entry.type
        out[name] = infer_type(r.get(name) for r in records) if kind == INFERRED else kind
    return out


def typed_value(value: Any, kind: ColumnType) -> Any:
    """``value`` as a value of ``kind`` (``None`` stays ``None``; NaN becomes ``None``)."""
    if value is None:
        return None
    if kind == "int":
        return int(value)
    if kind == "float":
        number = float(value)
        return None if number != number or number in (float("inf"), float("-inf")) else number
    if kind == "bool":
        return bool(value)
    if kind in ("str", "json"):
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if kind == "list[int]":
        return [int(v) for v in value]
    if kind == "list[str]":
        return [str(v) for v in value]
    return [dict(v) for v in value]  # reductions


def types_path(path: Path) -> Path:
    """``items_long.columns.json`` beside ``items_long.csv`` (or ``.parquet``, ``.jsonl``)."""
    return path.with_name(path.stem + TYPES_SUFFIX)


def read_export(path: str | Path) -> Any:
    """A table written by ``scanrag export`` (CSV, Parquet or JSON lines) as a pandas frame
    with the documented types of its ``.columns.json``: the same frame from every format."""
    import pandas as pd

    path = Path(path)
    sidecar = types_path(path)
    if not sidecar.is_file():
        raise FileNotFoundError(f"{sidecar} is missing: export the run again")
    types: dict[str, ColumnType] = json.loads(sidecar.read_text(encoding="utf-8"))
    scalar = {c: PANDAS_DTYPES[t] for c, t in types.items() if t not in LIST_TYPES}
    if path.suffix == ".csv":
        frame = pd.read_csv(path, dtype=scalar, keep_default_na=False, na_values=[""])
        for column in (c for c, t in types.items() if t in LIST_TYPES):
            frame[column] = [None if pd.isna(v) else json.loads(v) for v in frame[column]]
    elif path.suffix == ".parquet":
        frame = pd.read_parquet(path)
        for column in (c for c, t in types.items() if t in LIST_TYPES):
            frame[column] = [_as_list(v) for v in frame[column]]
    elif path.suffix == ".jsonl":
        frame = pd.read_json(
            path, lines=True, dtype=False, convert_dates=False, keep_default_dates=False
        )
        frame = frame.reindex(columns=list(types))
    else:
        raise ValueError(f"{path}: not an export (.csv, .parquet or .jsonl)")
    return frame[list(types)].astype(scalar)


def _as_list(value: Any) -> list[Any] | None:
    """A Parquet list cell (a numpy array, of dicts for reductions) as a Python list."""
    if value is None:
        return None
    return [_plain(v) for v in value]


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value.item() if hasattr(value, "item") else value
