"""Writing export tables as CSV, Parquet or JSON lines, each column with its documented type
(:mod:`scanrag.evaluation.report.export_types`), scrubbed of secrets like every run file.

Every table is written with ``<table>.columns.json`` (column → type) beside it, which
:func:`~scanrag.evaluation.report.export_types.read_export` reads.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from scanrag.evaluation.report.export_types import (
    LIST_TYPES,
    ColumnType,
    typed_value,
    types_path,
)

Format = Literal["csv", "parquet", "jsonl"]
FORMATS: tuple[Format, ...] = ("csv", "parquet", "jsonl")


def parquet_available() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def typed_rows(
    records: Sequence[Mapping[str, Any]], types: Mapping[str, ColumnType]
) -> list[dict[str, Any]]:
    """``records`` with every column (in ``types``' order) as a value of its type."""
    return [{c: typed_value(r.get(c), t) for c, t in types.items()} for r in records]


def csv_text(records: Sequence[Mapping[str, Any]], types: Mapping[str, ColumnType]) -> str:
    """``records`` as CSV: empty cells for no value, lists as JSON text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(types))
    for row in typed_rows(records, types):
        writer.writerow([_csv_cell(v, types[c]) for c, v in row.items()])
    return buffer.getvalue()


def _csv_cell(value: Any, kind: ColumnType) -> Any:
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False) if kind in LIST_TYPES else value


def jsonl_text(records: Sequence[Mapping[str, Any]], types: Mapping[str, ColumnType]) -> str:
    """``records`` as JSON lines: one object a row, every column present (``null``: no value)."""
    rows = typed_rows(records, types)
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_table(
    records: Sequence[Mapping[str, Any]],
    types: Mapping[str, ColumnType],
    path: Path,
    fmt: Format,
) -> Path:
    """``records`` as ``path`` in ``fmt`` and the column types beside it
    (``<table>.columns.json``)."""
    from scanrag.rundir import write_atomic
    from scanrag.scrub import scrub_data

    clean = scrub_data([dict(r) for r in records])
    if fmt == "csv":
        write_atomic(path, csv_text(clean, types))
    elif fmt == "jsonl":
        write_atomic(path, jsonl_text(clean, types))
    else:
        _write_parquet(typed_rows(clean, types), types, path)
    write_atomic(types_path(path), json.dumps(dict(types), indent=1) + "\n")
    return path


def _arrow_type(kind: ColumnType) -> Any:
    import pyarrow as pa

    reduction = pa.struct(
        [("kind", pa.string()), ("pages_dropped", pa.int64()), ("chars_dropped", pa.int64())]
    )
    return {
        "str": pa.string(),
        "json": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "list[str]": pa.list_(pa.string()),
        "list[int]": pa.list_(pa.int64()),
        "reductions": pa.list_(reduction),
    }[kind]


def _write_parquet(
    rows: Sequence[Mapping[str, Any]], types: Mapping[str, ColumnType], path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(c, _arrow_type(t)) for c, t in types.items()])
    table = pa.table({c: [r[c] for r in rows] for c in types}, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(_with_pandas_types(table), tmp)
    tmp.replace(path)


def _with_pandas_types(table: Any) -> Any:
    """``table`` with pandas metadata that names the nullable ``Int64`` / ``boolean`` dtypes
    for integer and boolean columns with empty cells, so a plain ``pd.read_parquet`` keeps
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
