"""Shared drawing helpers of the report's figures: styles that tell cells apart, dot plots of
binned accuracy with n and intervals, saving.

Every grid cell gets its own colour, marker and line style (:func:`styles`), so cells whose
values coincide stay distinguishable; points of several cells at the same position are dodged
(shifted a little apart) rather than drawn on top of each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")


@dataclass(frozen=True)
class Style:
    color: Any
    marker: str
    linestyle: str


def styles(n: int) -> list[Style]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [
        Style(cmap(i % 10), MARKERS[i % len(MARKERS)], LINESTYLES[i % len(LINESTYLES)])
        for i in range(n)
    ]


def figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return path


def dodge(index: int, count: int, width: float = 0.6) -> float:
    """Offset of the ``index``-th of ``count`` series around a shared position."""
    if count <= 1:
        return 0.0
    return (index - (count - 1) / 2) * (width / count)


def n_label(ns: Sequence[int]) -> str:
    """``n=5`` when every cell has the same n in a bin, else ``n=3–5``."""
    low, high = min(ns), max(ns)
    return f"n={low}" if low == high else f"n={low}–{high}"


def dot_panel(ax: Any, cells: Mapping[str, Sequence[Any]], title: str, style: list[Style]) -> None:
    """Accuracy per bin (rows) for each cell (dodged points with interval bars).

    ``cells`` maps a cell label to its bins: objects with ``label``, ``n``, ``accuracy``,
    ``low`` and ``high``. Each row is labelled with its bin and n.
    """
    labels: list[str] = []
    for bins in cells.values():
        labels += [b.label for b in bins if b.label not in labels and b.n]
    for j, (name, bins) in enumerate(cells.items()):
        lookup = {b.label: b for b in bins if b.n and b.accuracy is not None}
        rows = [i for i, label in enumerate(labels) if label in lookup]
        if not rows:
            continue
        found = [lookup[labels[i]] for i in rows]
        xs = [b.accuracy for b in found]
        xerr = [
            [max(0.0, b.accuracy - (b.low if b.low is not None else b.accuracy)) for b in found],
            [max(0.0, (b.high if b.high is not None else b.accuracy) - b.accuracy) for b in found],
        ]
        ys = [i + dodge(j, len(cells)) for i in rows]
        s = style[j]
        ax.errorbar(
            xs,
            ys,
            xerr=xerr,
            fmt=s.marker,
            color=s.color,
            capsize=2,
            markersize=5,
            elinewidth=1,
            label=name,
        )
    ticks = []
    for label in labels:
        ns = [b.n for bins in cells.values() for b in bins if b.label == label and b.n]
        ticks.append(f"{label} ({n_label(ns)})")
    ax.set_yticks(range(len(labels)), ticks, fontsize=7)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlim(-0.03, 1.03)
    ax.set_xlabel("accuracy (95% interval)", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
