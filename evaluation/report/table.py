"""The comparison table: one row per grid cell, headline metrics with 95% intervals,
significance markers against the baseline, item outcomes, cost and time per question.

Every metric is computed over all items, errors counted as wrong; each metric cell carries how
many of its items were errors (``errors``) and each row its outcome counts (correct, wrong,
unanswered, error by kind), so failures are never read as wrong answers. Written as Markdown
(``comparison.md``), CSV (``comparison.csv``: one column per number, led by the columns that
say what the cell is, see :mod:`scanrag.evaluation.report.cells`) and JSON (``comparison.json``);
the HTML report renders the same :class:`ComparisonTable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from scanrag.evaluation.report.cells import Scalar, describe_cell, scalar, union_columns
from scanrag.evaluation.report.conditions import DEGRADED_MARK, CellConditions, cell_conditions
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.export_types import WIDE_COLUMNS, ColumnType, column_types
from scanrag.evaluation.report.export_write import csv_text
from scanrag.evaluation.report.measures import (
    GroupCost,
    OutcomeCounts,
    group_cost,
    headline_metrics,
    metric_label,
    outcome_counts,
)
from scanrag.evaluation.report.significance import (
    MIN_TEST_ITEMS,
    BaselineCache,
    Comparison,
    compare,
)
from scanrag.evaluation.stats import MIN_INTERVAL_ITEMS, TOO_FEW, interval_text


class MetricCell(BaseModel):
    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    errors: int | None = None
    vs_baseline: Comparison | None = None

    @property
    def marker(self) -> str:
        return self.vs_baseline.marker if self.vs_baseline is not None else ""


class ComparisonRow(BaseModel):
    label: str
    run: str
    strategy: str
    is_baseline: bool = False
    cell: dict[str, Scalar] = Field(
        default_factory=dict, description="What the cell is: dataset, models, retriever..."
    )
    outcomes: OutcomeCounts = Field(default_factory=OutcomeCounts)
    conditions: CellConditions | None = Field(
        default=None, description="Caps, degraded items, decider and replays of the cell."
    )
    cost: GroupCost = Field(default_factory=GroupCost)
    metrics: dict[str, MetricCell] = Field(default_factory=dict)

    @property
    def title(self) -> str:
        """The label with the cell's caps (``full_doc ≤60p``)."""
        return self.conditions.label if self.conditions is not None else self.label


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
    metrics = headline_metrics(groups)
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
            cell=describe_cell(group),
            outcomes=outcome_counts(group),
            conditions=cell_conditions(group),
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
                errors=summary.errors,
                vs_baseline=tests.get(name),
            )
        table.rows.append(row)
    return table


# --------------------------------------------------------------------------- formatting


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def cell_text(cell: MetricCell | None) -> str:
    """``0.620 [0.410, 0.800] * (3 err)`` (value, 95% interval, marker, errors among n);
    ``1.000 (n too small)`` below :data:`~scanrag.evaluation.stats.MIN_INTERVAL_ITEMS`."""
    if cell is None or cell.value is None:
        return "—"
    text = fmt(cell.value)
    interval = interval_text(cell.low, cell.high, cell.n)
    if interval == TOO_FEW:
        text += f" ({interval})"
    elif interval != "—":
        text += f" {interval}"
    text = f"{text} {cell.marker}".rstrip()
    return text + (f" ({cell.errors} err)" if cell.errors else "")


def outcome_text(counts: OutcomeCounts) -> str:
    """``4 ✓ 1 ✗ 0 ∅ 1 ⚠`` with the errors by kind: ``(1 model_error)``."""
    text = f"{counts.correct} ✓ {counts.wrong} ✗ {counts.unanswered} ∅ {counts.error} ⚠"
    if counts.unscored:
        text += f" {counts.unscored} ·"
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts.errors_by_kind.items())
    text += f" ({kinds})" if kinds else ""
    return text + (f"; {counts.degraded} {DEGRADED_MARK} degraded" if counts.degraded else "")


COST_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("items", "items", 0),
    ("usd_per_q", "$/q", 5),
    ("tokens_per_q", "tokens/q", 0),
    ("model_seconds_per_q", "model s/q", 2),
    ("wait_seconds_per_q", "wait s/q", 2),
    ("count_seconds_per_q", "count s/q", 2),
    ("seconds_per_q", "wall s/q", 2),
    ("judge_usd_per_q", "judge $/q", 5),
)
OUTCOMES = ("correct", "wrong", "unanswered", "error", "unscored")


def cost_text(cost: GroupCost, attr: str, digits: int) -> str:
    value = getattr(cost, attr)
    if value is None:
        return "—"
    return str(value) if isinstance(value, int) else fmt(float(value), digits)


def legend(table: ComparisonTable) -> str:
    base = f"baseline **{table.baseline}**" if table.baseline else "no baseline"
    return (
        f"Values with 95% bootstrap intervals ({TOO_FEW}: fewer than {MIN_INTERVAL_ITEMS} "
        f"items); {base}; paired bootstrap "
        f"({table.n_resamples} resamples, same items): * p<0.05, ** p<0.01, *** p<0.001 "
        f"(not tested below {MIN_TEST_ITEMS} shared items). Every metric is over all items, "
        "errors counted as wrong; (N err): N of its items ended in an error. Outcomes: "
        "✓ correct, ✗ wrong, ∅ unanswered, ⚠ error (by kind), · not scored; ◐ degraded: the "
        "item's input was reduced below what its strategy promises (a cap, the context "
        "window), whatever its outcome. A label states the caps its items were read under "
        f"(≤60p: pages, c/p: characters per page, img: page images). ✓/✗ decided by "
        f"{_deciders(table)}. model s/q: time in model calls; wait s/q: time waiting around "
        "them; count s/q: time counting prompt tokens before them (a server's tokenizer); "
        "wall s/q: the whole item."
    )


def _deciders(table: ComparisonTable) -> str:
    found = {r.conditions.decider for r in table.rows if r.conditions is not None}
    return " / ".join(sorted(found)) or "auto (answer, else answer_rules)"


def to_markdown(table: ComparisonTable) -> str:
    titles = [table.labels.get(m, m) for m in table.metrics]
    header = ["grid cell", "outcomes", *titles, *(label for _, label, _ in COST_COLUMNS)]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for row in table.rows:
        name = row.title + (" (baseline)" if row.is_baseline else "")
        cells = [name.replace("|", "\\|"), outcome_text(row.outcomes)]
        cells += [cell_text(row.metrics.get(m)) for m in table.metrics]
        cells += [cost_text(row.cost, attr, d) for attr, _, d in COST_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + legend(table) + "\n"


def wide_rows(table: ComparisonTable) -> list[dict[str, Any]]:
    """One flat record per grid cell: what the cell is, then its outcome counts, metrics
    (value, interval, n, errors, difference and p against the baseline) and costs."""
    kinds = sorted({k for row in table.rows for k in row.outcomes.errors_by_kind})
    deciders = sorted({s for r in table.rows if r.conditions for s in r.conditions.decided_by})
    records = []
    for row in table.rows:
        record: dict[str, Any] = {"label": row.label, **row.cell, "baseline": int(row.is_baseline)}
        record["strategy"] = row.strategy
        for name in OUTCOMES:
            record[f"n_{name}"] = getattr(row.outcomes, name)
        for kind in kinds:
            record[f"errors.{kind}"] = row.outcomes.errors_by_kind.get(kind, 0)
        record |= condition_columns(row.conditions)
        if row.conditions is not None:  # a scorer that decided no item of this cell: 0
            record |= {f"decided_by.{k}": row.conditions.decided_by.get(k, 0) for k in deciders}
        for metric in table.metrics:
            cell = row.metrics.get(metric) or MetricCell()
            test = cell.vs_baseline or Comparison()
            record |= {
                metric: cell.value,
                f"{metric}.low": cell.low,
                f"{metric}.high": cell.high,
                f"{metric}.n": cell.n,
                f"{metric}.errors": cell.errors,
                f"{metric}.diff": test.diff,
                f"{metric}.p_value": test.p_value,
            }
        record |= {attr: getattr(row.cost, attr) for attr, _, _ in COST_COLUMNS}
        records.append(record)
    return records


def condition_columns(c: CellConditions | None) -> dict[str, Any]:
    """The wide export's columns about what a cell measured under: its label with caps, the
    caps, degraded items (and those that lost gold pages), the decider and how many items
    each scorer decided, the judge-vs-rules disagreement, replayed calls and their runs."""
    if c is None:
        return {}
    record: dict[str, Any] = {
        "cell_label": c.label,
        "caps": scalar(c.caps) if c.caps else None,
        "n_degraded": c.degraded,
        "n_gold_pages_dropped": c.gold_pages_dropped,
        "decider": c.decider,
        "judge_models": list(c.judge_models),
        "judge_rules_items": c.judge_rules_items,
        "judge_rules_disagree": c.judge_rules_disagree,
        "judge_rules_disagreement": c.disagreement_rate,
        "replayed_calls": c.replayed_calls,
        "replayed_items": c.replayed_items,
        "replayed_from": scalar(c.replayed_from) if c.replayed_from else None,
    }
    return record


def wide_columns(table: ComparisonTable, records: Sequence[dict[str, Any]]) -> list[str]:
    """The label, every column describing a cell (in any row), then the numbers."""
    described = union_columns((row.cell for row in table.rows), ["run", "cell", "run_key"])
    head = ["label", *described, "baseline"]
    return head + [c for c in union_columns(records) if c not in head]


def wide_types(table: ComparisonTable, records: Sequence[dict[str, Any]]) -> dict[str, ColumnType]:
    """Every column of the wide table with its documented type, in column order."""
    columns = wide_columns(table, records)
    return column_types(columns, records, WIDE_COLUMNS, metrics=table.metrics)


def to_csv(table: ComparisonTable) -> str:
    records = wide_rows(table)
    return csv_text(records, wide_types(table, records))
