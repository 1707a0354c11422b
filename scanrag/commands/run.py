"""``scanrag run CONFIG.yaml`` and ``scanrag run --resume RUN_DIR``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from scanrag.bounds import MAX_CONCURRENCY, MAX_ROWS, MAX_TOKENS_BUDGET
from scanrag.commands.args import positive_float, whole_number

COMMON_HELP = """common overrides (each is a shortcut for --set):
  --limit N            datasets.*.limit
  --model NAME         models.agents.* (every agent role)
  --executor local|ray runner.executor
  --concurrency N      runner.concurrency
  --budget-usd X       runner.budget.usd
  --budget-tokens N    runner.budget.tokens
  --no-budget          runner.budget=null
  --no-cache           runner.llm.cache=false (every model call is made again, none replayed)
"""

EXIT_HELP = """exit codes:
  0  every item ran (and was scored)     5  every item of some grid cell failed
  1  unscored pairs left, other stops    6  failed share above runner.fail_threshold
  2  bad config or setup                 3  budget spent   4  disk full   130  interrupted
the items that are not ok are listed on stderr by status, with the first message of each.
"""


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """Flags shared by ``run`` and ``demo``."""
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override one config value (YAML syntax), e.g. runner.budget.usd=2.5; repeatable",
    )
    parser.add_argument(
        "--limit", type=whole_number(1, MAX_ROWS), help="at most N samples per dataset"
    )
    parser.add_argument("--model", help="model for every agent role (e.g. local/smollm2-135m)")
    parser.add_argument("--executor", choices=["local", "ray"])
    parser.add_argument(
        "--concurrency", type=whole_number(1, MAX_CONCURRENCY), help="items in flight"
    )
    parser.add_argument(
        "--budget-usd", type=positive_float, help="stop starting items past this spend"
    )
    parser.add_argument(
        "--budget-tokens",
        type=whole_number(1, MAX_TOKENS_BUDGET),
        help="stop starting items past this usage",
    )
    parser.add_argument("--no-budget", action="store_true", help="remove the budget")
    parser.add_argument("--runs-dir", help="where run folders are created (default: runs/)")
    parser.add_argument("--cache-dir", help="documents, pages, model responses (shared)")
    parser.add_argument("--no-score", action="store_true", help="skip the scoring stage")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="call every model again instead of replaying replies cached by earlier runs",
    )
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None)
    progress.add_argument("--no-progress", dest="progress", action="store_false")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run an experiment config (or resume a run)",
        description="Run every grid cell of an experiment config over its datasets, score the "
        "trajectories and write runs/<timestamp>_<name>/.",
        epilog=COMMON_HELP + "\n" + EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", nargs="?", help="experiment YAML file")
    parser.add_argument("--resume", metavar="RUN_DIR", help="finish an interrupted run")
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume: run again the items that ended in model, internal, retriever or "
        "input errors (after fixing the cause), and re-score failed judge rows",
    )
    add_common_options(parser)
    parser.set_defaults(func=handle)


def overrides_from_args(args: argparse.Namespace) -> list[str]:
    """Turn the shortcut flags into ``--set`` overrides (shortcuts come last and win)."""
    out = list(args.overrides or [])
    simple = {
        "executor": "runner.executor",
        "concurrency": "runner.concurrency",
        "budget_usd": "runner.budget.usd",
        "budget_tokens": "runner.budget.tokens",
        "runs_dir": "runner.runs_dir",
        "cache_dir": "runner.cache_dir",
        "progress": "runner.progress",
    }
    for attr, path in simple.items():
        value = getattr(args, attr, None)
        if value is not None:
            out.append(f"{path}={value}")
    if getattr(args, "no_budget", False):
        out.append("runner.budget=null")
    if getattr(args, "no_score", False):
        out.append("scoring.enabled=false")
    if getattr(args, "no_cache", False):
        out.append("runner.llm.cache=false")
    out += plugin_overrides(args)
    return out


def plugin_overrides(args: argparse.Namespace) -> list[str]:
    """``--plugin`` modules added to the config's ``plugins`` (recorded in the run's config,
    so Ray workers and a resume import them too); ``.py`` files as absolute paths."""
    import json
    from pathlib import Path

    from scanrag.config import read_yaml
    from scanrag.config.loading import anchor_paths
    from scanrag.plugins import is_file_plugin

    given = getattr(args, "plugin", None) or []
    if not given:
        return []
    resume = getattr(args, "resume", None)  # run only; plan always has a config
    source = Path(args.config) if args.config else Path(str(resume)) / "config.resolved.yaml"
    try:
        existing = anchor_paths(read_yaml(source), source.resolve().parent).get("plugins")
    except Exception:  # the config's own problem, reported when it is loaded
        existing = None
    names = [str(Path(p).expanduser().resolve()) if is_file_plugin(p) else p for p in given]
    known = existing if isinstance(existing, list) else []
    return [f"plugins={json.dumps(list(dict.fromkeys([*known, *names])))}"]


def stop_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C: the run stops cleanly, writes its summary, stays resumable.

    A clean stop waits for model calls already running; a second SIGTERM exits at once (every
    row already written is complete, so a resume still works).
    """
    received = []

    def interrupt(signum: int, frame: object) -> None:
        received.append(signum)
        if len(received) > 1:
            os._exit(130)
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def handle(args: argparse.Namespace) -> int:
    from scanrag.config import ConfigError
    from scanrag.rundir import RunDirError
    from scanrag.runner import RunAbortedError, SetupError, resume_run, start_run
    from scanrag.runner.summary_table import render_table, table_console

    if bool(args.config) == bool(args.resume):
        print("error: give a CONFIG file or --resume RUN_DIR (not both)", file=sys.stderr)
        return 2
    stop_on_sigterm()
    try:
        overrides = overrides_from_args(args)
        if args.resume:
            if args.limit is not None or args.model is not None:
                print("error: --limit/--model cannot change a run being resumed", file=sys.stderr)
                return 2
            result = resume_run(args.resume, overrides=overrides, retry_errors=args.retry_errors)
        else:
            result = start_run(args.config, overrides=overrides, limit=args.limit, model=args.model)
    except (ConfigError, SetupError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, RunAbortedError) as exc:  # a full disk while the folder is set up...
        print(f"error: {exc}", file=sys.stderr)
        return 1
    table_console().print(render_table(result.summary))
    print(f"run directory: {result.run_dir}")
    return result.exit_code
