"""``scanrag demo``: the quickstart experiment on the synthetic corpus with the local model.

Runs ``configs/quickstart.yaml`` (full-document reading, top-k RAG over BM25, dense and hybrid
retrieval, agentic RAG and the oracle-pages ablation), scores everything, writes the report
and prints the summary table. The corpus is generated into the cache on first use.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scanrag.commands.run import add_common_options, overrides_from_args, stop_on_sigterm

# A larger synthetic corpus: more and longer documents, more questions per document.
LARGE_OVERRIDES = (
    "datasets.0.ids=null",
    "datasets.0.synthetic.docs=6",
    "datasets.0.synthetic.options.min_pages=20",
    "datasets.0.synthetic.options.max_pages=40",
    "datasets.0.synthetic.options.questions_per_doc=4",
    "runner.page_caps.max_pages=40",
    "strategies.0.params.max_chars_per_page=null",
    "strategies.0.params.block_boxes=true",
    "strategies.1.params.k=3",
    "strategies.2.params.pages_per_step=2",
)


def default_config() -> Path:
    """``configs/quickstart.yaml``: the installed copy (``scanrag/configs/`` in a wheel, where
    pyproject.toml maps the folder as ``scanrag.configs``), else the source tree's."""
    here = Path(__file__).resolve().parents[1]
    for folder in (here / "configs", here.parent / "configs"):
        if (folder / "quickstart.yaml").is_file():
            return folder / "quickstart.yaml"
    raise FileNotFoundError(
        f"quickstart.yaml is neither in {here / 'configs'} nor in {here.parent / 'configs'}: "
        "reinstall scanrag, or pass --config"
    )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the quickstart experiment end to end and write its report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--large", action="store_true", help="a larger corpus (slower)")
    parser.add_argument("--config", help="another experiment file (default: quickstart.yaml)")
    parser.add_argument("--out", help="report folder (default: <run dir>/report)")
    add_common_options(parser)
    parser.set_defaults(func=handle)


def demo_overrides(args: argparse.Namespace, data: dict[str, Any]) -> list[str]:
    """``--large`` and ``--model`` (agents and the default judge) as config overrides."""
    out = list(LARGE_OVERRIDES) if args.large else []
    out += overrides_from_args(args)
    if args.model:
        out.append(f"models.judges.default={args.model}")
    return out


def write_report(run_dir: Path, out: Path | None, log: Any = print) -> Path | None:
    """Write the report of ``run_dir`` with the registered report writer (``report`` in
    ``scanrag.registry.BACKENDS``); returns the path of its ``index.html``, or ``None`` when no
    report could be written."""
    from scanrag.registry import BACKENDS, RegistryError, UnknownNameError
    from scanrag.rundir import RunDir

    try:
        build_report = BACKENDS.get("report")
    except (UnknownNameError, RegistryError) as exc:
        log(f"report: no report writer available ({exc}); run `scanrag report` later")
        return None
    target = out or RunDir(run_dir).file(RunDir.REPORT)
    try:
        result = build_report([run_dir], target)
    except Exception as exc:  # the run is done and valid; a report failure must not hide it
        log(f"report failed: {type(exc).__name__}: {exc}")
        return None
    return Path(result) if isinstance(result, str | Path) else target


def handle(args: argparse.Namespace) -> int:
    from scanrag.config import ConfigError, read_yaml
    from scanrag.rundir import RunDirError
    from scanrag.runner import RunAbortedError, SetupError, start_run
    from scanrag.runner.summary_table import render_table, table_console

    path = Path(args.config) if args.config else default_config()
    stop_on_sigterm()
    try:
        data = read_yaml(path)
        overrides = demo_overrides(args, data)
        result = start_run(path, overrides=overrides, limit=args.limit, model=args.model)
    except (ConfigError, SetupError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, RunAbortedError) as exc:  # a full disk while the folder is set up...
        print(f"error: {exc}", file=sys.stderr)
        return 1
    console = table_console()
    console.print(render_table(result.summary))
    report = write_report(result.run_dir, Path(args.out) if args.out else None, console.print)
    print(f"run directory: {result.run_dir}")
    if report is not None:
        print(f"report: {report if report.is_file() else report / 'index.html'}")
    return result.exit_code
