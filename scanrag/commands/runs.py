"""``scanrag runs [DIR] [--json]``: the run folders under DIR (default ``runs``), newest first."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs",
        help="list the run folders under DIR (default runs/), newest first",
        description="One line per run folder under DIR (default: runs): when it started, "
        "the folder and the experiment's name, grid cells, items written of planned, the "
        "headline metric (best cell), complete / running / interrupted, degraded items, items "
        "that ended in an error and model calls replayed from the cache. Read from each "
        "folder's summary.json and manifest.json. `scanrag report RUN...` compares runs, with "
        "what differs between their configs.",
    )
    parser.add_argument("folder", nargs="?", default="runs", metavar="DIR", help="runs folder")
    parser.add_argument("--json", action="store_true", help="print the entries as JSON")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from scanrag.rundir import RunDirError
    from scanrag.rundir.listing import list_runs

    try:
        entries, problems = list_runs(args.folder)
    except RunDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps([e.model_dump() for e in entries], indent=2))
        return 0
    if not entries:
        print(f"no run folders in {args.folder}", file=sys.stderr)
        return 0
    from scanrag.runner.summary_table import table_console

    table = runs_table(entries)
    table_console(table).print(table)
    return 0


def runs_table(entries: Any) -> Any:
    """The listing as a rich table."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for name, justify in (
        ("started", "left"),
        ("folder", "left"),
        ("name", "left"),
        ("cells", "right"),
        ("n", "right"),
        ("headline (best cell)", "left"),
        ("state", "left"),
        ("degraded", "right"),
        ("errors", "right"),
        ("replays", "right"),
    ):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for entry in entries:
        best = entry.best
        headline = "—" if best is None else f"{entry.metric} {best[1]:.3f} ({best[0]})"
        state = entry.state
        if entry.stop_reason:
            state += f": {entry.stop_reason}"
        table.add_row(
            (entry.created or "—")[:16].replace("T", " "),
            entry.folder,
            entry.name,
            str(entry.cells),
            f"{entry.items}/{entry.planned}" if entry.planned else str(entry.items),
            headline,
            state,
            str(entry.degraded),
            str(entry.errors),
            str(entry.replays),
        )
    return table
