"""``scanrag score RUN_DIR``: rows appended once, summary written, safe to run again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.evaluation.cli.score import score_dir
from scanrag.llm import ChatRequest, ScriptedModel, clear_scripted, register_scripted


def responder(request: ChatRequest) -> str:
    text = request.messages[-1].text
    if request.stage == "judge.region":
        n = len(re.findall(r"^GOLD\[\d+\]:", text, re.MULTILINE))
        return json.dumps(
            {"items": [{"id": f"GOLD[{i + 1}]", "label": "covered"} for i in range(n)]}
        )
    if request.stage == "judge.fact":
        return json.dumps({"items": [{"id": "f1", "label": "consistent"}]})
    return '{"consistent": true}'


@pytest.fixture
def scripted_judge():
    model = register_scripted("e1-cli", ScriptedModel(responder=responder))
    yield model
    clear_scripted()


def test_score_command_writes_rows_and_summary(run_dir: Path, scripted_judge, capsys) -> None:
    scorers = "pages,region,region_geometry,fact,answer,answer_rules,completeness"
    argv = ["score", str(run_dir), "--judge-model", "scripted/e1-cli", "--resamples", "50"]
    argv += ["--scorers", scorers]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "pages.f1" in out and "18 new score rows" in out, out
    lines = (run_dir / "scores.jsonl").read_text().splitlines()
    assert len(lines) == 18  # 3 trajectories x 6 item scorers (completeness adds no rows)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["name"] == "exp" and "cells" in summary  # the run's own keys are kept
    metrics = summary["metrics"]["topk-bm25"]
    assert metrics["pages.f1"] == 1.0 and metrics["region.strict_f1"] == 1.0
    assert metrics["fact.consistency"] == 1.0 and metrics["answer.accuracy"] == 1.0
    assert summary["scoring"]["groups"]["topk-bm25"]["metrics"]["pages.f1"]["n"] == 3
    calls = len(scripted_judge.requests)
    assert calls == 6  # region and fact once per item; the answers equal the gold exactly

    assert main(argv) == 0  # second run: nothing to do
    assert "0 new score rows" in capsys.readouterr().out
    assert len(scripted_judge.requests) == calls
    assert len((run_dir / "scores.jsonl").read_text().splitlines()) == 18


def test_crash_leftovers_are_repaired_and_completed(run_dir: Path, scripted_judge) -> None:
    first = score_dir(run_dir, scorers=["pages", "answer"], llm=scripted_judge, n_resamples=0)
    assert first.new_rows == 6
    lines = (run_dir / "scores.jsonl").read_text().splitlines()
    kept = [ln for ln in lines if '"q2"' not in ln or '"answer"' not in ln]
    (run_dir / "scores.jsonl").write_text("\n".join(kept) + "\n" + lines[-1][:40])  # torn tail
    again = score_dir(run_dir, scorers=["pages", "answer"], llm=scripted_judge, n_resamples=0)
    assert again.new_rows == 1 and again.total_rows == 6


def test_default_local_judge_skips_regions_but_keeps_geometry(run_dir: Path) -> None:
    result = score_dir(run_dir, scorers=["region", "region_geometry"], n_resamples=0)
    group = result.summary.groups["topk-bm25"]
    assert group.status["region"] == {"skipped": 3}
    assert group.metrics["region_geometry.iou"].value == pytest.approx(1.0)
    rows = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert "vision" in next(r for r in rows if r["scorer"] == "region")["reason"]


def test_errors_are_reported(tmp_path: Path, capsys) -> None:
    assert main(["score", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "run").mkdir()
    assert main(["score", str(tmp_path / "run")]) == 2
    assert "trajectories.jsonl" in capsys.readouterr().err


def test_unknown_scorer_is_a_usage_error(run_dir: Path, capsys) -> None:
    assert main(["score", str(run_dir), "--scorers", "pagez"]) == 2
    assert "unknown scorer 'pagez'" in capsys.readouterr().err
