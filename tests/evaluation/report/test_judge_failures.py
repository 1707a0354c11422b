"""A cell whose judge failed on every item: the report says why it is empty, the exports
count the failures by cause, and both accuracy plots draw the cell with a "no judged items"
mark instead of dropping it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import report_fixtures

from scanrag.evaluation.cli.score import score_dir
from scanrag.evaluation.report import ReportOptions, build_report, plotkit, plots, plots_more
from scanrag.evaluation.report.data import find_group, load_run
from scanrag.evaluation.report.export import export_runs
from scanrag.evaluation.report.export_types import read_export
from scanrag.evaluation.report.measures import accuracy_metric

CELL = "oracle_pages"


def _fail_the_judge(run: Path, cell: str) -> int:
    """Append, for every answer row of ``cell``, the row a judge cut at its token cap would
    have written (a later row replaces the earlier one); returns how many."""
    path = run / "scores.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    failed = []
    for row in rows:
        if row["run_key"] == cell and row["scorer"] == "answer":
            record = {"role": "answer", "model": report_fixtures.JUDGE, "attempts": 2}
            record |= {"status": "judge_parse_error", "cause": "length"}
            record |= {"finish_reason": "length", "error": "attempt 2: no JSON value found"}
            failed.append(
                row
                | {"status": "judge_parse_error", "metrics": {"correct": None}, "judges": [record]}
            )
    with path.open("a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in failed)
    score_dir(run, llm=report_fixtures.judge(), n_resamples=0)  # rebuilds summary.json
    return len(failed)


@pytest.fixture
def failed_run(run_copy: Path) -> tuple[Path, int]:
    return run_copy, _fail_the_judge(run_copy, CELL)


def test_the_report_cell_says_why_it_is_empty(failed_run: tuple[Path, int], tmp_path: Path) -> None:
    run, n = failed_run
    summary = json.loads((run / "summary.json").read_text())
    counts = summary["scoring"]["groups"][CELL]["judge_errors"]["answer"]
    assert counts["failed"] == n and counts["causes"] == {"length": n} and counts["all_failed"]
    out = tmp_path / "report"
    build_report([run], out, options=ReportOptions(n_resamples=0))
    why = f"no judged items: {n} failed (length {n})"
    assert why in (out / "index.html").read_text()
    row = next(line for line in (out / "comparison.md").read_text().splitlines() if CELL in line)
    assert f"— ({why})" in row


def test_exports_count_failures_by_cause(failed_run: tuple[Path, int], tmp_path: Path) -> None:
    run, n = failed_run
    long_path, wide_path = export_runs([run], tmp_path / "x", fmt="csv", n_resamples=0)
    wide = read_export(wide_path).set_index("label")
    assert wide.loc[CELL, "judge_errors.answer.length"] == n
    assert wide.loc["full_doc", "judge_errors.answer.length"] == 0  # a true zero
    assert wide.loc[CELL, "answer.accuracy.excluded"] == n
    assert wide.loc[CELL, "answer.accuracy.empty"].startswith("no judged items")
    assert str(wide["judge_errors.answer.length"].dtype) == "Int64"
    long = read_export(long_path)
    causes = long[(long["run_key"] == CELL) & (long["scorer"] == "answer")]["row_cause"]
    assert set(causes) == {"length"}


def test_accuracy_plots_draw_the_empty_cell_with_a_mark(
    failed_run: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, _ = failed_run
    figures: dict[str, Any] = {}

    def keep(fig: Any, path: Path) -> Path:
        figures[path.stem] = fig
        return path

    monkeypatch.setattr(plots, "_save", keep)
    monkeypatch.setattr(plotkit, "save", keep)
    groups = load_run(run).groups
    metric = accuracy_metric(groups)
    assert metric == "answer.accuracy"
    assert find_group(groups, CELL).metric(metric).value is None
    plots.plot_oracle(groups, None, metric, tmp_path / "oracle.png")
    plots_more.plot_cost_latency(groups, metric, tmp_path / "cost.png")
    oracle = figures["oracle"].axes[0]
    assert CELL in [t.get_text() for t in oracle.get_xticklabels()]
    assert plotkit.NO_JUDGED in [t.get_text() for t in oracle.texts]
    cost = figures["cost"]
    labels = [t.get_text() for ax in cost.axes for t in ax.texts]
    assert f"{CELL} ({plotkit.NO_JUDGED})" in labels


def test_a_cell_whose_aggregate_raised_says_so_in_report_and_exports(
    run_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.evaluation.docscope.answer import AnswerScorer

    real = AnswerScorer.aggregate

    def aggregate(self, rows, group, stats):  # type: ignore[no-untyped-def]
        if group.name == CELL:
            raise ValueError("a scorer bug in this cell")
        return real(self, rows, group, stats)

    monkeypatch.setattr(AnswerScorer, "aggregate", aggregate)
    score_dir(run_copy, llm=report_fixtures.judge(), n_resamples=0)  # rebuilds summary.json
    monkeypatch.setattr(AnswerScorer, "aggregate", real)
    summary = json.loads((run_copy / "summary.json").read_text())
    group = summary["scoring"]["groups"][CELL]
    assert group["aggregate_errors"] == {"answer": "ValueError: a scorer bug in this cell"}
    _, wide_path = export_runs([run_copy], tmp_path / "x", fmt="csv", n_resamples=0)
    wide = read_export(wide_path).set_index("label")
    why = "not aggregated: ValueError: a scorer bug in this cell"
    assert wide.loc[CELL, "answer.accuracy.empty"] == why
    assert float(wide.loc["full_doc", "answer.accuracy"]) >= 0  # others keep theirs
