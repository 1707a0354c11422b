"""``build_report``: the comparison table, plots, index page and trajectory viewer of runs.

Output folder layout::

    index.html            overview: runs, comparison table, plots, question list
    comparison.md/.csv/.json
    items_long.csv        every item × grid cell × metric (scanrag.evaluation.report.export)
    plots/*.png           cost/latency, breakdowns, layout, funnel, recall@k, oracle ablation
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

from pydantic import BaseModel, Field

from scanrag.evaluation.report.data import (
    Group,
    RunData,
    all_groups,
    default_baseline,
    find_group,
    load_runs,
    samples_of,
)
from scanrag.evaluation.report.html import esc, page, short
from scanrag.evaluation.report.table import build_table, to_csv, to_markdown

MARKER = ".scanrag-report"
LONG_CSV = "items_long.csv"
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


# --------------------------------------------------------------------------- index


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
) -> tuple[dict[str, Path | None], dict[str, str]]:
    """The plots drawn (``None``: not drawn) and, where it depends on the runs, why not."""
    from scanrag.evaluation.report import plots, plots_more
    from scanrag.evaluation.report.measures import accuracy_metric

    folder = out_dir / "plots"
    accuracy = accuracy_metric(groups)
    reasons = {"oracle_ablation": plots.oracle_missing(groups, baseline, accuracy)}
    return {
        "cost_latency": plots_more.plot_cost_latency(groups, accuracy, folder / "cost_latency.png"),
        "breakdowns": plots_more.plot_breakdowns(groups, folder / "breakdowns.png"),
        "layout": plots.plot_layout(groups, folder / "layout.png"),
        "funnel": plots.plot_funnel(groups, folder / "funnel.png"),
        "recall_at_k": plots.plot_recall(groups, runs, folder / "recall_at_k.png"),
        "oracle_ablation": plots.plot_oracle(
            groups, baseline, accuracy, folder / "oracle_ablation.png"
        ),
    }, reasons


def build_report(
    run_dirs: Sequence[str | Path],
    out_dir: str | Path,
    *,
    baseline: str | None = None,
    options: ReportOptions | None = None,
) -> Path:
    """Write the report of ``run_dirs`` into ``out_dir``; returns the path of ``index.html``.

    ``baseline`` names the grid cell (label, run key or strategy) significance is tested
    against; by default the config's first cell (not the alphabetically first). Raises
    :class:`~scanrag.evaluation.report.data.ReportError` for a run folder that cannot be read.
    """
    from scanrag.evaluation.report.config_diff import config_diff_section
    from scanrag.evaluation.report.export import long_csv
    from scanrag.evaluation.report.images import PageImages
    from scanrag.evaluation.report.index import (
        QUESTIONS_JS,
        comparison_section,
        plots_section,
        questions_section,
        runs_section,
    )
    from scanrag.evaluation.report.measures import outcomes
    from scanrag.evaluation.report.viewer import question_body

    options = options or ReportOptions()
    if not run_dirs:
        raise ValueError("build_report needs at least one run directory")
    runs = load_runs([Path(p) for p in run_dirs])
    groups = all_groups(runs)
    base = find_group(groups, baseline) if baseline else default_baseline(groups)
    out = Path(out_dir)
    _prepare(out)
    write = _Writer(out)

    comparison = build_table(groups, base, n_resamples=options.n_resamples, seed=options.seed)
    write("comparison.md", to_markdown(comparison))
    write("comparison.csv", to_csv(comparison))
    write("comparison.json", comparison.model_dump_json(indent=2))
    write(LONG_CSV, long_csv(groups))
    plot_files, not_drawn = _plots(groups, runs, base, out)

    by_item = {g.label: outcomes(g) for g in groups}
    samples = [s for _, s in sorted(samples_of(runs).items())]
    limit = len(samples) if options.max_questions is None else options.max_questions
    pages: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="scanrag-report-") as tmp:
        images = PageImages(out, Path(tmp), options.dpi)
        for index, sample in enumerate(samples[:limit], start=1):
            name = f"q{index:04d}"
            body = question_body(sample, groups, by_item, images, name, options.max_pages)
            nav = '<nav><a href="../index.html">← report index</a></nav>'
            write(f"q/{name}.html", page(f"{sample.id} — ScanRAG report", body, nav=nav))
            pages[sample.id] = f"q/{name}.html"
        errors = images.errors

    jump = (
        '<nav class="muted">Jump to <a href="#comparison">comparison</a> · '
        '<a href="#plots">plots</a> · <a href="#questions-list">questions</a></nav>'
    )
    body = (
        "<h1>ScanRAG report</h1>"
        + jump
        + _warnings(runs, [f"page image: {e}" for e in errors])
        + runs_section(runs)
        + config_diff_section(runs)
        + comparison_section(comparison)
        + plots_section(plot_files, out, not_drawn)
        + questions_section(samples, pages, groups, by_item)
    )
    return write("index.html", page("ScanRAG report", body, script=QUESTIONS_JS))
