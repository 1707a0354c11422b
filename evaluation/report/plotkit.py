"""Shared drawing helpers of the report's figures: styles that tell cells apart, dot plots of
binned accuracy with n and intervals, saving.

Every grid cell gets its own color, marker and line style (:func:`styles`), so cells whose
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
NO_JUDGED = "no judged items"  # the mark of a cell drawn without a value (never left out)


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
    """A figure with an Agg canvas (so text can be measured before saving)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Any, path: Path) -> Path:
    """``path`` (PNG) and the same figure as SVG beside it, its text kept as text (the report
    shows the SVG; labels are elements a browser can measure)."""
    from matplotlib import rc_context

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "scanrag"}):
        fig.savefig(path.with_suffix(".svg"), metadata={"Date": None})
    return path


def freeze_layout(fig: Any) -> None:
    """Lay the figure out now and keep that layout when it is saved, so what is placed by
    measuring (labels) stays where it was measured."""
    fig.draw_without_rendering()
    fig.set_layout_engine("none")


LABEL_PREFIX = "point-label"
"""SVG ids of point labels: ``point-label-<axes>-<n>``."""

# Where a label may go around its point, in points: nearest first, then rings further out
# (those get a leader line back to the point).
_NEAR = ((6, 4, "left", "bottom"), (6, -4, "left", "top"), (-6, 4, "right", "bottom"),
         (-6, -4, "right", "top"))  # fmt: skip
_ANGLES = (0, 35, -35, 70, -70, 110, -110, 145, -145, 180, 90, -90)
_RINGS = (18, 30, 44, 60, 80)


def _candidates() -> list[tuple[float, float, str, str, bool]]:
    import math

    out: list[tuple[float, float, str, str, bool]] = [
        (dx, dy, ha, va, False) for dx, dy, ha, va in _NEAR
    ]
    for radius in _RINGS:
        for angle in _ANGLES:
            dx = radius * math.cos(math.radians(angle))
            dy = radius * math.sin(math.radians(angle))
            ha = "left" if dx > 1 else "right" if dx < -1 else "center"
            va = "bottom" if dy > 1 else "top" if dy < -1 else "center"
            out.append((dx, dy, ha, va, True))
    return out


def _overlap(a: Any, b: Any) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, width) * max(0.0, height)


def place_labels(
    ax: Any, points: Sequence[tuple[float, float]], texts: Sequence[str], colors: Sequence[Any],
    *, tag: str, fontsize: float = 7,
) -> list[Any]:  # fmt: skip
    """Label each point without overprinting: each label takes the first place around its
    point (nearest first, then further out with a leader line) where it overlaps no label
    placed before, no point and stays inside the axes; failing that, the place that overlaps
    least. The figure's layout must be final and fixed (:func:`freeze_layout` first). Each
    label's SVG id is ``point-label-<tag>-<i>``."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pad = 2.0
    taken = []
    for x, y in points:  # the markers themselves (7 points wide)
        px, py = ax.transData.transform((x, y))
        size = 3.5 * fig.dpi / 72
        taken.append(Bbox.from_extents(px - size, py - size, px + size, py + size))
    order = sorted(range(len(points)), key=lambda i: (-points[i][1], points[i][0]))
    placed: list[Any] = [None] * len(points)
    for i in order:
        best: tuple[float, Any, Any] | None = None
        for dx, dy, ha, va, far in _candidates():
            arrow = dict(arrowstyle="-", color=colors[i], lw=0.6, shrinkA=0, shrinkB=4)
            label = ax.annotate(
                texts[i], points[i], xytext=(dx, dy), textcoords="offset points", ha=ha,
                va=va, fontsize=fontsize, color=colors[i], arrowprops=arrow if far else None,
                annotation_clip=False,
            )  # fmt: skip
            label.update_positions(renderer)
            box = Text.get_window_extent(label, renderer).padded(pad)  # the text, no leader
            outside = box.width * box.height - _overlap(box, frame)
            cost = outside * 4 + sum(_overlap(box, other) for other in taken)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, label, box)
            else:
                label.remove()
            if cost == 0:
                break
        assert best is not None
        best[1].set_gid(f"{LABEL_PREFIX}-{tag}-{i}")
        taken.append(best[2])
        placed[i] = best[1]
    return placed


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
