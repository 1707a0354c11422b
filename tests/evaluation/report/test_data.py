"""Reading run folders: groups, summaries, label collisions, the baseline lookup, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scanrag.evaluation.report.data import ReportError, all_groups, find_group, load_run, load_runs

KEYS = ["full_doc", "oracle_pages", "topk_rag+bm25"]


def test_a_run_becomes_one_group_per_grid_cell(finished_run: Path) -> None:
    run = load_run(finished_run)
    assert run.name == "report-test"
    assert [g.key for g in run.groups] == KEYS
    assert len(run.samples) == 6
    for group in run.groups:
        assert set(group.trajectories) == set(run.samples)
        assert {"pages", "answer_rules", "layout"} <= set(group.rows)
        assert group.summary is not None
    stored = json.loads((finished_run / "summary.json").read_text())["metrics"]
    oracle = find_group(run.groups, "oracle_pages")
    assert oracle.metric("answer.accuracy").value == stored["oracle_pages"]["answer.accuracy"]
    assert run.cache_dir is not None and run.pdf_dirs


def test_summary_is_recomputed_when_the_stored_one_is_missing(run_copy: Path) -> None:
    stored = load_run(run_copy)
    (run_copy / "summary.json").unlink()
    fresh = load_run(run_copy)
    for a, b in zip(stored.groups, fresh.groups, strict=True):
        assert a.metric("pages.recall").value == b.metric("pages.recall").value
        assert a.metric("answer.accuracy").low == b.metric("answer.accuracy").low


def test_two_runs_with_the_same_cells_get_prefixed_labels(
    finished_run: Path, tmp_path: Path
) -> None:
    twin = tmp_path / "second-run"
    shutil.copytree(finished_run, twin)
    runs = load_runs([finished_run, twin])
    labels = [g.label for g in all_groups(runs)]
    assert len(set(labels)) == 6
    assert f"{finished_run.name}/full_doc" in labels and "second-run/full_doc" in labels
    assert find_group(all_groups(runs), "oracle_pages").run is runs[0]  # run key, first match


def test_unknown_baseline_and_unreadable_runs(finished_run: Path, tmp_path: Path) -> None:
    run = load_run(finished_run)
    with pytest.raises(ReportError, match="known: full_doc, oracle_pages"):
        find_group(run.groups, "nope")
    with pytest.raises(ReportError, match="not a directory"):
        load_run(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReportError, match="is not a run folder"):
        load_run(empty)
    (empty / "manifest.json").write_text("{}")  # a run folder without its trajectories
    with pytest.raises(ReportError, match="trajectories.jsonl not found"):
        load_run(empty)


def test_the_default_baseline_is_the_configs_first_cell(finished_run: Path) -> None:
    """Not the alphabetically first: the config lists topk_rag, then full_doc, oracle_pages."""
    from scanrag.evaluation.report.data import default_baseline

    run = load_run(finished_run)
    assert run.groups[0].label == "full_doc"
    assert default_baseline(run.groups).label == "topk_rag+bm25"
    run.manifest["cells"] = []  # a folder whose manifest lists no cells: the first group
    assert default_baseline(run.groups).label == "full_doc"
