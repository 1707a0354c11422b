"""The comparison table and the paired significance test against the baseline."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from scanrag.evaluation.report.data import Group, RunData, load_run
from scanrag.evaluation.report.measures import group_cost
from scanrag.evaluation.report.significance import Comparison, compare
from scanrag.evaluation.report.table import build_table, to_csv, to_markdown
from scanrag.evaluation.schemas import ScoreRow
from scanrag.schemas import Sample


def _group(label: str, correct: list[int], run: RunData) -> Group:
    rows = {
        f"s{i}": ScoreRow(
            sample_id=f"s{i}",
            strategy=label,
            scorer="answer_rules",
            metrics={"correct": float(c)},
            details={"answerable": True},
        )
        for i, c in enumerate(correct)
    }
    return Group(label=label, key=label, strategy=label, run=run, rows={"answer_rules": rows})


@pytest.fixture
def run() -> RunData:
    samples = {
        f"s{i}": Sample(id=f"s{i}", doc_ids=["a.pdf"], question="q?", answer="1") for i in range(40)
    }
    return RunData(Path("."), "r", {}, {}, {}, samples, [])


def test_identical_systems_are_not_significant(run: RunData) -> None:
    values = [1, 0] * 20
    result = compare(_group("a", values, run), _group("b", values, run), ["answer_rules.accuracy"])
    test = result["answer_rules.accuracy"]
    assert test.diff == 0.0 and test.p_value == 1.0 and test.marker == ""


def test_a_clear_difference_is_marked(run: RunData) -> None:
    better = _group("a", [1] * 36 + [0] * 4, run)
    worse = _group("b", [0] * 30 + [1] * 10, run)
    test = compare(better, worse, ["answer_rules.accuracy", "answer_rules.accuracy_answerable"])
    assert test["answer_rules.accuracy"].diff == pytest.approx(0.9 - 0.25)
    assert test["answer_rules.accuracy"].p_value < 0.01
    assert test["answer_rules.accuracy"].marker in {"**", "***"}
    assert test["answer_rules.accuracy"].low > 0
    assert test["answer_rules.accuracy_answerable"].diff == pytest.approx(0.65)


def test_only_shared_items_are_compared(run: RunData) -> None:
    a = _group("a", [1] * 10, run)
    b = _group("b", [0] * 4, run)
    assert compare(a, b, ["answer_rules.accuracy"])["answer_rules.accuracy"].n == 4
    assert compare(a, b, ["pages.recall"]) == {}  # no rows of that scorer


@pytest.mark.parametrize(
    ("p", "marker"), [(0.0005, "***"), (0.005, "**"), (0.03, "*"), (0.2, ""), (None, "")]
)
def test_markers(p: float | None, marker: str) -> None:
    assert Comparison(p_value=p, n=40).marker == marker


def test_no_marker_on_too_few_items(run: RunData) -> None:
    test = compare(_group("a", [1, 1], run), _group("b", [0, 0], run), ["answer_rules.accuracy"])
    result = test["answer_rules.accuracy"]
    assert result.n == 2 and result.p_value is not None and result.marker == ""


def test_table_of_the_finished_run(finished_run: Path) -> None:
    groups = load_run(finished_run).groups
    baseline = groups[0]  # full_doc
    table = build_table(groups, baseline, n_resamples=300)
    assert table.baseline == "full_doc"
    assert "answer.accuracy" in table.metrics and "pages.recall" in table.metrics
    assert not any(m.endswith("accuracy_unanswerable") for m in table.metrics)  # all None
    rows = {r.label: r for r in table.rows}
    assert rows["full_doc"].is_baseline and rows["full_doc"].metrics["answer.accuracy"].marker == ""
    oracle = rows["oracle_pages"].metrics["answer.accuracy"]
    assert oracle.value == 1.0 and oracle.low == 1.0
    assert oracle.vs_baseline is not None and oracle.vs_baseline.diff == pytest.approx(0.5)
    cost = rows["topk_rag+bm25"].cost
    assert cost.items == 6 and cost.ok == 6
    assert cost.usd_per_q is not None and cost.usd_per_q > 0 and cost.calls_per_q == 1.0
    trajectories = [
        json.loads(line) for line in (finished_run / "trajectories.jsonl").read_text().splitlines()
    ]
    tokens = sum(
        u["prompt_tokens"] + u["completion_tokens"]
        for t in trajectories
        if t["run_key"] == "topk_rag+bm25"
        for u in t["usage"].values()
    )
    assert cost.tokens_per_q == pytest.approx(tokens / 6)
    assert group_cost(groups[1]).items == 6


def test_markdown_and_csv(finished_run: Path) -> None:
    groups = load_run(finished_run).groups
    table = build_table(groups, groups[0], n_resamples=200)
    markdown = to_markdown(table)
    lines = markdown.splitlines()
    assert lines[0].startswith(
        "| grid cell | outcomes | answer.accuracy_answerable [paper] | answer.accuracy"
    )
    # the label states the cap its items were read under; every item lost pages to it
    assert lines[2].startswith("| full_doc ≤6p (baseline) | 3 ✓ 3 ✗ 0 ∅ 0 ⚠; 6 ◐ degraded | 0.5")
    assert "baseline **full_doc**" in markdown and "200 resamples" in markdown
    parsed = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert [r["label"] for r in parsed] == ["full_doc", "oracle_pages", "topk_rag+bm25"]
    assert [r["n_degraded"] for r in parsed] == ["6", "0", "0"]
    assert parsed[0]["cell_label"] == "full_doc ≤6p" and parsed[0]["caps"] == '{"pages":6}'
    assert parsed[0]["decider"] == "auto (answer, else answer_rules)"
    assert parsed[0]["baseline"] == "1" and parsed[0]["answer.accuracy.p_value"] == ""
    assert float(parsed[1]["answer.accuracy"]) == 1.0
    assert float(parsed[1]["answer.accuracy.diff"]) == pytest.approx(0.5)
    assert float(parsed[2]["items"]) == 6
