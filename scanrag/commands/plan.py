"""``scanrag plan CONFIG``: per grid cell, what a run would call, count and cut — before
anything is spent (:mod:`scanrag.runner.plan`)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from scanrag.commands.run import add_common_options, overrides_from_args


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="what a run of CONFIG would do, before anything is spent (no model call)",
        description="Plan every item of CONFIG as a run would, without calling a model: per "
        "grid cell the items, the reader and judge calls, their prompt tokens (counted by the "
        "counter the run uses, named per model), the items that would be degraded (by kind) "
        "or lose gold pages, items that would fail before any call, and the cost where prices "
        "are known. Documents are ingested into the cache and retrievers built as for the "
        "run; no run folder is created. With --dataset instead of CONFIG: full_doc, topk_rag "
        "and agentic_rag over bm25 and oracle_pages at their defaults over that file.",
    )
    parser.add_argument("config", nargs="?", help="experiment YAML file")
    parser.add_argument("--dataset", type=Path, help="a generic-format questions file instead")
    parser.add_argument("--pdf-dir", type=Path, help="with --dataset: its PDFs (default: pdfs/)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    add_common_options(parser)
    parser.set_defaults(func=handle)


def dataset_config(questions: Path, pdf_dir: Path, reader: str) -> dict[str, Any]:
    """Four strategies at their defaults over one generic-format questions file."""
    return {
        "name": "plan",
        "datasets": [
            {"name": questions.parent.name, "path": str(questions), "pdf_dir": str(pdf_dir)}
        ],
        "retrievers": {"bm25": {}},
        "strategies": [
            {"name": "full_doc"},
            {"name": "topk_rag", "retriever": "bm25"},
            {"name": "agentic_rag", "retriever": "bm25"},
            {"name": "oracle_pages"},
        ],
        "models": {"agents": {"reader": reader}},
        "scoring": {"enabled": False},
    }


def handle(args: argparse.Namespace) -> int:
    import yaml

    from scanrag.config import ConfigError, load_config
    from scanrag.rundir import RunDirError
    from scanrag.runner import SetupError
    from scanrag.runner.plan import plan_run
    from scanrag.runner.progress import stderr_log

    if bool(args.config) == bool(args.dataset):
        print("error: give a CONFIG file or --dataset Q.jsonl (not both)", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="scanrag-plan-config-") as tmp:
            if args.dataset is not None:
                pdfs = args.pdf_dir or args.dataset.parent / "pdfs"
                data = dataset_config(args.dataset.resolve(), pdfs.resolve(), "local/qwen2.5-0.5b")
                args.config = str(Path(tmp) / "plan.yaml")
                Path(args.config).write_text(yaml.safe_dump(data), encoding="utf-8")
            overrides = overrides_from_args(args)
            config = load_config(args.config, overrides, limit=args.limit, model=args.model)
        plan = plan_run(config, log=stderr_log)
    except (ConfigError, SetupError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(plan.model_dump(mode="json"), indent=2))
        return 0
    from scanrag.runner.summary_table import table_console

    table = plan_table(plan)
    table_console(table).print(table)
    for line in plan_notes(plan):
        print(line)
    return 0


def _usd(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def plan_table(plan: Any) -> Any:
    """The plan as a rich table, one row per grid cell."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=f"plan of {plan.name}  ({plan.items} items; no model called, no run folder)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    headers = (
        "cell", "items", "reader calls", "reader tok in", "max tok out", "judge calls",
        "judge tok in", "degraded", "gold lost", "errors", "$ in", "$ ≤max",
    )  # fmt: skip
    for header in headers:
        table.add_column(header, justify="left" if header == "cell" else "right")
    for cell in plan.cells:
        kinds = ", ".join(f"{n} {k}" for k, n in cell.degraded_by_kind.items())
        errors = ", ".join(f"{n} {status}" for status, n in cell.errors.items())
        table.add_row(
            cell.label,
            str(cell.items),
            str(cell.reader_calls),
            f"{cell.reader_input_tokens:,}",
            f"{cell.reader_max_output_tokens + cell.judge_max_output_tokens:,}",
            str(cell.judge_calls),
            f"{cell.judge_input_tokens:,}",
            f"{cell.degraded} ({kinds})" if kinds else str(cell.degraded),
            str(cell.gold_pages_dropped),
            errors or "0",
            _usd(cell.usd_input),
            _usd(cell.usd_max),
        )
    return table


def plan_notes(plan: Any) -> list[str]:
    """How tokens were counted and priced, and what the numbers leave out."""
    lines = [f"tokens counted: {m} → {how}" for m, how in plan.token_counting.items()]
    for model, price in plan.prices.items():
        if price is None:
            lines.append(f"price unknown: {model} (its cells show no $)")
        else:
            per_m = f"${price[0] * 1e6:.2f} in / ${price[1] * 1e6:.2f} out per 1M tokens"
            lines.append(f"price: {model} {per_m}")
    degraded = sum(c.degraded for c in plan.cells)
    if degraded and plan.on_degraded == "fail":
        lines.append(
            f"runner.on_degraded: fail: the {degraded} degraded item(s) fail before any call"
        )
    over = sum(c.judge_over_window for c in plan.cells)
    if over:
        lines.append(f"{over} judge prompt(s) exceed the judge's window and would not be sent")
    lines += [f"warning: {w}" for w in plan.warnings]
    lines.append(
        "max tok out: every call's max_tokens (reader and judge); $ ≤max prices them all. "
        "Calls are counted before the response cache (a prompt an earlier run sent is "
        "replayed at no cost). Strategies that decide as they go (agentic_rag, scan) are "
        "planned on the path of a reply that answers at once."
    )
    return lines
