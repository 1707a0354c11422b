"""``scanrag score RUN_DIR``: score a run's trajectories and summarize them.

Scores every (trajectory, scorer) pair of RUN_DIR without a current row, appending each row
to ``scores.jsonl`` as soon as it is done (one write + fsync per row), then rebuilds
``summary.json``. It takes the same path as the score stage of ``scanrag run``: scorers,
their parameters, the judge models and the bootstrap settings come from the run's recorded
config, and each option given here overrides one of them. Running it again scores only what
is missing or stale, so it is safe after a crash.

``--set scoring.KEY=VALUE`` overrides one value of the run's ``scoring`` section (YAML
value): ``--set scoring.params.mmlongbench.extract=true``. It is validated as the config is,
recorded in the manifest's session and used by the summary.

Judges: ``--judge-model`` sets the model of every role, ``--judge-role-model ROLE=MODEL``
one role. The local model reads no images, so without a vision model the region judge is
skipped (rows say why) while the geometric region metrics still run. A folder that
``scanrag run`` did not write needs ``trajectories.jsonl`` and ``samples.jsonl`` (or
``--samples``); its scorers default to those of the samples' tasks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILURES, EXIT_USAGE = 0, 1, 2
SET_PREFIX = "scoring."


def register(subparsers: Any) -> None:
    from scanrag.bounds import MAX_CONCURRENCY, MAX_RESAMPLES, SEED_MAX
    from scanrag.commands.args import whole_number

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
    parser.add_argument(
        "--judge-prompt",
        action="append",
        default=[],
        metavar="ROLE=FILE",
        help="use FILE verbatim as the prompt of judge ROLE (answer, fact, region; extractor: "
        "MMLongBench-Doc's extraction prompt, official call shape)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="scoring.KEY=VALUE",
        help="override one value of the run's scoring section (YAML value), e.g. "
        "scoring.params.mmlongbench.extract=true; repeatable",
    )
    parser.add_argument("--samples", type=Path, help="samples file (default RUN_DIR/samples.jsonl)")
    parser.add_argument("--pdf-dir", type=Path, action="append", default=[], help="PDF folder")
    parser.add_argument("--cache-dir", type=Path, help="page images, overlays, judge cache")
    parser.add_argument(
        "--concurrency",
        type=whole_number(1, MAX_CONCURRENCY),
        help="items scored at once (default: the run's, else 8)",
    )
    parser.add_argument("--retry-failed", action="store_true", help="re-score failed rows")
    parser.add_argument(
        "--resamples",
        type=whole_number(0, MAX_RESAMPLES),
        help="bootstrap resamples, 0: none (default: the run's, else 1000)",
    )
    parser.add_argument(
        "--seed", type=whole_number(0, SEED_MAX), help="bootstrap seed (default: the run's, else 0)"
    )
    parser.add_argument("--quiet", action="store_true", help="do not print the metrics table")
    parser.epilog = (
        "exit codes: 0 scored; 1 pairs left unscored; 2 bad options or run folder; "
        "5 every item a scorer judged failed in some grid cell (judge errors by cause on stderr)"
    )
    parser.set_defaults(func=handle)


@dataclass
class ScoreDirResult:
    new_rows: int
    total_rows: int
    summary: Any
    failures: dict[Any, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # summary.json as written
    samples: dict[str, Any] = field(default_factory=dict)  # the samples scored, by id


def scoring_overrides(spec: Any, overrides: Sequence[str]) -> Any:
    """``spec`` (a ``ScoringSpec``) with ``--set scoring.KEY=VALUE`` applied, validated as the
    config's ``scoring`` section is; ``ConfigError`` names every bad key."""
    from pydantic import ValidationError

    from scanrag.config import ConfigError, ScoringSpec
    from scanrag.config.loading import apply_override, format_validation_error, parse_override

    data = spec.model_dump(mode="json")
    for text in overrides:
        path, value = parse_override(text)
        if len(path) < 2 or path[0] != SET_PREFIX.rstrip("."):
            key = ".".join(path) or text
            raise ConfigError(
                "--set",
                [
                    f"{key}: scanrag score sets {SET_PREFIX}* keys only (the run's "
                    "scoring section: params.<scorer>.<name>, scorers, resamples, seed, "
                    "judge_prompts.<role>)"
                ],
            )
        apply_override(data, path[1:], value)
    try:
        return ScoringSpec.model_validate(data)
    except ValidationError as exc:
        problems = [f"{SET_PREFIX}{line}" for line in format_validation_error(exc)]
        raise ConfigError("--set", problems) from None


def _llm(cache_dir: Path, config: Any = None, origin: str | None = None) -> Any:
    """The gateway, knowing the model entries (servers, sampling) of the run's config;
    ``origin`` names the run in the replies it caches."""
    try:
        from scanrag.llm.gateway import LLMClient
        from scanrag.llm.options import CacheOptions
    except ImportError as exc:  # gateway extras missing: judge roles will be skipped
        print(f"warning: no LLM gateway ({exc}); judge scorers are skipped", file=sys.stderr)
        return None
    endpoints = config.model_entries() if config is not None else {}
    return LLMClient(endpoints, cache=CacheOptions(cache_dir / "llm", origin=origin))


def score_dir(
    run_dir: Path,
    *,
    scorers: Sequence[str] | None = None,
    judge_model: str | None = None,
    role_models: Sequence[str] = (),
    judge_prompts: Sequence[str] = (),
    samples_path: Path | None = None,
    pdf_dirs: Sequence[Path] = (),
    cache_dir: Path | None = None,
    concurrency: int | None = None,
    retry_failed: bool = False,
    n_resamples: int | None = None,
    seed: int | None = None,
    llm: Any = None,
    params: dict[str, dict[str, Any]] | None = None,
    overrides: Sequence[str] = (),
) -> ScoreDirResult:
    """Score ``run_dir`` as the command does; ``llm`` overrides the gateway (tests),
    ``params`` the scorers' parameters (``{scorer: {name: value}}``) and ``overrides`` single
    values of the scoring section (``--set scoring.KEY=VALUE``).

    The run's recorded config supplies scorers, their parameters, the judges and the
    bootstrap settings (what ``scanrag run`` used); every argument given here overrides it,
    and the summary is computed with the settings in effect (recorded in the manifest's
    session). The job is the kernel's :func:`~scanrag.runner.scoring.scoring_job` with those fields
    replaced, scored by :func:`~scanrag.runner.scoring.score_run_dir` (the path ``scanrag
    run`` scores through too), then the one writer of ``summary.json`` runs.
    """
    from scanrag.commands.args import key_values
    from scanrag.config import ScoringSpec
    from scanrag.evaluation.schemas import Summary
    from scanrag.rundir import RunDir
    from scanrag.runner.manifest import now_iso
    from scanrag.runner.manifest_build import scoring_entry
    from scanrag.runner.progress import RunProgress
    from scanrag.runner.scoring import judge_models, score_run_dir, scoring_job
    from scanrag.runner.summary import write_summary

    run = RunDir.open(run_dir, need=(RunDir.TRAJECTORIES,))
    config = run.experiment()
    recorded = config.scoring if config is not None else ScoringSpec()
    scoring = scoring_overrides(recorded, overrides) if overrides else recorded
    roles = key_values(role_models)
    prompts = key_values(judge_prompts, what="FILE") if judge_prompts else None
    given = {
        "scorers": list(scorers) if scorers else None,
        "params": params,
        "judge_prompts": prompts,
        "resamples": n_resamples,
        "seed": seed,
    }
    scoring = scoring.model_copy(update={k: v for k, v in given.items() if v is not None})
    started = now_iso()
    with run:
        job, warnings = scoring_job(run, config, samples_path=samples_path, pdf_dirs=pdf_dirs)
        fields: dict[str, Any] = {"params": scoring.params, "concurrency": concurrency}
        fields |= {"judge_prompts": dict(scoring.judge_prompts), "cache_dir": cache_dir}
        fields["scorers"] = list(scoring.scorers) if scoring.scorers is not None else None
        job = replace(
            job,
            judges=judge_models(job.judges, judge_model, roles),
            llm=llm,
            retry_failed=retry_failed,
            **{k: v for k, v in fields.items() if v is not None},
        )
        outcome = score_run_dir(
            run,
            job,
            make_llm=lambda: _llm(cache_dir or run.path / "cache", config, origin=run.path.name),
            progress=RunProgress(
                config.runner.progress if config is not None else None,
                interval_s=config.runner.progress_interval_s if config is not None else 30.0,
            ),
        )
        manifest = run.manifest()
        if manifest:
            session: dict[str, Any] = {"command": "score", "started": started}
            session["finished"] = now_iso()
            session["scoring"] = scoring_entry(
                scoring.scorers, scoring.params, scoring.judge_prompts
            )
            if overrides:
                session["set"] = list(overrides)
            manifest.setdefault("sessions", []).append(session)
            run.write_json(RunDir.MANIFEST, manifest)
        data = write_summary(
            run,
            config,
            manifest=manifest,
            samples=job.samples,
            score_pending=outcome.pending,
            scoring=scoring,
        )
    detail = data.get("scoring")
    summary = Summary.model_validate(detail) if detail else Summary()
    total = len(run.score_rows())
    return ScoreDirResult(
        outcome.new_rows, total, summary, outcome.failures, warnings, data, dict(job.samples)
    )


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_summary(summary: Any) -> None:
    """One line per (grid cell, headline metric): value, interval, n, excluded."""
    from rich.table import Table

    from scanrag.evaluation.stats import interval_text
    from scanrag.runner.summary_table import table_console

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
            ci = interval_text(m.low, m.high, m.n)
            table.add_row(
                group_name, metric, _fmt(m.value), ci, str(m.n), str(m.excluded), str(m.skipped)
            )
    table_console(table).print(table)
    for group_name, group in summary.groups.items():
        for scorer, error in group.aggregate_errors.items():
            print(f"{group_name}: {scorer} not aggregated: {error}", file=sys.stderr)


def print_official_blocks(run_dir: Path, summary: Any, samples: Any) -> None:
    """The JSON DocScope's ``summarize_eval.py`` prints, for every grid cell with a DocScope
    stage scored under the official profile; over another population than the released one
    (a paper-profile import, a run's own items) a warning on stderr and a title naming it."""
    import json

    from scanrag.evaluation.docscope.official.summary import (
        block_title,
        population,
        population_warning,
        summaries,
    )
    from scanrag.rundir import RunDir

    manifest = RunDir(run_dir).manifest()
    blocks = summaries(summary, manifest)
    items = population(samples.values(), manifest) if blocks else None
    if items is not None:
        print(population_warning(items), file=sys.stderr)
    for cell, block in blocks.items():
        print(block_title(cell, items))
        print(json.dumps(block, indent=2, ensure_ascii=False))


def handle(args: argparse.Namespace) -> int:
    from scanrag.registry import UnknownNameError
    from scanrag.rundir import RunDirError
    from scanrag.runner.components import SetupError
    from scanrag.runner.outcome import ALL_FAILED_EXIT, all_judged_failed, judge_failure_lines

    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()] if args.scorers else None
    try:
        result = score_dir(
            args.run_dir,
            scorers=scorers,
            judge_model=args.judge_model,
            role_models=args.judge_role_model,
            judge_prompts=args.judge_prompt,
            samples_path=args.samples,
            pdf_dirs=args.pdf_dir,
            cache_dir=args.cache_dir,
            concurrency=args.concurrency,
            retry_failed=args.retry_failed,
            n_resamples=args.resamples,
            seed=args.seed,
            overrides=args.overrides,
        )
    except (RunDirError, SetupError, UnknownNameError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if not args.quiet:
        print_summary(result.summary)
        print_official_blocks(args.run_dir, result.summary, result.samples)
    print(
        f"{result.new_rows} new score rows, {result.total_rows} in {args.run_dir / 'scores.jsonl'}"
    )
    for line in judge_failure_lines(result.data):
        print(line, file=sys.stderr)
    if result.failures:
        for key, trace in list(result.failures.items())[:5]:
            print(
                f"error: scorer failed on {key}: {trace.strip().splitlines()[-1]}", file=sys.stderr
            )
        print(f"{len(result.failures)} pairs failed; run again to retry them", file=sys.stderr)
        return EXIT_FAILURES
    failed = all_judged_failed(result.data)
    if failed:
        where = "; ".join(failed)
        print(
            f"every judged item failed in: {where} (exit code {ALL_FAILED_EXIT}); "
            "scanrag score --retry-failed tries them again",
            file=sys.stderr,
        )
        return ALL_FAILED_EXIT
    return EXIT_OK
