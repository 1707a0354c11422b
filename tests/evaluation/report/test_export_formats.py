"""One documented type per export column in CSV, Parquet and JSON lines: each format read
back gives the same frame, lists stay lists where the format has them, true zeros are 0 and
numeric columns are numeric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.evaluation.report import export
from scanrag.evaluation.report.export_types import (
    LONG_COLUMNS,
    PANDAS_DTYPES,
    WIDE_COLUMNS,
    read_export,
    types_path,
)
from scanrag.rundir import RunDir

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
FORMATS = ("csv", "parquet", "jsonl")


@pytest.fixture
def exported(run_copy: Path, tmp_path: Path) -> Path:
    """All three formats of a run where one cell is decided by the rules alone (its answer
    judge rows removed), so the other cells' ``decided_by.answer_rules`` is a true 0."""
    scores = run_copy / "scores.jsonl"
    rows = [json.loads(line) for line in scores.read_text(encoding="utf-8").splitlines()]
    kept = [r for r in rows if not (r["run_key"] == "oracle_pages" and r["scorer"] == "answer")]
    scores.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    (run_copy / "scores.idx").unlink(missing_ok=True)
    out = tmp_path / "exports"
    for fmt in FORMATS:
        export.export_runs([run_copy], out, fmt=fmt, n_resamples=0)
    return out


@pytest.mark.parametrize("stem", [RunDir.EXPORT_LONG, RunDir.EXPORT_WIDE])
def test_every_format_reads_back_as_the_same_frame(exported: Path, stem: str) -> None:
    frames = {fmt: read_export(exported / f"{stem}.{fmt}") for fmt in FORMATS}
    types = json.loads(types_path(exported / f"{stem}.csv").read_text())
    for fmt, frame in frames.items():
        assert list(frame.columns) == list(types), fmt
        assert {c: str(t) for c, t in frame.dtypes.items()} == {
            c: PANDAS_DTYPES[t] for c, t in types.items()
        }, fmt
    pd.testing.assert_frame_equal(frames["parquet"], frames["csv"])
    pd.testing.assert_frame_equal(frames["jsonl"], frames["csv"])


def test_lists_stay_lists_and_reductions_say_what_was_dropped(exported: Path) -> None:
    long = read_export(exported / "items_long.parquet")
    full = long[(long.run_key == "full_doc") & (long.scorer == "trajectory")]
    assert full.degraded.eq(1).all() and full.pages_dropped.eq(4).all()
    assert all(r == [{"kind": "page_cap", "pages_dropped": 4, "chars_dropped": 0}]
               for r in full.reductions)  # fmt: skip
    dropped = [p for p in full.gold_pages_dropped if p]
    assert dropped and all(isinstance(n, int) and n > 6 for p in dropped for n in p)
    oracle = long[long.run_key == "oracle_pages"]
    assert all(p == [] for p in oracle.gold_pages_dropped)  # nothing dropped: an empty list
    sources = long.evidence_sources.dropna()
    assert len(sources) and all(isinstance(s, list) for s in sources)
    plain = pd.read_parquet(exported / "items_long.parquet")  # without the helper
    assert list(plain.gold_pages_dropped.dropna().iloc[0]) == full.gold_pages_dropped.iloc[0]
    lines = [json.loads(x) for x in (exported / "items_long.jsonl").read_text().splitlines()]
    assert isinstance(lines[0]["gold_pages_dropped"], list)


def test_true_zeros_are_zero_and_numbers_are_numeric(exported: Path) -> None:
    wide = read_export(exported / "comparison.csv")
    by_cell = wide.set_index("run_key")
    assert by_cell.loc["oracle_pages", "decided_by.answer_rules"] == 6
    assert by_cell.loc["full_doc", "decided_by.answer_rules"] == 0  # not empty
    diff = [c for c in wide.columns if c.endswith(".diff")]
    assert diff and all(str(wide[c].dtype) == "Float64" for c in diff)
    plain = pd.read_parquet(exported / "comparison.parquet")  # all empty without tests
    assert all(plain[c].dtype == "float64" for c in diff)
    assert str(plain["decided_by.answer_rules"].dtype) == "int64"


def test_every_column_written_is_documented(exported: Path) -> None:
    """docs/outputs.md lists every column with its type, and every column a table holds is
    one of them (a column of a documented family: ``param.k``, ``answer.accuracy.low``)."""
    from scanrag.evaluation.report.export_types import CELL_COLUMNS
    from scanrag.evaluation.report.outputs_doc import render

    text = render().replace("\\|", "|")
    for stem, schema in ((RunDir.EXPORT_LONG, LONG_COLUMNS), (RunDir.EXPORT_WIDE, WIDE_COLUMNS)):
        for column in (*CELL_COLUMNS, *schema):
            assert f"| `{column.name}` | {column.type} |" in text
        written = json.loads(types_path(exported / f"{stem}.csv").read_text())
        entries = (*CELL_COLUMNS, *schema)
        for name in written:
            assert any(e.matches(name, metrics=written) for e in entries), name
