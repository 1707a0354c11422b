"""The table printed at the end of a run (and by ``scanrag score``), from ``summary.json``.

One row per grid cell: its items and errors, up to :data:`MAX_METRICS` headline metrics
(retrieval next to the cited pages, :func:`metric_order`), time and cost per item; notes below
it say which statuses, judge exclusions, replayed replies and waits lie behind the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


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
        for scorer, error in ((groups.get(key) or {}).get("aggregate_errors") or {}).items():
            parts.append(f"{scorer} not aggregated ({error})")
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
