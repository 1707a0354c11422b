"""Generates ``docs/outputs.md``: every file of a run folder (and of a report) with its fields.

Files whose rows are pydantic models (trajectories, score rows, samples, the scoring summary,
the config, the report's comparison) get one table per model, generated from the models' JSON
schemas (serialization mode, so computed fields such as ``ScoreRow.outcome`` are listed). Files
written as plain mappings (``manifest.json``, ``summary.json``, ``datasets.json``) list their
keys from :data:`PLAIN_KEYS`; ``tests/evaluation/report/test_outputs_doc.py`` checks them
against a real run, and checks that the document is current. After changing a model::

    python -m scanrag.evaluation.report.outputs_doc          # rewrite docs/outputs.md
    python -m scanrag.evaluation.report.outputs_doc --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from scanrag.evaluation.report.schema_text import cell, keys_table, model_sections

DOC = Path(__file__).resolve().parents[2] / "docs" / "outputs.md"

# Keys of the files written as plain mappings: {file: {key: meaning}}.
PLAIN_KEYS: dict[str, dict[str, str]] = {
    "manifest.json": {
        "name": "the experiment's name",
        "run_dir": "the run folder",
        "created": "when the run started (ISO 8601)",
        "scanrag_version": "version of scanrag that wrote the run",
        "config_hash": "hash of config.resolved.yaml's data as recorded; every command that "
        "opens the run checks the file against it (config_hash_next: set while a resume "
        "rewrites the config)",
        "files": "sha256 of samples.jsonl and datasets.json as the run froze them, checked "
        "the same way",
        "environment": "Python, platform, git commit and library versions at the start",
        "environment_now": "the same, at the latest resume (only after a resume)",
        "models": "agent models, judge model per role (and, where recorded, model entries)",
        "render_dpi": "page rendering resolution",
        "page_caps": "the page caps in force",
        "on_degraded": "record | fail: what a degraded item becomes (runner.on_degraded)",
        "decider": "the scorer order that decides correct/wrong (report.decider)",
        "budget": "the run's budget",
        "executor": "local or ray",
        "seed": "the runner's seed",
        "cells": "one entry per grid cell: run_key, strategy, label, params (as configured), "
        "retriever, models (role → model), describe (resolved parameters, promise), "
        "prompt_hashes, caps (pages, chars_per_page, images, windows) and cap_label (≤60p)",
        "scoring": "scorers, their params (profiles, extraction call shapes) and every judge "
        "prompt file with its sha256 (a score session records its own under sessions)",
        "datasets": "per dataset: name, source, loader, pdf_dir, report, samples, input_errors, "
        "corpus_docs (documents the retrievers index)",
        "retrievers": "per retriever alias: type, params and the index's own manifest",
        "documents": "every ingested PDF: path, id, sha256, pages, ocr_pages",
        "sessions": "one entry per session (start, resume, score) with what it did; a score "
        "session records the scoring in effect (scoring) and its --set overrides (set)",
        "warnings": "warnings recorded across sessions (prompt changes on resume...)",
    },
    "summary.json": {
        "name": "the experiment's name",
        "run_dir": "the run folder",
        "complete": "every planned item ran and was scored",
        "stop_reason": "why the run stopped early (budget, disk full...), or null",
        "resume": "the command that finishes the run, or null",
        "counts": "samples, cells, planned, trajectories, scored, score_rows, score_pending",
        "datasets": "per dataset: name, samples, rows_dropped, input_errors",
        "cells": "per grid cell: the keys of summary.json cells below",
        "metrics": "per grid cell: every metric value (<scorer>.<metric>)",
        "headline": "per grid cell: the headline metric values",
        "headline_scorers": "headline metric → the scorer that produced it",
        "decider": "setting, order, describe and the judge models of the scorers that decide "
        "correct/wrong (report.decider); answer_judge: the configured answer judge, only when "
        "the answer judge scored the run",
        "scoring": "the evaluation summary (Summary below: intervals, n, errors, tables; per "
        "cell, judge_errors: each scorer's judged and failed items and failures by cause)",
        "usage": "run and score usage per stage, with totals",
        "sessions": "the manifest's sessions",
    },
    "summary.json cells": {
        "strategy": "the strategy",
        "retriever": "the retriever alias, or null",
        "models": "model per agent role",
        "items": "trajectories written",
        "status": "trajectories per status (ok or an error kind)",
        "seconds_per_item": "wall seconds per item, queueing included",
        "model_seconds_per_item": "seconds in model calls per item (null: calls not timed)",
        "wait_seconds_per_item": "seconds waiting around model calls per item (queue, cache)",
        "count_seconds_per_item": "seconds counting prompt tokens before the calls per item "
        "(a server's tokenize endpoint, a tokenizer; null: not timed)",
        "usage": "the cell's total usage",
        "usd_per_item": "USD per item",
        "label": "the cell's label with the caps its items were read under (full_doc ≤60p)",
        "caps": "the caps (pages, chars_per_page, images, windows)",
        "degraded": "items whose input was reduced below the strategy's promise",
        "gold_pages_dropped": "degraded items whose reductions never showed a gold page",
        "by_kind": "degraded items per reduction kind (page_cap, context, char_cap ...)",
        "replays": "calls replayed from the response cache, items with any, and the runs "
        "they came from (run folder → calls)",
        "decider": "decided_by (items per deciding scorer; none: no scorer decided an item "
        "that ran to the end), errors (items that ended in an error, by status: decided by "
        "no scorer) and judge_vs_rules (items both scored, disagreements, rate)",
    },
    "datasets.json": {
        "name": "the dataset's name in the config",
        "source": "the file (or generator) it was read from",
        "loader": "the loader used",
        "pdf_dir": "the folder of its PDFs",
        "allow_outside_pdf_dir": "whether documents may resolve outside pdf_dir (opt-in)",
        "report": "rows read, rows kept, dropped rows with reasons (and loader notes)",
        "sample_ids": "ids of the samples run",
        "input_errors": "sample id → why it cannot run (missing PDF...)",
        "corpus_docs": "every document the dataset names (retrievers index them all, whatever "
        "--limit, ids or tasks select)",
    },
}


def _run_files() -> list[tuple[str, str, list[type[BaseModel]]]]:
    """``(file, what it holds, models of its rows)`` for every file of a run folder."""
    from scanrag.config import ExperimentConfig
    from scanrag.evaluation.retrieval.evaluate import RetrievalEvaluation
    from scanrag.evaluation.schemas import ScoreRow, Summary
    from scanrag.rundir import RunDir
    from scanrag.schemas import Sample, Trajectory

    return [
        (RunDir.CONFIG, "the validated experiment config, secrets masked", [ExperimentConfig]),
        (RunDir.MANIFEST, "what produced the run (keys below)", []),
        (RunDir.SAMPLES, "every sample of every dataset, one JSON object a line", [Sample]),
        (RunDir.DATASETS, "a list, one entry per dataset (keys below)", []),
        (
            RunDir.TRAJECTORIES,
            "one row per (grid cell, sample), appended as items finish; a "
            "re-run item appends a new row and readers keep the last",
            [Trajectory],
        ),
        (
            RunDir.SCORES,
            "one row per (grid cell, sample, scorer); the last row per key wins",
            [ScoreRow],
        ),
        (
            RunDir.SUMMARY,
            "counts, status, usage and metrics, rebuilt from the rows on disk "
            "(keys below; its scoring entry is a Summary)",
            [Summary],
        ),
        (
            RunDir.RETRIEVAL,
            "optional: `scanrag retrieve eval --json` output, drawn in the report's recall@k plot",
            [RetrievalEvaluation],
        ),
        (f"{RunDir.INDEXES}/<alias>/", "saved retriever indexes, reused on resume", []),
        (f"{RunDir.CHECKPOINTS}/", "LangGraph checkpoints of strategies that keep them", []),
        (f"{RunDir.REPORT}/", "the HTML report (`scanrag report`; files below)", []),
        (f"{RunDir.EXPORTS}/", "`scanrag export` tables (columns below)", []),
    ]


# --------------------------------------------------------------------------- the document


def render() -> str:
    from scanrag.evaluation.report.table import ComparisonTable

    files = _run_files()
    lines = [
        "# Outputs: the files of a run folder and what every field means",
        "",
        "<!-- generated by `python -m scanrag.evaluation.report.outputs_doc`; "
        "do not edit by hand -->",
        "",
        "`scanrag run` writes `runs/<YYYYmmdd-HHMMSS>_<name>/`. Every file is JSON, JSON",
        "lines or YAML, written atomically and scrubbed of secrets; `scanrag report` and",
        "`scanrag export` only read it. The [pandas recipe](#pandas-recipe) at the end loads",
        "each of them.",
        "",
        "| file | holds | row schema |",
        "|---|---|---|",
    ]
    for name, what, models in files:
        anchors = ", ".join(f"[{m.__name__}](#{m.__name__.lower()})" for m in models) or "—"
        lines.append(f"| `{name}` | {cell(what)} | {anchors} |")
    lines += [
        "",
        "Item outcomes: a trajectory whose `status` is not `ok` ended in an error of that",
        "kind (`model_error`, `unparsed`, `truncated`, `input_error`, `retriever_error`,",
        "`budget_exhausted`, `internal_error`, or a newer one); it is still scored, its",
        "missing outputs counting as wrong in every metric over all items, and every score row",
        "repeats it as `item_status`. `ScoreRow.outcome` and the exports' `outcome` column say",
        "correct / wrong / unanswered / error; `MetricSummary.errors` how many of a metric's",
        "`n` items were errors.",
        "",
        "Failed score rows: a row whose judge failed (`judge_error`, `judge_parse_error`), whose",
        "page image could not be rendered (`render_failed`) or whose scorer raised",
        "(`scorer_error`, the exception's type and message as its `reason`) has no value and is",
        "counted in `MetricSummary.excluded`, never as 0. Its cause is `parse` (the reply could",
        "not be read), `length` (the reply hit its token cap: `JudgeRecord.finish_reason`",
        "`length`), `transport` (the call failed), `not_sent` (too long for the judge's context),",
        "`render` or `scorer`; `GroupSummary.judge_errors` counts them per scorer, the exports'",
        "`row_cause` and `judge_errors.<scorer>.<cause>` columns carry them, and `scanrag score`",
        "/ `scanrag run` print them and exit 5 when every item a scorer judged failed.",
        "",
        "## Files written as plain mappings",
        "",
    ]
    for title, keys in PLAIN_KEYS.items():
        lines += keys_table(f"`{title}`", keys)
    lines += ["## Row schemas", ""]
    seen: set[str] = set()
    for _, _, models in files:
        lines += model_sections(models, seen)
    lines += [
        "## Report folder (`scanrag report`)",
        "",
        "| file | holds |",
        "|---|---|",
        "| `index.html` | runs, comparison, plots, the question list (filter, sort, search) |",
        "| `comparison.md`, `comparison.csv` | one row per grid cell; the CSV has the columns "
        "of the wide export below |",
        "| `comparison.json` | the [ComparisonTable](#comparisontable) |",
        "| `items_long.csv` | the long export below |",
        "| `plots/*.png`, `plots/*.svg` | cost_latency, breakdowns, layout, funnel, "
        "recall_at_k, oracle_ablation (the page shows the SVG) |",
        "| `q/qNNNN.html`, `img/` | one viewer page per question and its page images |",
        "",
        *model_sections([ComparisonTable], seen),
        *export_sections(),
        "## Pandas recipe",
        "",
        "```python",
        *PANDAS_RECIPE.strip("\n").splitlines(),
        "```",
        "",
    ]
    return "\n".join(lines)


def _columns_table(columns: Iterable[Any]) -> list[str]:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {c.type} | {cell(c.meaning)} |" for c in columns]
    return [*lines, ""]


def export_sections() -> list[str]:
    """The exports' columns, each with its type (from
    :mod:`scanrag.evaluation.report.export_types`, the table the writers use)."""
    from scanrag.evaluation.report import export_types as types

    return [
        "## Exports (`scanrag export RUN_DIR --format csv|parquet|jsonl`)",
        "",
        "Two tables, each as `<table>.<format>` with `<table>.columns.json` (column → type)",
        "beside it: `items_long`, one row per item × grid cell × scorer × metric, and",
        "`comparison`, one row per grid cell. Every column has one type in every format:",
        "",
        "| type | values |",
        "|---|---|",
        *(f"| {name} | {cell(text)} |" for name, text in types.TYPE_MEANINGS.items()),
        "",
        cell(types.FORMAT_NOTES),
        "",
        "### Columns of both tables: what the grid cell is",
        "",
        "Absent values are empty cells; `retriever` is `none` for a cell without one, so a",
        "`groupby` keeps full_doc and the oracles.",
        "",
        *_columns_table(types.CELL_COLUMNS),
        "### `items_long`",
        "",
        "After the cell columns. The `trajectory` scorer holds the item's own `usd`,",
        "`prompt_tokens`, `completion_tokens`, `calls`, `wall_s`, `model_s`, `wait_s` and",
        "`count_s` (seconds counting prompt tokens).",
        "",
        *_columns_table(types.LONG_COLUMNS),
        "### `comparison`",
        "",
        "After the cell columns; `<metric>` stands for each headline metric",
        "(`answer_rules.accuracy` ...).",
        "",
        *_columns_table(types.WIDE_COLUMNS),
    ]


PANDAS_RECIPE = """
import json

import pandas as pd

run = "runs/20250101-120000_quickstart"  # a run folder; `scanrag export` it first

# Rows as written: one trajectory per (grid cell, sample); a re-run item appends a row.
traj = pd.read_json(f"{run}/trajectories.jsonl", lines=True)
traj = traj.drop_duplicates(["run_key", "sample_id"], keep="last")
print(traj.groupby(["run_key", "status"]).size())  # errors by kind per cell

scores = pd.read_json(f"{run}/scores.jsonl", lines=True)
scores = scores.drop_duplicates(["run_key", "sample_id", "scorer"], keep="last")
answer = scores[scores.scorer == "answer_rules"].copy()
answer["correct"] = answer.metrics.map(lambda m: m.get("correct"))
per_cell = answer.groupby("run_key").agg(
    accuracy=("correct", "mean"),  # over all items: errors count as wrong
    items=("sample_id", "size"),
    errors=("item_status", lambda s: int((s != "ok").sum())),
)
print(per_cell)
print(answer.groupby(["run_key", "outcome"]).size().unstack(fill_value=0))

summary = json.load(open(f"{run}/summary.json"))
metric = summary["scoring"]["groups"][per_cell.index[0]]["metrics"]["answer_rules.accuracy"]
print(metric["value"], metric["low"], metric["high"], metric["n"], metric["errors"])

# The tidy exports: every item × cell × metric, and one row per cell, read with the
# documented column types (the same frame from .csv, .parquet or .jsonl).
from scanrag.evaluation.report.export_types import read_export

long = read_export(f"{run}/exports/items_long.csv")
acc = long[(long.scorer == "answer_rules") & (long.metric == "correct")]
print(acc.pivot_table(index="doc_type", columns="cell", values="value", aggfunc="mean"))
cost = long[(long.scorer == "trajectory") & (long.metric == "usd")]
print(cost.groupby("model.reader").value.mean())
lost = long[long.gold_pages_dropped.map(bool, na_action="ignore").fillna(False)]
print(lost[["cell", "sample_id", "gold_pages_dropped", "reductions"]].drop_duplicates("sample_id"))
wide = read_export(f"{run}/exports/comparison.csv")
print(wide[["cell", "dataset", "model.reader", "retriever", "n_error"]])
print(long.groupby(["strategy", "retriever"]).size())  # full_doc and oracles: retriever "none"
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write (or --check) docs/outputs.md")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    parser.add_argument("--out", type=Path, default=DOC)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            print(f"{args.out} is stale: run python -m scanrag.evaluation.report.outputs_doc")
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
