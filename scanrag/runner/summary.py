"""``summary.json`` and the table printed at the end of a run.

:func:`write_summary` is the one writer of ``summary.json``, used by ``scanrag run`` and
``scanrag score``. Counts and usage are recomputed from the rows on disk, so the summary is
right whatever number of sessions (or commands) wrote them; metrics per grid cell come from
the scoring backend's ``summarize`` with the run's scorer parameters.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scanrag.config import ExperimentConfig, RunCell, ScoringSpec
from scanrag.protocols import ScoringJob
from scanrag.rundir import RunDir, row_key
from scanrag.runner.conditions import cell_conditions, decider_entry, headline_scorers
from scanrag.runner.scoring import summarize
from scanrag.runner.usage import usage_from_json
from scanrag.schemas import Sample, Usage


def usage_of_rows(rows: Iterable[dict[str, Any]]) -> Usage:
    """Total usage of trajectory or score rows (their per-stage ``usage`` mappings)."""
    total = Usage()
    for row in rows:
        usage = row.get("usage")
        if not isinstance(usage, dict):
            continue
        if "calls" in usage and not isinstance(usage.get("calls"), dict):
            total = total.add(Usage.model_validate(usage))
            continue
        total = total.add(Usage.sum(usage_from_json(usage).values()))
    return total


def _usage_by_stage(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    stages: dict[str, Usage] = defaultdict(Usage)
    for row in rows:
        usage = row.get("usage")
        if isinstance(usage, dict) and not (
            "calls" in usage and not isinstance(usage["calls"], dict)
        ):
            for stage, stage_usage in usage_from_json(usage).items():
                stages[stage] = stages[stage].add(stage_usage)
    data = {k: v.model_dump() for k, v in sorted(stages.items())}
    data["total"] = Usage.sum(stages.values()).model_dump()
    return data


def cell_descriptions(
    cells: Sequence[RunCell] | None, trajectories: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The grid cells: the config's (``cells``), or (for a folder without a config) those
    of the rows."""
    if cells is not None:
        return [
            {
                "run_key": c.run_key,
                "strategy": c.strategy.name,
                "retriever": c.retriever,
                "models": c.models,
            }
            for c in cells
        ]
    seen: dict[str, dict[str, Any]] = {}
    for row in trajectories:
        key = row_key(row)[0]
        seen.setdefault(
            key,
            {
                "run_key": key,
                "strategy": row.get("strategy"),
                "retriever": row.get("retriever"),
                "models": row.get("models") or {},
            },
        )
    return list(seen.values())


def _latest_score_keys(scores: Iterable[Mapping[str, Any]]) -> set[tuple[str, str, str]]:
    """One key per (cell, sample, scorer): a re-scored pair counts once."""
    return {(*row_key(r), str(r.get("scorer"))) for r in scores}


def build_summary(
    run: RunDir,
    config: ExperimentConfig | None,
    stop_reason: str | None,
    manifest: Mapping[str, Any],
    *,
    samples: Mapping[str, Sample],
    score_pending: int | None = None,
    scoring: ScoringSpec | None = None,
) -> dict[str, Any]:
    """The run's summary, recomputed from the rows on disk.

    ``score_pending`` is the number of (trajectory, scorer) pairs still without a row after
    the score stage (``None`` when scoring did not run this session). ``scoring`` gives the
    scorer parameters and bootstrap settings (default: the config's).
    """
    trajectories = run.trajectory_rows()
    scores = run.score_rows()
    cells = cell_descriptions(config.cells() if config is not None else None, trajectories)
    n_samples = sum(int(d.get("samples", 0)) for d in manifest.get("datasets", [])) or len(samples)
    planned = n_samples * len(cells)
    by_cell: dict[str, Counter[str]] = defaultdict(Counter)
    seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    spent: dict[str, Usage] = defaultdict(Usage)
    for row in trajectories:
        key = row_key(row)[0]
        by_cell[key][str(row.get("status", "ok"))] += 1
        for name, value in _seconds(row).items():
            seconds[key][name] += value
        spent[key] = spent[key].add(usage_of_rows([row]))
    done_keys = {row_key(r) for r in trajectories}
    scored_keys = {row_key(r) for r in scores}
    complete = stop_reason is None and len(done_keys) >= planned
    scoring = scoring or (config.scoring if config is not None else ScoringSpec())
    if scoring.enabled:
        complete = complete and not score_pending
    job = ScoringJob(
        rows=scores,
        samples=samples,
        params=scoring.params,
        resamples=scoring.resamples,
        seed=scoring.seed,
    )
    metrics = summarize(job)
    decider = config.report.decider if config is not None else manifest.get("decider")
    keys = [cell["run_key"] for cell in cells]
    conditions = cell_conditions(keys, manifest, trajectories, scores, decider)
    cells_out = {}
    for cell in cells:
        key = cell["run_key"]
        counts = by_cell.get(key, Counter())
        n = sum(counts.values())
        cells_out[key] = {
            **{k: cell[k] for k in ("strategy", "retriever", "models")},
            "items": n,
            "status": dict(sorted(counts.items())),
            "seconds_per_item": _per_item(seconds[key], "total", n),
            "model_seconds_per_item": _per_item(seconds[key], "model", n),
            "wait_seconds_per_item": _per_item(seconds[key], "wait", n),
            "count_seconds_per_item": _per_item(seconds[key], "count", n),
            "usage": spent[key].model_dump(),
            "usd_per_item": round(spent[key].cost_usd / n, 6) if n else None,
            **conditions[key],
        }
    name = config.name if config is not None else run.summary().get("name") or run.path.name
    return {
        "name": name,
        "run_dir": str(run.path),
        "complete": complete,
        "stop_reason": stop_reason,
        "resume": None if complete else f"scanrag run --resume {run.path}",
        "counts": {
            "samples": n_samples,
            "cells": len(cells),
            "planned": planned,
            "trajectories": len(done_keys),
            "scored": len(scored_keys & done_keys),
            "score_rows": len(_latest_score_keys(scores)),
            "score_pending": score_pending,
        },
        "datasets": [_dataset_counts(d) for d in manifest.get("datasets", [])],
        "cells": cells_out,
        "metrics": metrics["all"],
        "headline": metrics["headline"],
        "headline_scorers": headline_scorers(metrics["headline"]),
        "decider": decider_entry(decider, scores, manifest),
        "scoring": metrics["detail"],
        "usage": {"run": _usage_by_stage(trajectories), "score": _usage_by_stage(scores)},
        "sessions": manifest.get("sessions", []),
    }


def _seconds(row: Mapping[str, Any]) -> dict[str, float]:
    """Wall, model, wait and token-counting seconds of one trajectory row, and whether it
    timed its calls (``timed``) and its token counts (``counted``)."""
    timings = row.get("timings") or {}
    out = {"total": float(timings.get("total", 0.0))}
    if "model" in timings:
        out |= {"model": float(timings["model"]), "wait": float(timings.get("wait", 0.0))}
        out["timed"] = 1.0
    if "count" in timings:
        out |= {"count": float(timings["count"]), "counted": 1.0}
    return out


def _per_item(seconds: Mapping[str, float], name: str, n: int) -> float | None:
    """Mean seconds per item; model and wait only when every item timed its calls, count
    when every item timed its token counts (rows written before counts were timed: ``None``)."""
    flag = {"total": None, "count": "counted"}.get(name, "timed")
    timed = n if flag is None else int(seconds.get(flag, 0))
    return round(seconds.get(name, 0.0) / n, 3) if n and timed == n else None


def write_summary(
    run: RunDir,
    config: ExperimentConfig | None,
    stop_reason: str | None = None,
    manifest: Mapping[str, Any] | None = None,
    *,
    samples: Mapping[str, Sample] | None = None,
    score_pending: int | None = None,
    scoring: ScoringSpec | None = None,
) -> dict[str, Any]:
    """Rebuild ``summary.json`` from the rows on disk and write it (the only writer)."""
    if samples is None:
        samples = {s.id: s for s in run.samples()[0]}
    summary = build_summary(
        run,
        config,
        stop_reason,
        run.manifest() if manifest is None else manifest,
        samples=samples,
        score_pending=score_pending,
        scoring=scoring,
    )
    run.write_json(RunDir.SUMMARY, summary)
    return summary


def _dataset_counts(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Samples run, rows the loader dropped and samples recorded as input errors."""
    report = entry.get("report") or {}
    return {
        "name": entry.get("name"),
        "samples": entry.get("samples"),
        "rows_dropped": len(report.get("dropped") or []),
        "input_errors": len(entry.get("input_errors") or {}),
    }


def table_console(*tables: Any) -> Any:
    """A rich console for result tables: the terminal's width; when the output goes to a file
    or a pipe, wide enough for every table in ``tables`` to print at its natural width (at
    least 140 columns), so no number is folded or cut (rich would squeeze every table into
    80 columns there)."""
    import sys

    from rich.console import Console
    from rich.measure import Measurement

    if sys.stdout.isatty():
        return Console()
    probe = Console(width=10_000)
    widths = [Measurement.get(probe, probe.options, t).maximum for t in tables]
    return Console(width=max([TABLE_WIDTH, *widths]))


TABLE_WIDTH = 140
MAX_METRICS = 8
_OK = frozenset({"ok"})
_JUDGE_KEPT = frozenset({"ok", "partial", "skipped"})


def metric_order(names: Iterable[str]) -> list[str]:
    """``names`` with retrieval metrics (``retrieval.*``: what was retrieved) moved right after
    the cited-page metrics (``pages.*``: what was cited), so the two are read side by side."""
    names = list(names)
    retrieval = [n for n in names if n.startswith("retrieval.")]
    rest = [n for n in names if not n.startswith("retrieval.")]
    cited = [i for i, n in enumerate(rest) if n.startswith("pages.")]
    at = cited[-1] + 1 if cited else len(rest)
    return rest[:at] + retrieval + rest[at:]


def _metric_names(summary: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    metrics: dict[str, dict[str, Any]] = summary.get("headline") or {}
    if not any(metrics.values()):
        metrics = summary.get("metrics") or {}
    names: list[str] = []
    for values in metrics.values():
        for name, value in values.items():
            if isinstance(value, int | float) and name not in names:
                names.append(name)
    return metrics, metric_order(names)[:MAX_METRICS]


def judge_exclusions(summary: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per cell, score rows left out of the metrics because a judge (or a render) failed,
    counted per scorer."""
    groups = (summary.get("scoring") or {}).get("groups") or {}
    out: dict[str, dict[str, int]] = {}
    for cell, group in groups.items():
        counts = {
            scorer: sum(n for status, n in statuses.items() if status not in _JUDGE_KEPT)
            for scorer, statuses in (group.get("status") or {}).items()
        }
        out[cell] = {k: v for k, v in counts.items() if v}
    return out


def render_table(summary: dict[str, Any]) -> Any:
    """A rich table that fits 140 columns: one row per grid cell (labelled with its caps,
    ``full_doc ≤60p``) with its status counts (ok items, errors of any kind, degraded items
    when there are any, score rows excluded because a judge failed), up to eight (seven beside
    the degraded column) headline metrics under their own names (one word a line; a caption
    line per cell that has errors or exclusions), model time and cost per item (the time spent
    waiting for the model and the wall time per item in a caption line)."""
    from rich import box
    from rich.table import Table

    degraded = any(c.get("degraded") for c in summary["cells"].values())
    metrics, names = _metric_names(summary)
    names = names[: MAX_METRICS - 1] if degraded else names  # room for the dg column
    excluded = judge_exclusions(summary)
    legend: list[str] = []
    timed = all(c.get("model_seconds_per_item") is not None for c in summary["cells"].values())
    legend += ["sec=model seconds per item" if timed else "sec=seconds per item", "$=USD per item"]
    if degraded:
        legend.append("dg=degraded items (input below the strategy's promise)")
    notes = _status_notes(summary, excluded) + condition_notes(summary) + _wait_note(summary)
    title = f"{summary['name']}  ({summary['counts']['trajectories']} trajectories)"
    caption = "\n".join(line for line in ("  ".join(legend), *notes) if line) or None
    table = Table(
        title=title,
        caption=caption,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 0, 0, 1),
        show_edge=False,
    )
    table.add_column("cell", overflow="ellipsis", max_width=28, no_wrap=True)
    for header in ("ok", "err", *(["dg"] if degraded else []), "excl"):
        table.add_column(header, justify="right")
    for name in names:  # the metric's own name, over two lines, folded rather than cut
        table.add_column(metric_header(name), justify="right", overflow="fold")
    table.add_column("sec", justify="right")
    table.add_column("$", justify="right")
    for key, cell in summary["cells"].items():
        values = metrics.get(key, {})
        status = cell["status"]
        errors = sum(n for name, n in status.items() if name not in _OK)
        row = [str(cell.get("label") or key), str(status.get("ok", 0)), str(errors)]
        if degraded:
            row.append(str(cell.get("degraded", 0)))
        row.append(str(sum(excluded.get(key, {}).values())))
        row += [_fmt(values.get(name)) for name in names]
        seconds = cell.get("model_seconds_per_item") if timed else cell["seconds_per_item"]
        row.append(_fmt(seconds, 1))
        usd = cell["usd_per_item"]
        row.append("—" if usd is None else f"{usd:.3g}")
        table.add_row(*row)
    return table


def metric_header(name: str) -> str:
    """A metric's name as a narrow table header, one word a line: ``answer_rules.accuracy`` →
    ``answer_`` / ``rules.`` / ``accuracy``, so a column is as wide as its longest word."""
    return re.sub(r"([._])", r"\1\n", name)


def _status_notes(
    summary: Mapping[str, Any], excluded: Mapping[str, Mapping[str, int]]
) -> list[str]:
    """One note per cell with errors (by status) or judge exclusions (by scorer, with their
    causes)."""
    notes = []
    groups = (summary.get("scoring") or {}).get("groups") or {}
    for key, cell in summary["cells"].items():
        parts = [f"{n} {name}" for name, n in sorted(cell["status"].items()) if name not in _OK]
        causes = (groups.get(key) or {}).get("judge_errors") or {}
        for scorer, n in excluded.get(key, {}).items():
            why = ", ".join(
                f"{c} {k}" for c, k in (causes.get(scorer) or {}).get("causes", {}).items()
            )
            parts.append(f"{n} {scorer} judged rows excluded" + (f" ({why})" if why else ""))
        if parts:
            notes.append(f"{key}: {', '.join(parts)}")
    return notes


def condition_notes(summary: Mapping[str, Any]) -> list[str]:
    """Which scorer decided ✓/✗ and the accuracy headline, the judge-vs-rules disagreement,
    degraded items that lost gold pages and replayed calls, per cell where there are any."""
    decider = summary.get("decider") or {}
    notes = []
    if decider:
        judges = ", ".join(m for ms in (decider.get("judges") or {}).values() for m in ms)
        judges = judges or str(decider.get("answer_judge") or "")
        notes.append(
            f"correct/wrong decided by: {decider.get('describe')}"
            + (f" (judge {judges})" if judges else "")
        )
    for key, cell in summary["cells"].items():
        parts = []
        versus = (cell.get("decider") or {}).get("judge_vs_rules") or {}
        if versus.get("items"):
            parts.append(
                f"judge vs rules disagree on {versus['disagree']}/{versus['items']} "
                f"({versus['rate']:.0%})"
            )
        if cell.get("gold_pages_dropped"):
            parts.append(f"{cell['gold_pages_dropped']} degraded item(s) lost gold pages")
        replays = cell.get("replays") or {}
        if replays.get("calls"):
            runs = ", ".join(_run_label(r, summary) for r in replays.get("from") or {})
            runs = runs or "an earlier run"
            parts.append(f"{replays['calls']} call(s) replayed from the cache ({runs})")
        if parts:
            notes.append(f"{key}: {'; '.join(parts)}")
    return notes


def _run_label(name: str, summary: Mapping[str, Any]) -> str:
    """A replay source as the notes name it: ``this run`` for calls an earlier cell of the
    same run made (identical prompts across cells), else the source run's folder name."""
    own = Path(str(summary.get("run_dir") or "")).name
    return f"this run ({name})" if name and name == own else name


def _wait_note(summary: Mapping[str, Any]) -> list[str]:
    """Seconds per item spent waiting around model calls (queueing, cache look-ups) and
    counting prompt tokens before them (a server's tokenize endpoint), which ``sec`` leaves
    out, and the wall time per item."""
    cells = summary["cells"]
    if not cells or any(c.get("wait_seconds_per_item") is None for c in cells.values()):
        return []
    counted = all(c.get("count_seconds_per_item") is not None for c in cells.values())
    names = ["wait", "count", "wall"] if counted else ["wait", "wall"]
    keys = {"wait": "wait_seconds_per_item", "count": "count_seconds_per_item"}
    parts = [
        f"{key} " + "/".join(_fmt(c[keys.get(n, "seconds_per_item")], 1) for n in names)
        for key, c in cells.items()
    ]
    return [f"{'/'.join(names)} s per item: " + ", ".join(parts)]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
