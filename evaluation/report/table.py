"""The comparison table: one row per grid cell, headline metrics with 95% intervals,
significance markers against the baseline, cost and time per question.

Written as Markdown (``comparison.md``), CSV (``comparison.csv``, one column per number) and
JSON (``comparison.json``); the HTML report renders the same :class:`ComparisonTable`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from evaluation.report.data import Group
from evaluation.report.measures import GroupCost, group_cost, headline_metrics, metric_label
from evaluation.report.significance import (
    MIN_TEST_ITEMS,
    BaselineCache,
    Comparison,
    compare,
)


class MetricCell(BaseModel):
    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    vs_baseline: Comparison | None = None

    @property
    def marker(self) -> str:
        return self.vs_baseline.marker if self.vs_baseline is not None else ""


class ComparisonRow(BaseModel):
    label: str
    run: str
    strategy: str
    is_baseline: bool = False
    cost: GroupCost = Field(default_factory=GroupCost)
    metrics: dict[str, MetricCell] = Field(default_factory=dict)


class ComparisonTable(BaseModel):
    metrics: list[str] = Field(default_factory=list)
    labels: dict[str, str] = Field(
        default_factory=dict, description="Column title per metric (with its scoring profile)."
    )
    baseline: str | None = None
    n_resamples: int = 0
    rows: list[ComparisonRow] = Field(default_factory=list)


def build_table(
    groups: Sequence[Group],
    baseline: Group | None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> ComparisonTable:
    """The table for ``groups`` (in order), compared with ``baseline`` when given."""
    metrics = [
        name
        for name in headline_metrics(groups)
        if any((m := g.metric(name)) is not None and m.value is not None for g in groups)
    ]
    cache: BaselineCache = {}
    table = ComparisonTable(
        metrics=metrics,
        labels={name: metric_label(groups, name) for name in metrics},
        baseline=baseline.label if baseline is not None else None,
        n_resamples=n_resamples,
    )
    for group in groups:
        tests: dict[str, Comparison] = {}
        if baseline is not None and group is not baseline and n_resamples > 0:
            tests = compare(
                group,
                baseline,
                metrics,
                n_resamples=n_resamples,
                seed=seed,
                scorer_params=group.run.scorer_params,
                cache=cache,
            )
        row = ComparisonRow(
            label=group.label,
            run=group.run.name,
            strategy=group.strategy,
            is_baseline=group is baseline,
            cost=group_cost(group),
        )
        for name in metrics:
            summary = group.metric(name)
            if summary is None:
                continue
            row.metrics[name] = MetricCell(
                value=summary.value,
                low=summary.low,
                high=summary.high,
                n=summary.n,
                vs_baseline=tests.get(name),
            )
        table.rows.append(row)
    return table


# --------------------------------------------------------------------------- formatting


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def cell_text(cell: MetricCell | None) -> str:
    """``0.620 [0.410, 0.800] *`` (value, 95% interval, marker)."""
    if cell is None or cell.value is None:
        return "—"
    text = fmt(cell.value)
    if cell.low is not None and cell.high is not None:
        text += f" [{fmt(cell.low)}, {fmt(cell.high)}]"
    return f"{text} {cell.marker}".rstrip()


COST_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("items", "items", 0),
    ("ok", "ok", 0),
    ("usd_per_q", "$/q", 5),
    ("tokens_per_q", "tokens/q", 0),
    ("seconds_per_q", "s/q", 2),
    ("judge_usd_per_q", "judge $/q", 5),
)


def cost_text(cost: GroupCost, attr: str, digits: int) -> str:
    value = getattr(cost, attr)
    if value is None:
        return "—"
    return str(value) if isinstance(value, int) else fmt(float(value), digits)


def legend(table: ComparisonTable) -> str:
    base = f"baseline **{table.baseline}**" if table.baseline else "no baseline"
    return (
        f"Values with 95% bootstrap intervals; {base}; paired bootstrap "
        f"({table.n_resamples} resamples, same items): * p<0.05, ** p<0.01, *** p<0.001 "
        f"(not tested below {MIN_TEST_ITEMS} shared items)."
    )


def to_markdown(table: ComparisonTable) -> str:
    titles = [table.labels.get(m, m) for m in table.metrics]
    header = ["grid cell", *titles, *(label for _, label, _ in COST_COLUMNS)]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for row in table.rows:
        name = row.label + (" (baseline)" if row.is_baseline else "")
        cells = [name.replace("|", "\\|")]
        cells += [cell_text(row.metrics.get(m)) for m in table.metrics]
        cells += [cost_text(row.cost, attr, d) for attr, _, d in COST_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + legend(table) + "\n"


def to_csv(table: ComparisonTable) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["label", "run", "strategy", "baseline"]
    for metric in table.metrics:
        header += [metric, f"{metric}.low", f"{metric}.high", f"{metric}.n"]
        header += [f"{metric}.diff", f"{metric}.p_value"]
    header += [attr for attr, _, _ in COST_COLUMNS]
    writer.writerow(header)
    for row in table.rows:
        line: list[Any] = [row.label, row.run, row.strategy, int(row.is_baseline)]
        for metric in table.metrics:
            cell = row.metrics.get(metric) or MetricCell()
            test = cell.vs_baseline or Comparison()
            line += [cell.value, cell.low, cell.high, cell.n, test.diff, test.p_value]
        line += [getattr(row.cost, attr) for attr, _, _ in COST_COLUMNS]
        writer.writerow(["" if v is None else v for v in line])
    return buffer.getvalue()
