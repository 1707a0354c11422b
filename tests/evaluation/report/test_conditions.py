"""The report names what each cell measured under: caps in labels, ◐ degraded items, the
decider of ✓/✗ with the judge-vs-rules disagreement, replays; and the exports carry them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import yaml

from scanrag.config import config_from_dict
from scanrag.evaluation.report.conditions import cell_conditions, decisions
from scanrag.evaluation.report.data import load_run
from scanrag.evaluation.report.export import long_csv
from scanrag.evaluation.report.table import build_table, to_csv
from scanrag.rundir import RunDir


def test_summary_names_the_decider_and_counts_degraded_items(finished_run: Path) -> None:
    summary = json.loads((finished_run / "summary.json").read_text())
    decider = summary["decider"]
    assert decider["describe"] == "auto (answer, else answer_rules)"
    assert decider["order"] == ["answer", "answer_rules"] and decider["answer_judge"]
    assert summary["headline_scorers"]["answer.accuracy"] == "answer"
    full = summary["cells"]["full_doc"]
    assert full["label"] == "full_doc ≤6p" and full["degraded"] == full["items"] == 6
    versus = full["decider"]["judge_vs_rules"]
    assert versus["items"] == 6 and versus["rate"] == versus["disagree"] / 6
    assert summary["cells"]["oracle_pages"]["degraded"] == 0


def test_index_shows_caps_badges_and_the_decider(report_dir: Path) -> None:
    html = (report_dir / "index.html").read_text()
    assert "full_doc ≤6p" in html and "◐" in html and "degraded" in html
    assert "✓/✗ decided by" in html and "auto (answer, else answer_rules)" in html
    assert "judge≠rules" in html and 'data-degraded="1"' in html
    assert '<option value="degraded">' in html
    viewer = (report_dir / "q" / "q0001.html").read_text()
    assert "input reductions" in viewer and "page_cap (runner.page_caps.max_pages=6)" in viewer
    assert "✓/✗ decided by" in viewer


def test_the_decider_setting_decides(run_copy: Path) -> None:
    config_path = run_copy / "config.resolved.yaml"
    config = yaml.safe_load(config_path.read_text())
    group = load_run(run_copy).groups[1]
    judged = cell_conditions(group)
    assert set(judged.decided_by) <= {"answer", "answer_rules", "none"}
    config["report"] = {"decider": "answer_rules"}  # as run --resume --set report.decider=...
    RunDir(run_copy).write_config(config_from_dict(config, source=str(config_path)))
    group = load_run(run_copy).groups[1]
    rules = cell_conditions(group)
    assert rules.decider == "answer_rules" and set(rules.decided_by) == {"answer_rules"}
    expected = {sid: row.metrics["correct"] >= 1 for sid, row in group.rows["answer_rules"].items()}
    assert {sid: d.correct for sid, d in decisions(group).items()} == expected


def test_exports_carry_the_conditions(finished_run: Path) -> None:
    groups = load_run(finished_run).groups
    rows = list(csv.DictReader(io.StringIO(long_csv(groups))))
    full = [r for r in rows if r["run_key"] == "full_doc"]
    assert {r["degraded"] for r in full} == {"1"}
    assert {r["reductions"] for r in full} == {
        '[{"kind": "page_cap", "pages_dropped": 4, "chars_dropped": 0}]'
    }
    assert {r["pages_dropped"] for r in full} == {"4"}
    assert {r["decided_by"] for r in full} <= {"answer", "answer_rules"}
    assert {r["replayed_calls"] for r in full} == {"0"}
    wide = list(csv.DictReader(io.StringIO(to_csv(build_table(groups, None, n_resamples=0)))))
    by_label = {r["label"]: r for r in wide}
    assert (
        by_label["full_doc"]["n_degraded"] == "6" and by_label["oracle_pages"]["n_degraded"] == "0"
    )
    assert by_label["full_doc"]["judge_rules_items"] == "6"
