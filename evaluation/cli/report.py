"""``scanrag report RUN_DIR... [--out DIR] [--baseline NAME]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the HTML report, comparison tables and plots of finished runs",
        description="Read one or more run folders and write index.html (usable offline), "
        "comparison.md/.csv/.json, plots/*.png and a trajectory-viewer page per question.",
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run folder(s)")
    parser.add_argument(
        "--out", help="report folder (default: RUN_DIR/report for one run, ./report for several)"
    )
    parser.add_argument(
        "--baseline",
        metavar="NAME",
        help="grid cell (run key, label or strategy) to test against "
        "(default: the config's first cell)",
    )
    parser.add_argument(
        "--resamples", type=int, default=1000, help="paired bootstrap resamples (0: no tests)"
    )
    parser.add_argument(
        "--max-questions", type=int, default=200, help="viewer pages to write (default 200)"
    )
    parser.add_argument("--max-pages", type=int, default=4, help="page images per cell/question")
    parser.add_argument("--dpi", type=int, default=96, help="page image resolution")
    parser.set_defaults(func=handle)


def default_out(run_dirs: list[Path]) -> Path:
    return run_dirs[0] / "report" if len(run_dirs) == 1 else Path("report")


def handle(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from scanrag.evaluation.report import ReportError, ReportOptions, build_report
    from scanrag.evaluation.report.data import check_out_folder

    run_dirs = [Path(p) for p in args.run_dirs]
    out = Path(args.out) if args.out else default_out(run_dirs)
    try:
        check_out_folder(out)
        options = ReportOptions(
            n_resamples=args.resamples,
            max_questions=args.max_questions,
            max_pages=args.max_pages,
            dpi=args.dpi,
        )
        index = build_report(run_dirs, out, baseline=args.baseline, options=options)
    except ValidationError as exc:
        print(f"error: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}", file=sys.stderr)
        return 2
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print_config_diff(run_dirs)
    print(f"report: {index}")
    return 0


def _print_config_diff(run_dirs: list[Path]) -> None:
    """What differs between the runs' resolved configs (the report's section, in short)."""
    from scanrag.evaluation.report.config_diff import diff_lines
    from scanrag.rundir import RunDir, RunDirError

    if len(run_dirs) < 2:
        return
    try:
        configs = [RunDir(p).config_data() for p in run_dirs]
    except RunDirError:
        return  # the report warned about the unreadable config already
    lines = diff_lines(configs)
    folders = " | ".join(p.name for p in run_dirs)
    print(f"config differences ({folders}):" if lines else "configs: the same in every run")
    for line in lines:
        print(line)
