"""``build_report``: the comparison table, plots, index page and trajectory viewer of runs.

Output folder layout::

    index.html            overview: runs, comparison table, plots, question list
    comparison.md/.csv/.json
    plots/*.png           layout, funnel, recall@k, oracle ablation (when there is data)
    q/q0001.html ...      one viewer page per question
    img/*.png             page images and overlays referenced by the viewer pages

Everything written passes through the run scrubber, so values of secret-looking environment
variables and key-shaped strings never reach the report.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evaluation.report.data import Group, RunData, all_groups, find_group, load_runs, samples_of
from evaluation.report.html import esc, img, page, short, table, verdict
from evaluation.report.table import (
    COST_COLUMNS,
    ComparisonTable,
    MetricCell,
    build_table,
    cost_text,
    fmt,
    legend,
    to_csv,
    to_markdown,
)

MARKER = ".scanrag-report"
OWNED = ("img", "q", "plots")


class ReportOptions(BaseModel):
    """Knobs of :func:`build_report`."""

    n_resamples: int = Field(default=1000, ge=0, description="Paired bootstrap resamples.")
    seed: int = 0
    max_questions: int | None = Field(default=200, ge=0, description="Viewer pages (None: all).")
    max_pages: int = Field(default=4, ge=0, description="Page images per cell and question.")
    dpi: int = Field(default=96, gt=0, description="Render resolution of page images.")


class _Writer:
    def __init__(self, out_dir: Path) -> None:
        from scanrag.scrub import scrub_text

        self.out_dir = out_dir
        self.scrub = scrub_text

    def __call__(self, name: str, text: str) -> Path:
        from scanrag.rundir import write_atomic

        path = self.out_dir / name
        write_atomic(path, self.scrub(text))
        return path


def _prepare(out_dir: Path) -> None:
    """Create ``out_dir``; clear the sub-folders an earlier report (and only one) wrote."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if (out_dir / MARKER).is_file():
        for name in OWNED:
            shutil.rmtree(out_dir / name, ignore_errors=True)
    (out_dir / MARKER).write_text("written by scanrag report\n", encoding="utf-8")


# --------------------------------------------------------------------------- index sections


def _runs_section(runs: Sequence[RunData]) -> str:
    rows = []
    for run in runs:
        counts = run.summary.get("counts") or {}
        models = (run.manifest.get("models") or {}).get("agents")
        rows.append(
            [
                esc(run.name),
                esc(run.path),
                esc(run.summary.get("complete", "unknown")),
                esc(counts.get("trajectories", sum(len(g.trajectories) for g in run.groups))),
                esc(len(run.samples)),
                esc(", ".join(models) if isinstance(models, list) else models),
                esc(run.summary.get("stop_reason")),
            ]
        )
    headers = ["run", "folder", "complete", "trajectories", "samples", "agent models", "stopped"]
    return "<h2>Runs</h2>" + table(headers, rows, table_id="runs")


def _metric_html(cell: MetricCell | None) -> str:
    """Value, its interval on a second line, the significance marker, a tooltip with Δ and p."""
    if cell is None or cell.value is None:
        return '<span class="na">—</span>'
    interval = ""
    if cell.low is not None and cell.high is not None:
        interval = f'<br><span class="ci">[{fmt(cell.low)}, {fmt(cell.high)}]</span>'
    marker = f' <span class="sig">{esc(cell.marker)}</span>' if cell.marker else ""
    test = cell.vs_baseline
    title = ""
    if test is not None and test.diff is not None:
        p = "—" if test.p_value is None else f"{test.p_value:.4f}"
        text = f"vs baseline: Δ={test.diff:+.3f} [{fmt(test.low)}, {fmt(test.high)}], p={p}"
        title = f' title="{esc(text)}, n={test.n}"'
    return f'<span class="num"{title}><b>{fmt(cell.value)}</b>{marker}{interval}</span>'


def _comparison_section(data: ComparisonTable) -> str:
    titles = [data.labels.get(m, m) for m in data.metrics]
    headers = ["grid cell", "strategy", *titles, *(label for _, label, _ in COST_COLUMNS)]
    rows = []
    for row in data.rows:
        cells = [esc(row.label), esc(row.strategy)]
        cells += [_metric_html(row.metrics.get(m)) for m in data.metrics]
        cells += [
            f'<span class="num">{esc(cost_text(row.cost, a, d))}</span>' for a, _, d in COST_COLUMNS
        ]
        rows.append(cells)
    classes = ["baseline" if r.is_baseline else "" for r in data.rows]
    links = (
        '<p class="muted">Also as <a href="comparison.md">Markdown</a>, '
        '<a href="comparison.csv">CSV</a>, <a href="comparison.json">JSON</a>.</p>'
    )
    note = esc(legend(data).replace("**", ""))
    return (
        '<h2>Comparison</h2><div class="scroll">'
        + table(headers, rows, table_id="comparison", row_classes=classes, breakable=True)
        + "</div>"
        + f'<p class="muted">{note}</p>'
        + links
    )


PLOT_TITLES = {
    "layout": "Accuracy by evidence-layout factor",
    "funnel": "Stage funnel",
    "recall_at_k": "Retrieval recall@k",
    "oracle_ablation": "Oracle ablation",
}
PLOT_MISSING = {
    "layout": "no answerable item with gold pages was scored for correctness",
    "funnel": "no stage scores (pages, regions, facts, answer) for answerable items",
    "recall_at_k": "no retrieve steps in the trajectories and no retrieval.json",
    "oracle_ablation": "no oracle strategy (oracle_pages/regions/facts) with an accuracy",
}


def _plots_section(plots: dict[str, Path | None], out_dir: Path) -> str:
    parts = ["<h2>Plots</h2>", '<div class="plots">']
    for name, title in PLOT_TITLES.items():
        path = plots.get(name)
        if path is None:
            parts.append(
                f'<p class="muted">{esc(title)}: not drawn ({esc(PLOT_MISSING[name])}).</p>'
            )
            continue
        rel = path.relative_to(out_dir).as_posix()
        parts.append(f"<figure><figcaption>{esc(title)}</figcaption>{img(rel, title)}</figure>")
    return "".join(parts) + "</div>"


def _questions_section(
    samples: Sequence[Any], pages: dict[str, str], groups: Sequence[Group], correct: Any
) -> str:
    headers = ["#", "id", "task", "question", "gold answer", *(g.label for g in groups)]
    rows = []
    for i, sample in enumerate(samples, start=1):
        link = pages.get(sample.id)
        ident = f'<a href="{esc(link)}">{esc(sample.id)}</a>' if link else esc(sample.id)
        cells = [esc(i), ident, esc(sample.task), esc(short(sample.question, 140))]
        cells.append(esc(short(sample.answer, 60)) + ("" if sample.answerable else " ∅"))
        for group in groups:
            if sample.id not in group.trajectories:
                cells.append('<span class="na">—</span>')
            else:
                cells.append(verdict(correct[group.label].get(sample.id)))
        rows.append(cells)
    shown = sum(1 for s in samples if s.id in pages)
    note = f'<p class="muted">{shown} of {len(samples)} questions have a viewer page.</p>'
    return "<h2>Questions</h2>" + note + table(headers, rows, table_id="questions")


def _warnings(runs: Sequence[RunData], extra: Sequence[str]) -> str:
    items = [f"{run.name}: {w}" for run in runs for w in run.warnings] + list(extra)
    if not items:
        return ""
    shown = "".join(f"<li>{esc(short(w, 400))}</li>" for w in items[:30])
    more = f"<li>… and {len(items) - 30} more</li>" if len(items) > 30 else ""
    return f'<div class="warn"><b>Warnings</b><ul>{shown}{more}</ul></div>'


# --------------------------------------------------------------------------- main


def _plots(
    groups: list[Group], runs: list[RunData], baseline: Group, out_dir: Path
) -> dict[str, Path | None]:
    from evaluation.report import plots
    from evaluation.report.measures import accuracy_metric

    folder = out_dir / "plots"
    return {
        "layout": plots.plot_layout(groups, folder / "layout.png"),
        "funnel": plots.plot_funnel(groups, folder / "funnel.png"),
        "recall_at_k": plots.plot_recall(groups, runs, folder / "recall_at_k.png"),
        "oracle_ablation": plots.plot_oracle(
            groups, baseline, accuracy_metric(groups), folder / "oracle_ablation.png"
        ),
    }


def build_report(
    run_dirs: Sequence[str | Path],
    out_dir: str | Path,
    *,
    baseline: str | None = None,
    options: ReportOptions | None = None,
) -> Path:
    """Write the report of ``run_dirs`` into ``out_dir``; returns the path of ``index.html``.

    ``baseline`` names the grid cell (label, run key or strategy) significance is tested
    against; by default the first cell. Raises :class:`~evaluation.report.data.ReportError` for
    a run folder that cannot be read.
    """
    from evaluation.report.images import PageImages
    from evaluation.report.measures import correctness
    from evaluation.report.viewer import question_body

    options = options or ReportOptions()
    if not run_dirs:
        raise ValueError("build_report needs at least one run directory")
    runs = load_runs([Path(p) for p in run_dirs])
    groups = all_groups(runs)
    base = find_group(groups, baseline) if baseline else groups[0]
    out = Path(out_dir)
    _prepare(out)
    write = _Writer(out)

    comparison = build_table(groups, base, n_resamples=options.n_resamples, seed=options.seed)
    write("comparison.md", to_markdown(comparison))
    write("comparison.csv", to_csv(comparison))
    write("comparison.json", comparison.model_dump_json(indent=2))
    plot_files = _plots(groups, runs, base, out)

    correct = {g.label: correctness(g) for g in groups}
    samples = [s for _, s in sorted(samples_of(runs).items())]
    limit = len(samples) if options.max_questions is None else options.max_questions
    pages: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="scanrag-report-") as tmp:
        images = PageImages(out, Path(tmp), options.dpi)
        for index, sample in enumerate(samples[:limit], start=1):
            name = f"q{index:04d}"
            body = question_body(sample, groups, correct, images, name, options.max_pages)
            nav = '<nav><a href="../index.html">← report index</a></nav>'
            write(f"q/{name}.html", page(f"{sample.id} — ScanRAG report", body, nav=nav))
            pages[sample.id] = f"q/{name}.html"
        errors = images.errors

    body = (
        "<h1>ScanRAG report</h1>"
        + _warnings(runs, [f"page image: {e}" for e in errors])
        + _runs_section(runs)
        + _comparison_section(comparison)
        + _plots_section(plot_files, out)
        + _questions_section(samples, pages, groups, correct)
    )
    return write("index.html", page("ScanRAG report", body))
