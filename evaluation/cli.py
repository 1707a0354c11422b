"""``scanrag score RUN_DIR``: score a run's trajectories and summarise them.

Reads ``RUN_DIR/trajectories.jsonl`` and ``RUN_DIR/samples.jsonl``, scores every
(trajectory, scorer) pair that has no row in ``RUN_DIR/scores.jsonl`` yet, appending each row
as soon as it is done (one write + fsync per row), then writes ``summary.json`` and prints the
metrics. Running it again scores only what is missing, so it is safe after a crash.

``summary.json``: an existing file (the run's own summary) keeps its other keys; ``metrics``
becomes ``{run_key: {"<scorer>.<metric>": value}}`` and ``scoring`` the full
:class:`~evaluation.schemas.Summary` (intervals, counts, tables).

Judges: ``--judge-model`` sets the model of every role (default: the run config's
``models.judges``, else the project's local model), ``--judge-role-model ROLE=MODEL`` one
role. The local model reads no images, so without a vision model the region judge is skipped
(rows say why) while the geometric region metrics still run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILURES, EXIT_USAGE = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a run's trajectories (only what is not scored yet)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    parser.add_argument("--scorers", help="comma-separated scorer names (default: by task)")
    parser.add_argument("--judge-model", help="judge model for every role")
    parser.add_argument(
        "--judge-role-model",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="judge model for one role (region, fact, answer, extractor, matching, faithfulness)",
    )
    parser.add_argument("--samples", type=Path, help="samples file (default RUN_DIR/samples.jsonl)")
    parser.add_argument("--pdf-dir", type=Path, action="append", default=[], help="PDF folder")
    parser.add_argument("--cache-dir", type=Path, help="page images, overlays, judge cache")
    parser.add_argument("--concurrency", type=int, default=8, help="items scored at once")
    parser.add_argument("--retry-failed", action="store_true", help="re-score failed rows")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (0: none)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--quiet", action="store_true", help="do not print the metrics table")
    parser.set_defaults(func=handle)


@dataclass
class ScoreDirResult:
    new_rows: int
    total_rows: int
    summary: Any
    failures: dict[Any, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _llm(cache_dir: Path, run_dir: Path | None = None) -> Any:
    """The gateway, knowing the model entries (servers, sampling) of the run's config."""
    try:
        from scanrag.llm.gateway import LLMClient
    except ImportError as exc:  # gateway extras missing: judge roles will be skipped
        print(f"warning: no LLM gateway ({exc}); judge scorers are skipped", file=sys.stderr)
        return None
    from evaluation.rundir import CONFIG
    from scanrag.config.models import entries_from_file

    endpoints = entries_from_file(run_dir / CONFIG) if run_dir is not None else {}
    return LLMClient(cache_dir=cache_dir / "llm", endpoints=endpoints)


def score_dir(
    run_dir: Path,
    *,
    scorers: Sequence[str] | None = None,
    judge_model: str | None = None,
    role_models: Sequence[str] = (),
    samples_path: Path | None = None,
    pdf_dirs: Sequence[Path] = (),
    cache_dir: Path | None = None,
    concurrency: int = 8,
    retry_failed: bool = False,
    n_resamples: int = 1000,
    seed: int = 0,
    llm: Any = None,
) -> ScoreDirResult:
    """Score ``run_dir`` as the command does; ``llm`` overrides the gateway (tests)."""
    from evaluation.base import StatsOptions, default_scorer_names
    from evaluation.documents import DocumentSource
    from evaluation.judging import JudgeConfig, JudgeContext
    from evaluation.rundir import SCORES, SUMMARY, read_run
    from evaluation.stage import ScoringError, read_rows, score_run, summarize
    from scanrag.runner.store import JsonlLog, RunDir, write_json

    inputs = read_run(run_dir, samples_path, pdf_dirs)
    names = list(scorers) if scorers else default_scorer_names({s.task for s in inputs.samples})
    if judge_model is not None:
        config = JudgeConfig.from_options(judge_model, role_models, concurrency=concurrency)
    else:
        config = JudgeConfig.from_mapping(inputs.judges, concurrency=concurrency)
        config = config.model_copy(
            update={
                "models": {**config.models, **JudgeConfig.from_options(None, role_models).models}
            }
        )
    cache = cache_dir or run_dir / "score_cache"
    documents = DocumentSource(inputs.pdf_dirs, cache_dir=cache)
    ctx = JudgeContext(
        llm=llm if llm is not None else _llm(cache, run_dir),
        config=config,
        documents=documents,
    )
    lock = RunDir(run_dir)
    lock.acquire()
    log = JsonlLog(run_dir / SCORES)
    failures: dict[Any, str] = {}
    try:
        log.repair()
        existing = read_rows(run_dir / SCORES)
        try:
            new = asyncio.run(
                score_run(
                    inputs.trajectories,
                    inputs.samples,
                    names,
                    ctx,
                    existing,
                    concurrency=concurrency,
                    on_row=log.append,
                    retry_failed=retry_failed,
                )
            )
        except ScoringError as exc:
            failures = exc.failures
            new = []
        rows = read_rows(run_dir / SCORES)
        summary = summarize(
            rows, inputs.samples, stats=StatsOptions(n_resamples=n_resamples, seed=seed)
        )
        path = run_dir / SUMMARY
        data = _existing_summary(path)
        data["metrics"] = summary.flat()
        data["scoring"] = summary.model_dump(mode="json")
        write_json(path, data)
    finally:
        log.close()
        lock.release()
    return ScoreDirResult(len(new), len(rows), summary, failures, inputs.bad_lines)


def _existing_summary(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_summary(summary: Any) -> None:
    """One line per (grid cell, headline metric): value, interval, n, excluded."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="scores")
    table.add_column("run key", overflow="fold")
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right")
    for name in ("95% CI", "n", "excluded", "skipped"):
        table.add_column(name, justify="right")
    for group_name, group in summary.groups.items():
        for metric, m in group.metrics.items():
            if not m.headline:
                continue
            ci = f"[{_fmt(m.low)}, {_fmt(m.high)}]" if m.low is not None else "—"
            table.add_row(
                group_name, metric, _fmt(m.value), ci, str(m.n), str(m.excluded), str(m.skipped)
            )
    Console(width=None if sys.stdout.isatty() else 180).print(table)


def handle(args: argparse.Namespace) -> int:
    from evaluation.rundir import RunDirError
    from scanrag.registry import UnknownNameError
    from scanrag.runner.store import RunDirError as LockError

    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()] if args.scorers else None
    try:
        result = score_dir(
            args.run_dir,
            scorers=scorers,
            judge_model=args.judge_model,
            role_models=args.judge_role_model,
            samples_path=args.samples,
            pdf_dirs=args.pdf_dir,
            cache_dir=args.cache_dir,
            concurrency=args.concurrency,
            retry_failed=args.retry_failed,
            n_resamples=args.resamples,
            seed=args.seed,
        )
    except (RunDirError, LockError, UnknownNameError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if not args.quiet:
        print_summary(result.summary)
    print(
        f"{result.new_rows} new score rows, {result.total_rows} in {args.run_dir / 'scores.jsonl'}"
    )
    if result.failures:
        for key, trace in list(result.failures.items())[:5]:
            print(
                f"error: scorer failed on {key}: {trace.strip().splitlines()[-1]}", file=sys.stderr
            )
        print(f"{len(result.failures)} pairs failed; run again to retry them", file=sys.stderr)
        return EXIT_FAILURES
    return EXIT_OK
