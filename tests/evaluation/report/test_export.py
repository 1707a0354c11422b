"""Tidy exports: the long table (item × cell × metric), the wide comparison, CSV and Parquet,
and ``scanrag export``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.evaluation.report import export
from scanrag.evaluation.report.data import load_runs
from scanrag.rundir import RunDir


def _long(run: Path) -> list[dict]:
    return export.long_records(load_runs([run])[0].groups)


def test_long_records_carry_cell_item_and_outcome(error_run: Path) -> None:
    records = _long(error_run)
    columns = export.long_columns(records)
    assert columns[:6] == ["run", "cell", "run_key", "dataset", "strategy", "retriever"]
    assert columns[-4:] == ["scorer", "row_status", "metric", "value"]
    for name in ("model.reader", "judge.default", "param.k", "outcome", "item_status"):
        assert name in columns
    failed = [r for r in records if r["sample_id"] == "synth-s3-d00-q01"]
    assert {r["outcome"] for r in failed} == {"error"}
    assert {r["item_status"] for r in failed} == {"model_error"}
    assert all(r["dataset"] == "synth" and r["doc_type"] for r in records)
    correct = {
        (r["cell"], r["sample_id"]): r["value"]
        for r in records
        if r["scorer"] == "answer_rules" and r["metric"] == "correct"
    }
    assert len(correct) == 18 and correct[("full_doc", "synth-s3-d00-q01")] == 0.0
    usage = [r for r in records if r["scorer"] == "trajectory" and r["metric"] == "usd"]
    assert len(usage) == 18 and all(r["value"] >= 0 for r in usage)
    topk = next(r for r in records if r["cell"] == "topk_rag+bm25")
    assert topk["retriever"] == "bm25" and topk["param.k"] == 1


def test_export_writes_csv_by_default_into_the_run(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(run_copy), "--resamples", "0"]) == 0
    folder = RunDir(run_copy).file(RunDir.EXPORTS)
    written = sorted(p.name for p in folder.iterdir())
    assert written == [
        "comparison.columns.json",
        "comparison.csv",
        "items_long.columns.json",
        "items_long.csv",
    ]
    assert f"wrote {folder / 'items_long.csv'}" in capsys.readouterr().out
    rows = list(csv.DictReader((folder / "comparison.csv").open()))
    assert [r["cell"] for r in rows] == ["full_doc", "oracle_pages", "topk_rag+bm25"]
    assert rows[2]["retriever_type"] == "bm25" and rows[2]["model.reader"]


def test_parquet_matches_csv(run_copy: Path, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "x"
    export.export_runs([run_copy], out, fmt="parquet", n_resamples=0)
    export.export_runs([run_copy], out, fmt="csv", n_resamples=0)
    for stem in (RunDir.EXPORT_LONG, RunDir.EXPORT_WIDE):
        parquet = pd.read_parquet(out / f"{stem}.parquet")
        text = pd.read_csv(out / f"{stem}.csv")
        assert list(parquet.columns) == list(text.columns)
        assert len(parquet) == len(text)
    long = pd.read_parquet(out / f"{RunDir.EXPORT_LONG}.parquet")
    assert long["value"].dtype == "float64" and long["answerable"].dtype == bool
    accuracy = long[(long.scorer == "answer_rules") & (long.metric == "correct")]
    assert accuracy.groupby("cell").value.mean()["oracle_pages"] == 1.0


def test_parquet_without_pyarrow_is_a_clear_error(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export, "parquet_available", lambda: False)
    with pytest.raises(ValueError, match="pyarrow"):
        export.export_runs([finished_run], tmp_path, fmt="parquet")


def test_export_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_cell_column_takes_one_type_mixed_ones_become_text() -> None:
    from scanrag.evaluation.report.export_types import infer_type

    assert infer_type([1, 2.5, None]) == "float"
    assert infer_type([1, "a", None]) == "str"
    assert infer_type([True, None]) == "bool" and infer_type([None]) == "str"
    assert infer_type([1, True]) == "str"  # a flag and a count are not one type


def test_cell_columns_read_model_entries_from_the_manifest(finished_run: Path) -> None:
    from scanrag.evaluation.report.cells import describe_cell

    run = load_runs([finished_run])[0]
    group = run.groups[0]
    reader = group.trajectories[next(iter(group.trajectories))].models["reader"]
    run.manifest["models"]["entries"] = {
        reader: {
            "model": "hosted_vllm/qwen",
            "endpoint": "gpu-box:8000/v1",
            "sampling": {"temperature": 0.2, "top_p": 0.9},
            "output_mode": "json_schema",
        }
    }
    cell = describe_cell(group)
    assert cell["model.reader"] == reader
    assert cell["model.reader.model"] == "hosted_vllm/qwen"
    assert cell["model.reader.endpoint"] == "gpu-box:8000/v1"
    assert cell["model.reader.sampling.temperature"] == 0.2
    assert cell["model.reader.output_mode"] == "json_schema"


def test_columns_pandas_can_group_and_type(run_copy: Path, tmp_path: Path) -> None:
    """``retriever`` is ``none`` (not empty) without a retriever, so ``groupby`` keeps those
    cells; ``n_evidence_pages`` is a count; integer parameters read back as integers; the
    judge's entry settings (its endpoint) have columns like the reader's."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "x"
    run = load_runs([run_copy])[0]
    judge = run.manifest["models"]["judges"]["default"]
    manifest = RunDir(run_copy).file(RunDir.MANIFEST)
    data = json.loads(manifest.read_text())
    data["models"]["entries"][judge] = {"model": judge, "endpoint": "127.0.0.1:8081/v1"}
    manifest.write_text(json.dumps(data))
    export.export_runs([run_copy], out, fmt="parquet", n_resamples=0)
    export.export_runs([run_copy], out, fmt="csv", n_resamples=0)
    for long in (
        pd.read_parquet(out / "items_long.parquet"),
        pd.read_csv(out / "items_long.csv", dtype_backend="numpy_nullable"),
    ):
        sizes = long.groupby(["strategy", "retriever"]).size()
        assert set(sizes.index) == {
            ("full_doc", "none"),
            ("oracle_pages", "none"),
            ("topk_rag", "bm25"),
        }
        assert "evidence_pages" not in long.columns
        assert set(long["n_evidence_pages"].dropna()) <= {1, 2, 3}
        assert str(long["param.k"].dtype) == "Int64"
        assert long["param.k"].dropna().unique().tolist() == [1]
        assert set(long["judge.default.endpoint"]) == {"127.0.0.1:8081/v1"}
    wide = pd.read_parquet(out / "comparison.parquet")
    assert list(wide["retriever"]) == ["none", "none", "bm25"]
    assert str(wide["param.k"].dtype) == "Int64"
