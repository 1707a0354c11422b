"""docs/outputs.md: generated from the models, current, covering every key a run writes, and
its pandas recipe runs on a real run folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanrag.evaluation.report import outputs_doc
from scanrag.evaluation.report.export import export_runs
from scanrag.rundir import RunDir


def test_the_document_is_current() -> None:
    assert outputs_doc.DOC.read_text(encoding="utf-8") == outputs_doc.render(), (
        "docs/outputs.md is stale: run python -m scanrag.evaluation.report.outputs_doc"
    )
    assert outputs_doc.main(["--check"]) == 0


def test_check_fails_on_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "outputs.md"
    stale.write_text(outputs_doc.render().replace("| `item_status` |", "| `gone` |"))
    assert outputs_doc.main(["--check", "--out", str(stale)]) == 1
    assert "stale" in capsys.readouterr().out
    assert outputs_doc.main(["--out", str(stale)]) == 0
    assert outputs_doc.main(["--check", "--out", str(stale)]) == 0


def test_every_model_field_is_documented() -> None:
    from scanrag.evaluation.schemas import MetricSummary, ScoreRow
    from scanrag.schemas import ModelCall, Trajectory

    text = outputs_doc.render()
    for model in (Trajectory, ModelCall, ScoreRow, MetricSummary):
        section = text.split(f"### {model.__name__}\n", 1)[1].split("\n### ", 1)[0]
        fields = [*model.model_fields, *model.model_computed_fields]
        for name in fields:
            assert f"| `{name}` |" in section, (model.__name__, name)


def test_plain_files_list_every_key_a_run_writes(finished_run: Path) -> None:
    run = RunDir(finished_run)
    written = {
        "manifest.json": set(run.manifest()),
        "summary.json": set(run.summary()),
        "summary.json cells": {k for c in run.summary()["cells"].values() for k in c},
        "datasets.json": {k for d in run.datasets() for k in d},
    }
    for name, keys in written.items():
        missing = keys - set(outputs_doc.PLAIN_KEYS[name])
        assert not missing, f"{name}: document {sorted(missing)} in outputs_doc.PLAIN_KEYS"
    for name in (RunDir.TRAJECTORIES, RunDir.SCORES, RunDir.SUMMARY, RunDir.SAMPLES):
        assert f"| `{name}` |" in outputs_doc.render()


def test_the_pandas_recipe_runs(run_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pandas")
    export_runs([run_copy], n_resamples=0)
    text = outputs_doc.DOC.read_text(encoding="utf-8")
    code = re.search(r"## Pandas recipe\n\n```python\n(.*?)```", text, re.S)
    assert code is not None
    source = code.group(1).replace(
        'run = "runs/20250101-120000_quickstart"', f"run = {json.dumps(str(run_copy))}"
    )
    assert str(run_copy) in source
    exec(compile(source, "outputs.md recipe", "exec"), {})
    out = capsys.readouterr().out
    assert "topk_rag+bm25" in out and "accuracy" in out and "model.reader" in out
