"""The printed result table: fits 100 columns, names every metric, shows errors and judge
exclusions beside the metrics."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from scanrag.runner.summary import TABLE_WIDTH, judge_exclusions, render_table

CELLS = ["full_doc", "topk_rag+bm25", "topk_rag+hybrid", "agentic_rag+hybrid", "oracle_pages"]
METRICS = [
    "pages.precision",
    "pages.recall",
    "pages.f1",
    "answer_rules.accuracy",
    "region_geometry.iou",
    "fact.consistency",
    "region.strict_f1",
    "answer.accuracy",
]


def summary() -> dict[str, Any]:
    status = {key: {"ok": 2} for key in CELLS}
    status["agentic_rag+hybrid"] = {"ok": 1, "model_error": 1}
    return {
        "name": "quickstart",
        "counts": {"trajectories": 10},
        "headline": {key: {m: 0.123 for m in METRICS} for key in CELLS},
        "cells": {
            key: {"items": 2, "status": status[key], "seconds_per_item": 63.04, "usd_per_item": 0.0}
            for key in CELLS
        },
        "scoring": {"groups": {"full_doc": {"status": {"answer": {"ok": 1, "judge_error": 1}}}}},
    }


def printed(data: dict[str, Any]) -> list[str]:
    console = Console(width=TABLE_WIDTH, record=True)
    console.print(render_table(data))
    return console.export_text().splitlines()


def test_the_table_fits_100_columns_and_spells_out_every_metric() -> None:
    lines = printed(summary())
    assert max(len(line.rstrip()) for line in lines) <= TABLE_WIDTH
    text = "\n".join(lines)
    assert "…" not in text  # nothing truncated
    for i, metric in enumerate(METRICS, start=1):
        assert f"m{i}={metric}" in text
    row = next(line for line in lines if line.startswith("agentic_rag+hybrid"))
    assert row.split()[1:4] == ["1", "1", "0"]  # ok, errors, judge exclusions
    assert "agentic_rag+hybrid: 1 model_error" in text
    assert "full_doc: 1 answer judged rows excluded" in text


def test_judge_exclusions_count_failed_rows_only() -> None:
    data = {
        "scoring": {
            "groups": {
                "a": {
                    "status": {
                        "fact": {
                            "ok": 3,
                            "partial": 1,
                            "skipped": 2,
                            "unparsed": 1,
                            "judge_error": 2,
                        }
                    }
                }
            }
        }
    }
    assert judge_exclusions(data) == {"a": {"fact": 3}}
