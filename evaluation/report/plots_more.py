"""The figures a paper's results section needs beyond the stage plots.

* ``cost_latency.png`` (and ``.svg``) — each grid cell's accuracy (with its 95% bootstrap
  interval) against its cost per question (USD; tokens per question when every cell cost
  nothing, as local models do) and against its latency per question (model seconds, or wall
  seconds where the calls were not timed); each point labelled where no other label or point
  is (:func:`scanrag.evaluation.report.plotkit.place_labels`, leader lines for labels set apart);
* ``breakdowns.png`` — accuracy per document type, evidence source, answer format and number
  of evidence pages (:mod:`scanrag.evaluation.report.breakdown`), each bin with its n and a 95%
  Wilson interval; a dimension the samples do not carry is left out.

Each function returns the file written, or ``None`` when there is nothing to plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanrag.evaluation.report import plotkit
from scanrag.evaluation.report.breakdown import DIMENSIONS, breakdowns
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.measures import GroupCost, group_cost


def _axis(costs: Sequence[GroupCost], options: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The first ``(attribute, axis label)`` every cell has a positive value for (else the
    first with values at all)."""
    for attr, label in options:
        values = [getattr(c, attr) for c in costs]
        if all(v is not None for v in values) and any(v > 0 for v in values):
            return attr, label
    return options[-1]


COST_AXES = (("usd_per_q", "USD per question"), ("tokens_per_q", "tokens per question"))
TIME_AXES = (
    ("model_seconds_per_q", "model seconds per question"),
    ("seconds_per_q", "wall seconds per question"),
)


def plot_cost_latency(groups: Sequence[Group], metric: str | None, path: Path) -> Path | None:
    """Accuracy against cost and latency per cell; a cell without a value (every item it
    judged failed) is an ✕ at 0 labelled "no judged items", never left out."""
    points = [(g, m, group_cost(g)) for g in groups if metric and (m := g.metric(metric))]
    points = [(g, m, c) for g, m, c in points if c.items]
    if not points or metric is None:
        return None
    from matplotlib.ticker import MaxNLocator

    fig = plotkit.figure(12, 4.8)
    axes = fig.subplots(1, 2)
    style = plotkit.styles(len(points))
    costs = [c for _, _, c in points]
    for ax, options in zip(axes, (COST_AXES, TIME_AXES), strict=True):
        attr, label = _axis(costs, options)
        for j, (group, summary, cost) in enumerate(points):
            _point(ax, float(getattr(cost, attr) or 0.0), summary, style[j], group.label)
        largest = max(float(getattr(c, attr) or 0.0) for c in costs)
        ax.set_xlabel(label)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useMathText=True)
        ax.set_ylabel(f"{metric} (95% interval)")
        ax.set_ylim(-0.03, 1.05)
        ax.set_xlim(0, largest * 1.3 if largest > 0 else 1.0)
        ax.grid(alpha=0.3)
    axes[0].set_title("Accuracy vs cost")
    axes[1].set_title("Accuracy vs latency")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)), fontsize=8)
    plotkit.freeze_layout(fig)  # the final layout, which label placement measures against
    texts = [g.label + _note(m) for g, m, _ in points]
    colors = [s.color for s in style]
    for tag, ax, options in zip(("cost", "latency"), axes, (COST_AXES, TIME_AXES), strict=True):
        attr, _ = _axis(costs, options)
        xy = [(float(getattr(c, attr) or 0.0), float(m.value or 0.0)) for _, m, c in points]
        plotkit.place_labels(ax, xy, texts, colors, tag=tag)
    return plotkit.save(fig, path)


def _point(ax: Any, x: float, summary: Any, style: plotkit.Style, label: str) -> None:
    """One cell: its value with the interval, or an ✕ at 0 when it has no value."""
    if summary.value is None:
        ax.plot([x], [0.0], "x", color=style.color, markersize=9, label=label)
        return
    low = summary.value - summary.low if summary.low is not None else 0.0
    high = summary.high - summary.value if summary.high is not None else 0.0
    ax.errorbar(
        [x],
        [summary.value],
        yerr=[[low], [high]],
        fmt=style.marker,
        color=style.color,
        capsize=3,
        markersize=7,
        label=label,
    )


def _note(summary: Any) -> str:
    if summary.value is None:
        return f" ({plotkit.NO_JUDGED})"
    return f" ({summary.errors} err)" if summary.errors else ""


def plot_breakdowns(groups: Sequence[Group], path: Path) -> Path | None:
    data = breakdowns(groups)
    if not data:
        return None
    columns = 2 if len(data) > 1 else 1
    grid_rows = (len(data) + columns - 1) // columns
    bins = [len({b.label for bins in cells.values() for b in bins}) for cells in data.values()]
    height = 1.2 + sum(
        1.1 + 0.3 * max(bins[r * columns : (r + 1) * columns]) for r in range(grid_rows)
    )
    fig = plotkit.figure(12, height)
    axes = fig.subplots(grid_rows, columns, squeeze=False).ravel()
    style = plotkit.styles(len(groups))
    order = {g.label: i for i, g in enumerate(groups)}
    for ax, (name, cells) in zip(axes, data.items(), strict=False):
        ordered = dict(sorted(cells.items(), key=lambda kv: order[kv[0]]))
        used = [style[order[label]] for label in ordered]
        plotkit.dot_panel(ax, ordered, f"by {DIMENSIONS[name][0]}", used)
    for ax in axes[len(data) :]:
        ax.set_visible(False)
    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes[: len(data)]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)), fontsize=8)
    fig.suptitle("Answer accuracy by item type (errors count as wrong; bins with n)")
    return plotkit.save(fig, path)
