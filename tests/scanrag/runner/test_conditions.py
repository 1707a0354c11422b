"""What each cell measured under, end to end with fake components: degraded items (and the
gold pages they lost) in summary.json and on stderr, ``on_degraded: fail``, the label with its
caps, replays named with their run, the decider, retrieval that ``--limit`` does not change,
and progress lines without a terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.rundir import JsonlLog
from scanrag.runner import start_run
from scanrag.runner.conditions import decider_entry, deciders
from scanrag.runner.summary_table import condition_notes

FULL_DOC = {"name": "full_doc", "params": {"max_tokens": 32}}


def _start(root: Path, lines: list[str] | None = None, llm: Any = rf.MODEL, **sections: Any):
    config = config_from_dict(rf.make_config(root, **sections))
    log = lines.append if lines is not None else None
    return start_run(config, llm=llm, log=log)


def _rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    return {r["sample_id"]: r for r in JsonlLog(run_dir / "trajectories.jsonl").rows()}


def test_capped_full_doc_items_are_degraded_and_counted(tmp_path: Path) -> None:
    lines: list[str] = []
    runner = {"page_caps": {"max_pages": 2}}
    result = _start(tmp_path, lines, strategies=[FULL_DOC], runner=runner)
    rows = _rows(result.run_dir)
    assert all(r["status"] == "ok" and r["degraded"] for r in rows.values())
    cap = rows["q0-1"]["reductions"][0]
    assert (cap["kind"], cap["pages_dropped"], cap["cause"]) == (
        "page_cap",
        [3, 4],
        "runner.page_caps.max_pages=2",
    )
    lost = {sid for sid, r in rows.items() if r["gold_pages_dropped"]}
    assert lost == {f"q{d}-{p}" for d in range(3) for p in (3, 4)}
    cell = result.summary["cells"]["full_doc"]
    assert cell["label"] == "full_doc ≤2p" and cell["caps"] == {"pages": 2}
    assert (cell["degraded"], cell["gold_pages_dropped"], cell["by_kind"]) == (
        12,
        6,
        {"page_cap": 12},
    )
    assert "degraded: 12 of 12 item(s) saw less input than their strategy promises" in lines[-3]
    assert lines[-2].startswith("  full_doc: 12 of 12 (12 page_cap); 6 lost gold pages")
    assert result.exit_code == 0


def test_on_degraded_fail_makes_them_errors(tmp_path: Path) -> None:
    runner = {"page_caps": {"max_pages": 2}, "on_degraded": "fail"}
    result = _start(tmp_path, strategies=[FULL_DOC], runner=runner)
    rows = _rows(result.run_dir)
    assert {r["status"] for r in rows.values()} == {"degraded"}
    assert all(r["calls"] == [] for r in rows.values())
    assert result.summary["cells"]["full_doc"]["status"] == {"degraded": 12}
    assert result.exit_code == 5


def test_an_uncapped_cell_is_not_degraded(tmp_path: Path) -> None:
    result = _start(tmp_path, strategies=[FULL_DOC])
    cell = result.summary["cells"]["full_doc"]
    assert cell["label"] == "full_doc ≤60p" and cell["degraded"] == 0  # 4 pages under 60


def test_replays_name_the_run_they_came_from(tmp_path: Path) -> None:
    llm = {"cache": True, "cache_scripted": True}
    first = _start(tmp_path, llm=None, strategies=[FULL_DOC], runner={"llm": llm})
    assert first.summary["cells"]["full_doc"]["replays"] == {"calls": 0, "items": 0, "from": {}}
    again = _start(tmp_path, llm=None, strategies=[FULL_DOC], runner={"llm": llm})
    replays = again.summary["cells"]["full_doc"]["replays"]
    assert replays == {"calls": 12, "items": 12, "from": {first.run_dir.name: 12}}
    row = next(iter(_rows(again.run_dir).values()))
    assert row["usage"]["reader"]["cached_calls"] == 1
    assert row["calls"][0]["cached_from"] == first.run_dir.name


def test_replay_notes_name_this_run_apart_from_earlier_ones() -> None:
    summary = {
        "run_dir": "/runs/20261126-1200_demo",
        "cells": {
            "a": {"replays": {"calls": 2, "items": 1, "from": {"20261126-1200_demo": 2}}},
            "b": {"replays": {"calls": 1, "items": 1, "from": {"20261125-0900_demo": 1}}},
        },
    }
    assert condition_notes(summary) == [
        "a: 2 call(s) replayed from the cache (this run (20261126-1200_demo))",
        "b: 1 call(s) replayed from the cache (20261125-0900_demo)",
    ]


def test_limit_does_not_change_retrieval(tmp_path: Path) -> None:
    sections: dict[str, Any] = {
        "retrievers": {"bm25": {}},
        "strategies": [{"name": "topk_rag", "retriever": "bm25", "params": {"k": 2}}],
    }
    full = _start(tmp_path, **sections)
    config = config_from_dict(rf.make_config(tmp_path, **sections))
    config.datasets[0].limit = 1
    one = start_run(config, llm=rf.MODEL, log=None)

    def hits(run_dir: Path) -> list[Any]:
        row = _rows(run_dir)["q0-1"]
        return next(s["data"]["hits"] for s in row["steps"] if s["kind"] == "retrieve")

    assert hits(one.run_dir) == hits(full.run_dir)  # pages, ranks and scores
    manifests = [
        json.loads((r.run_dir / "manifest.json").read_text())["retrievers"]["bm25"]["manifest"]
        for r in (full, one)
    ]
    for manifest in manifests:  # two builds: the same index, made at different seconds
        manifest.pop("created_at")
    assert manifests[0] == manifests[1]


def test_progress_lines_without_a_terminal(tmp_path: Path) -> None:
    lines: list[str] = []
    strategies = [{"name": "fake_reader", "label": "slow", "params": {"k": 1, "delay_s": 0.05}}]
    runner = {"progress_interval_s": 0.05, "concurrency": 1}
    _start(tmp_path, lines, strategies=strategies, runner=runner)
    progress = [line for line in lines if line.startswith("progress run")]
    assert progress, lines
    assert "/12 (" in progress[0] and "/s  ETA " in progress[0] and "errors 0" in progress[0]


def test_deciders_count_items_and_disagreements() -> None:
    def row(sample: str, scorer: str, correct: float | None, status: str = "ok") -> dict:
        return {
            "run_key": "c",
            "sample_id": sample,
            "scorer": scorer,
            "status": status,
            "metrics": {"correct": correct},
        }

    trajectories = [{"run_key": "c", "sample_id": s} for s in ("a", "b", "d", "e")]
    scores = [
        row("a", "answer", 1.0),
        row("a", "answer_rules", 0.0),  # the judge says yes, the rules no
        row("b", "answer", 1.0),
        row("b", "answer_rules", 1.0),
        row("d", "answer", None, "judge_error"),
        row("d", "answer_rules", 0.0),
    ]
    auto = deciders(scores, trajectories, "auto")["c"]
    assert auto["decided_by"] == {"answer": 2, "answer_rules": 1, "none": 1}
    assert auto["judge_vs_rules"] == {"items": 2, "disagree": 1, "rate": 0.5}
    rules = deciders(scores, trajectories, "answer_rules")["c"]
    assert rules["decided_by"] == {"answer_rules": 3, "none": 1}


def test_errored_items_are_decided_by_no_scorer() -> None:
    """A truncated, model_error or on_degraded-fail item is credited to no scorer: the answer
    scorer's "wrong" for its empty answer was decided without any judge call."""
    trajectories = [
        {"run_key": "c", "sample_id": "a", "status": "ok"},
        {"run_key": "c", "sample_id": "t", "status": "truncated"},
        {"run_key": "c", "sample_id": "m", "status": "model_error"},
        {"run_key": "c", "sample_id": "g", "status": "degraded"},
    ]
    scores = [
        {
            "run_key": "c",
            "sample_id": s,
            "scorer": "answer",
            "status": "ok",
            "item_status": st,
            "metrics": {"correct": 1.0 if s == "a" else 0.0},
        }
        for s, st in (("a", "ok"), ("t", "truncated"), ("m", "model_error"), ("g", "degraded"))
    ]
    cell = deciders(scores, trajectories, "auto")["c"]
    assert cell["decided_by"] == {"answer": 1}
    assert cell["errors"] == {"degraded": 1, "model_error": 1, "truncated": 1}
    # read from the rows alone (no trajectory line), an errored item is still not credited
    alone = deciders(scores, [], "auto")["c"]
    assert alone["decided_by"] == {"answer": 1} and sum(alone["errors"].values()) == 3


def test_no_judge_is_named_for_a_run_scored_by_rules_only() -> None:
    manifest = {"models": {"judges": {"default": "local/qwen2.5-0.5b"}}}
    rules_only = [{"run_key": "c", "sample_id": "a", "scorer": "answer_rules", "status": "ok"}]
    entry = decider_entry("auto", rules_only, manifest)
    assert entry["answer_judge"] is None
    summary = {"decider": entry, "cells": {}}
    assert condition_notes(summary) == [
        "correct/wrong decided by: auto (answer, else answer_rules)"
    ]
    judged = [*rules_only, {"run_key": "c", "sample_id": "a", "scorer": "answer", "judges": []}]
    assert decider_entry("auto", judged, manifest)["answer_judge"] == "local/qwen2.5-0.5b"
