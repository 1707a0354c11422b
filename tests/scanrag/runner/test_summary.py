"""The printed result table: fits 140 columns, names every metric in its header, shows errors
and judge exclusions beside the metrics."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from scanrag.runner.summary_table import TABLE_WIDTH, judge_exclusions, render_table

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


def test_the_table_fits_and_names_every_metric_in_its_header() -> None:
    lines = printed(summary())
    assert max(len(line.rstrip()) for line in lines) <= TABLE_WIDTH
    text = "\n".join(lines)
    assert "…" not in text  # nothing truncated
    assert "m1" not in text  # no aliases to look up
    header = lines[1 : lines.index(next(line for line in lines if line.startswith("──")))]
    words = " ".join(" ".join(header).split())
    for metric in METRICS:  # every part of every name, whole (one word a line)
        for part in metric.replace("_", "_ ").replace(".", ". ").split():
            assert part in words.split(), (part, words)
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


def test_a_scorer_that_could_not_aggregate_is_named_under_the_table() -> None:
    data = summary()
    groups = data["scoring"]["groups"]
    groups["oracle_pages"] = {"aggregate_errors": {"region": "ValueError: bad boxes"}}
    text = "\n".join(printed(data))
    assert "oracle_pages: region not aggregated (ValueError: bad boxes)" in text
