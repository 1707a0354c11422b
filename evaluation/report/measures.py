"""Per-group quantities the report shows: headline metrics, correctness, cost and time.

Cost and time per question come from the trajectories (their per-stage ``usage`` and
``timings["total"]``); judge cost from the score rows' ``usage``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from evaluation.report.data import Group
from scanrag.schemas import Usage

# The metric that stands for "accuracy" in plots, in order of preference.
ACCURACY_METRICS = (
    "answer.accuracy",
    "answer_rules.accuracy",
    "scholscan.S",
    "sinbench.chain_qa.overall",
    "sinbench.find.overall",
    "sinbench.summary.overall",
    "sinbench.verify.overall",
    "faithfulness.attributable_rate",
)
MAX_METRICS = 24  # room for the DocScope headlines of both scoring profiles side by side


class GroupCost(BaseModel):
    """Items, status and spend of one group, per question where it says so."""

    items: int = 0
    ok: int = 0
    usd_per_q: float | None = None
    tokens_per_q: float | None = None
    seconds_per_q: float | None = None
    judge_usd_per_q: float | None = None
    calls_per_q: float | None = None


def group_cost(group: Group) -> GroupCost:
    trajectories = list(group.trajectories.values())
    n = len(trajectories)
    if n == 0:
        return GroupCost()
    usage = Usage()
    seconds = 0.0
    for traj in trajectories:
        usage = usage.add(traj.total_usage)
        timings = traj.timings
        seconds += float(timings.get("total", sum(timings.values()) if timings else 0.0))
    judge = Usage()
    for by_sample in group.rows.values():
        for row in by_sample.values():
            for stage_usage in row.usage.values():
                judge = judge.add(stage_usage)
    return GroupCost(
        items=n,
        ok=sum(1 for t in trajectories if t.status == "ok"),
        usd_per_q=usage.cost_usd / n,
        tokens_per_q=usage.total_tokens / n,
        seconds_per_q=seconds / n,
        judge_usd_per_q=judge.cost_usd / n,
        calls_per_q=usage.calls / n,
    )


def headline_metrics(groups: Sequence[Group]) -> list[str]:
    """Metric names flagged headline in any group (first seen first); all metrics if none."""
    names: list[str] = []
    for group in groups:
        if group.summary is None:
            continue
        for name, metric in group.summary.metrics.items():
            if metric.headline and name not in names:
                names.append(name)
    if not names:
        for group in groups:
            if group.summary is not None:
                names += [n for n in group.summary.metrics if n not in names]
    return names[:MAX_METRICS]


def metric_profile(groups: Sequence[Group], name: str) -> str | None:
    """The scoring profile behind ``<scorer>.<metric>`` (the scorer's ``profile`` table)."""
    scorer = name.split(".", 1)[0]
    for group in groups:
        value = group.table(f"{scorer}.profile")
        if isinstance(value, str):
            return value
    return None


def metric_label(groups: Sequence[Group], name: str) -> str:
    """``name`` with its scoring profile when it has one: ``pages.f1 [paper]``."""
    profile = metric_profile(groups, name)
    return f"{name} [{profile}]" if profile else name


def accuracy_metric(groups: Sequence[Group]) -> str | None:
    """The first of :data:`ACCURACY_METRICS` any group has a value for."""
    for name in ACCURACY_METRICS:
        for group in groups:
            metric = group.metric(name)
            if metric is not None and metric.value is not None:
                return name
    return None


def row_group(group: Group) -> Any:
    """The evaluation ``RowGroup`` of ``group`` (for the evaluation package's helpers)."""
    from evaluation.base import RowGroup

    return RowGroup(group.key, group.strategy, group.rows, group.run.samples)


def correctness(group: Group) -> dict[str, bool]:
    """Answer correctness per sample: the answer judge where usable, else the rules."""
    from evaluation.docscope.completeness import answer_correct

    result: dict[str, bool] = answer_correct(row_group(group))
    return result
