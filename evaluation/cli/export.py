"""``scanrag export RUN_DIR... [--format csv|jsonl|parquet] [--out DIR]``: tidy tables of runs."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    from scanrag.evaluation.report.export_write import FORMATS, parquet_available

    formats = [f for f in FORMATS if f != "parquet" or parquet_available()]
    parser = subparsers.add_parser(
        "export",
        help="write the long (item × cell × metric) and wide (cell) tables of finished runs",
        description="Read run folders and write items_long.<fmt> (one row per item, grid "
        "cell, scorer and metric) and comparison.<fmt> (one row per grid cell), both with "
        "dataset, strategy, parameter, retriever and model columns, and each table's column "
        "types in <table>.columns.json (docs/outputs.md lists them). Parquet needs pyarrow "
        "(the 'export' extra).",
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run folder(s)")
    parser.add_argument("--format", choices=formats, default="csv", help="file format")
    parser.add_argument(
        "--out", help="output folder (default: RUN_DIR/exports for one run, ./exports else)"
    )
    parser.add_argument("--baseline", metavar="NAME", help="grid cell the comparison tests against")
    parser.add_argument(
        "--resamples", type=int, default=1000, help="paired bootstrap resamples (0: no tests)"
    )
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from scanrag.evaluation.report import ReportError
    from scanrag.evaluation.report.export import export_runs

    if args.resamples < 0:
        print("error: --resamples must be ≥ 0", file=sys.stderr)
        return 2
    try:
        files = export_runs(
            args.run_dirs,
            args.out,
            fmt=args.format,
            baseline=args.baseline,
            n_resamples=args.resamples,
        )
    except (ReportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in files:
        print(f"wrote {path}")
    return 0
