"""The report's matplotlib figures (PNG files, Agg rendering through ``Figure`` objects).

* ``layout.png`` — answer accuracy per bin of each evidence-layout factor (the layout
  scorer's ``bins`` table when the run has it, else the same bins computed here from the gold
  pages with the layout scorer's functions), one point per cell with its 95% Wilson interval
  and each bin labelled with its n: a one-item bin shows as a wide interval, never as a line
  from 0 to 1;
* ``funnel.png`` — the stage funnel over answerable items with gold pages: the share whose
  gold pages were all found, then also every gold region covered, every gold fact consistent,
  and the answer correct. A stage with no score rows for a group is left out of its bars; an
  item a stage does not apply to (no gold regions) passes through it;
* ``recall_at_k.png`` — macro recall@k of each group's retrieval (the ``retrieval`` scorer's
  curve, or its ``retrieve`` steps, hits in rank order, later steps appended) against the gold
  pages, plus any retriever evaluation stored in the run folder as ``retrieval.json``
  (dashed); integer k ticks, and each cell its own marker and line style, points dodged
  sideways, so coinciding curves stay visible;
* ``oracle_ablation.png`` — accuracy of the standard strategies next to oracle pages →
  + oracle regions → + oracle facts, with 95% intervals.

:mod:`scanrag.evaluation.report.plots_more` draws accuracy against cost and latency and the
breakdowns by document type, evidence source, answer format and evidence-page count. Each
function returns the file written, or ``None`` when the runs hold nothing to plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanrag.evaluation.report import plotkit
from scanrag.evaluation.report.breakdown import Bin, wilson
from scanrag.evaluation.report.data import Group, RunData
from scanrag.evaluation.report.measures import correctness, row_group

ORACLES = ("oracle_pages", "oracle_regions", "oracle_facts")
MAX_K = 20


def _figure(width: float, height: float) -> Any:
    return plotkit.figure(width, height)


def _colors(n: int) -> list[Any]:
    return [style.color for style in plotkit.styles(n)]


def _save(fig: Any, path: Path) -> Path:
    return plotkit.save(fig, path)


def _answerable(group: Group) -> list[str]:
    samples = group.run.samples
    return [
        sid
        for sid in sorted(group.trajectories)
        if sid in samples and samples[sid].answerable and samples[sid].gold_pages
    ]


# --------------------------------------------------------------------------- layout


def layout_bins(group: Group) -> dict[str, dict[str, dict[str, Any]]]:
    """``{factor: {bin: {n, answered, correct, accuracy}}}`` for one group."""
    stored = group.table("layout.bins")
    if isinstance(stored, dict) and stored:
        return stored
    from scanrag.evaluation.docscope.layout import BINS, FACTORS, bin_label, layout_factors

    correct = correctness(group)
    bins: dict[str, dict[str, dict[str, Any]]] = {
        f: {label: {"n": 0, "answered": 0, "correct": 0} for _, label in BINS[f]} for f in FACTORS
    }
    for sid in _answerable(group):
        sample = group.run.samples[sid]
        pages = sample.metadata.get("num_pages")
        factors = layout_factors(sample.gold_pages, pages if isinstance(pages, int) else None)
        for factor, value in factors.items():
            if value is None:
                continue
            cell = bins[factor][bin_label(factor, value)]
            cell["n"] += 1
            if sid in correct:
                cell["answered"] += 1
                cell["correct"] += int(correct[sid])
    for table in bins.values():
        for cell in table.values():
            cell["accuracy"] = cell["correct"] / cell["answered"] if cell["answered"] else None
    return bins


def layout_cells(groups: Sequence[Group]) -> dict[str, dict[str, list[Bin]]]:
    """``{factor: {cell label: bins}}`` with n = items scored for correctness, and intervals."""
    data = {g.label: layout_bins(g) for g in groups}
    out: dict[str, dict[str, list[Bin]]] = {}
    for factor in ("count", "span", "max_gap", "mean_pairwise", "clusters", "position"):
        cells: dict[str, list[Bin]] = {}
        for label, bins in data.items():
            cells[label] = []
            for name, cell in (bins.get(factor) or {}).items():
                n, k = int(cell.get("answered") or 0), int(cell.get("correct") or 0)
                low, high = wilson(k, n)
                accuracy = k / n if n else None
                cells[label].append(
                    Bin(label=name, n=n, correct=k, accuracy=accuracy, low=low, high=high)
                )
        if any(b.n for bins in cells.values() for b in bins):
            out[factor] = cells
    return out


def plot_layout(groups: Sequence[Group], path: Path) -> Path | None:
    data = layout_cells(groups)
    if not data:
        return None
    fig = _figure(12, 7)
    axes = fig.subplots(2, 3, squeeze=False).ravel()
    style = plotkit.styles(len(groups))
    for ax, (factor, cells) in zip(axes, data.items(), strict=False):
        plotkit.dot_panel(ax, cells, factor.replace("_", " "), style)
    for ax in axes[len(data) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)), fontsize=8)
    fig.suptitle("Answer accuracy by evidence-layout factor of the gold pages (bins with n)")
    return _save(fig, path)


# --------------------------------------------------------------------------- funnel


def funnel(group: Group) -> list[tuple[str, float]]:
    """``[(stage, share of items still passing)]`` for the stages this group was scored on."""
    from scanrag.evaluation.docscope.completeness import (
        fact_check,
        geometric_check,
        page_check,
        region_check,
    )

    items = _answerable(group)
    if not items:
        return []
    rg = row_group(group)
    correct = correctness(group)
    region_rows = rg.rows("region")
    use_judge = any(region_check(r) is not None for r in region_rows.values())
    stages: list[tuple[str, dict[str, bool | None]]] = [
        ("pages", {s: page_check(rg.rows("pages").get(s)) for s in items}),
        (
            "regions" if use_judge else "regions (geometric)",
            {
                s: region_check(region_rows.get(s))
                if use_judge
                else geometric_check(rg.rows("region_geometry").get(s))
                for s in items
            },
        ),
        ("facts", {s: fact_check(rg.rows("fact").get(s)) for s in items}),
        ("answer", {s: correct.get(s) for s in items}),
    ]
    alive = set(items)
    out: list[tuple[str, float]] = []
    for name, checks in stages:
        if all(v is None for v in checks.values()):
            continue
        alive = {s for s in alive if checks[s] is not False}
        out.append((name, len(alive) / len(items)))
    return out


def plot_funnel(groups: Sequence[Group], path: Path) -> Path | None:
    data = {g.label: funnel(g) for g in groups}
    data = {k: v for k, v in data.items() if v}
    if not data:
        return None
    stages: list[str] = []
    for values in data.values():
        stages += [s for s, _ in values if s not in stages]
    fig = _figure(max(6, 1.6 * len(stages) + 0.4 * len(data)), 4.5)
    ax = fig.subplots()
    width = 0.8 / len(data)
    for i, (color, (name, values)) in enumerate(zip(_colors(len(data)), data.items(), strict=True)):
        lookup = dict(values)
        xs = [j + i * width for j, s in enumerate(stages) if s in lookup]
        ys = [lookup[s] for s in stages if s in lookup]
        ax.bar(xs, ys, width=width, color=color, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(stages))], stages)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of answerable items still passing")
    ax.set_title("Stage funnel: page → region → fact → answer")
    ax.legend(fontsize=7)
    return _save(fig, path)


# --------------------------------------------------------------------------- recall@k


def rankings(group: Group) -> dict[str, list[int]]:
    """Pages each trajectory retrieved, in rank order, from its ``retrieve`` steps."""
    from scanrag.evaluation.retrieval.scorer import ranked_pages

    out: dict[str, list[int]] = {}
    for sid, traj in group.trajectories.items():
        ranked = ranked_pages(traj)
        if ranked is not None:
            out[sid] = ranked
    return out


def recall_curve(group: Group) -> dict[int, float]:
    """Macro recall@k for k = 1..(longest ranking, at most 20): the ``retrieval`` scorer's
    curve when the run has it, else computed from the retrieve steps; empty without retrieval."""
    stored = group.table("retrieval.curve")
    if isinstance(stored, dict) and stored:
        return {int(k): float(v) for k, v in sorted(stored.items(), key=lambda kv: int(kv[0]))}
    from scanrag.evaluation.retrieval.metrics import evaluate_retrieval

    ranked = rankings(group)
    items = [s for s in _answerable(group) if s in ranked]
    if not items:
        return {}
    longest = max((len(ranked[s]) for s in items), default=0)
    ks = list(range(1, min(MAX_K, max(1, longest)) + 1))
    runs = [(s, ranked[s], group.run.samples[s].gold_pages) for s in items]
    report = evaluate_retrieval(runs, ks)
    return {k: report.macro[f"recall@{k}"] for k in ks}


def stored_retrieval(run: RunData) -> dict[str, dict[int, float]]:
    """Curves from ``retrieval.json`` (``scanrag retrieve eval --json`` output), if present."""
    from scanrag.rundir import RunDir, RunDirError, read_json

    try:
        data = read_json(RunDir(run.path).file(RunDir.RETRIEVAL))
    except RunDirError:
        run.warnings.append(f"{RunDir.RETRIEVAL} is not readable JSON; ignored")
        return {}
    if data is None:
        return {}
    out: dict[str, dict[int, float]] = {}
    for name, entry in (data.get("retrievers") or {}).items():
        macro = entry.get("macro") if isinstance(entry, dict) else None
        curve = {
            int(k.split("@")[1]): float(v)
            for k, v in (macro or {}).items()
            if k.startswith("recall@") and k.split("@")[1].isdigit()
        }
        if curve:
            out[f"{run.name}: {name} (retrieval eval)"] = dict(sorted(curve.items()))
    return out


def plot_recall(groups: Sequence[Group], runs: Sequence[RunData], path: Path) -> Path | None:
    curves = {g.label: c for g in groups if (c := recall_curve(g))}
    stored: dict[str, dict[int, float]] = {}
    for run in runs:
        stored.update(stored_retrieval(run))
    if not curves and not stored:
        return None
    return _save(recall_figure(curves, stored), path)


def recall_figure(curves: dict[str, dict[int, float]], stored: dict[str, dict[int, float]]) -> Any:
    """The recall@k figure: one line per curve (``stored`` ones dashed), integer k ticks."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(7, 4.5)
    ax = fig.subplots()
    every = {**curves, **stored}
    style = plotkit.styles(len(every))
    for j, (name, curve) in enumerate(every.items()):
        s = style[j]
        xs = [k + plotkit.dodge(j, len(every), 0.3) for k in curve]
        dashed = name in stored and name not in curves
        ax.plot(
            xs,
            list(curve.values()),
            marker=s.marker,
            color=s.color,
            markersize=5,
            linestyle="--" if dashed else s.linestyle,
            label=name,
            alpha=0.9,
        )
    longest = max(max(c) for c in every.values())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlim(0.5, longest + 0.5)
    ax.set_xlabel("k (retrieved pages; points of several cells dodged sideways)")
    ax.set_ylabel("macro recall@k")
    ax.set_ylim(0, 1.05)
    ax.set_title("Retrieval recall@k against the gold pages")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


# --------------------------------------------------------------------------- oracle ablation


def ablation_groups(groups: Sequence[Group], baseline: Group | None) -> list[Group]:
    """Standard groups (the baseline alone when it is one), then the oracles in order."""
    oracles = [g for name in ORACLES for g in groups if g.strategy == name]
    if not oracles:
        return []
    if baseline is not None and baseline.strategy not in ORACLES:
        standard = [baseline]
    else:
        standard = [g for g in groups if g.strategy not in ORACLES]
    return standard + oracles


def oracle_missing(groups: Sequence[Group], baseline: Group | None, metric: str | None) -> str:
    """Why the oracle ablation is not drawn, naming the oracle cells that ran: none ran, no
    cell has an accuracy metric, or the oracle cells have no value of it."""
    ran = [g.label for g in ablation_groups(groups, baseline) if g.strategy in ORACLES]
    if not ran:
        return "no oracle strategy (oracle_pages/regions/facts) ran"
    if metric is None:
        return f"{', '.join(ran)} ran, but no cell has an accuracy metric"
    return f"{', '.join(ran)} ran, but has no {metric} value (no item of it was scored for it)"


def plot_oracle(
    groups: Sequence[Group], baseline: Group | None, metric: str | None, path: Path
) -> Path | None:
    chosen = ablation_groups(groups, baseline)
    if not chosen or metric is None:
        return None
    values = [(g, g.metric(metric)) for g in chosen]
    values = [(g, m) for g, m in values if m is not None and m.value is not None]
    if not any(g.strategy in ORACLES for g, _ in values):
        return None
    fig = _figure(max(6, 1.1 * len(values)), 4.5)
    ax = fig.subplots()
    xs = list(range(len(values)))
    heights = [m.value for _, m in values]
    low = [m.value - m.low if m.low is not None else 0 for _, m in values]
    high = [m.high - m.value if m.high is not None else 0 for _, m in values]
    shades = {"oracle_pages": "#6baed6", "oracle_regions": "#3182bd", "oracle_facts": "#08519c"}
    colors = [shades.get(g.strategy, "#969696") for g, _ in values]
    ax.bar(xs, heights, color=colors, yerr=[low, high], capsize=4)
    ax.set_xticks(xs, [g.label for g, _ in values], rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(metric)
    ax.set_title("Oracle ablation: standard → oracle pages → + regions → + facts")
    return _save(fig, path)
