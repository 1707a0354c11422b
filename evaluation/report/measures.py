"""Per-group quantities the report shows: headline metrics, correctness, outcomes, cost, time.

Cost and time per question come from the trajectories (their per-stage ``usage``, and
``timings``: ``total`` wall seconds, ``model`` and ``wait`` seconds of the model calls,
``count`` seconds counting prompt tokens before them); judge
cost from the score rows' ``usage``. Item outcomes (correct / wrong / unanswered / error by
kind) follow :mod:`scanrag.evaluation.outcomes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from scanrag.evaluation.outcomes import Outcome, error_counts, gave_output, item_outcome
from scanrag.evaluation.report.data import Group
from scanrag.schemas import Trajectory, Usage

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
    """Items, status and spend of one group, per question where it says so.

    ``seconds_per_q`` is wall time per item (queueing included); ``model_seconds_per_q`` and
    ``wait_seconds_per_q`` split the time of its model calls (``None`` when the trajectories
    did not time their calls); ``count_seconds_per_q`` is the time spent counting prompt
    tokens before the calls (a server's tokenize endpoint; ``None`` for trajectories written
    before it was timed)."""

    items: int = 0
    ok: int = 0
    usd_per_q: float | None = None
    tokens_per_q: float | None = None
    seconds_per_q: float | None = None
    model_seconds_per_q: float | None = None
    wait_seconds_per_q: float | None = None
    count_seconds_per_q: float | None = None
    judge_usd_per_q: float | None = None
    calls_per_q: float | None = None


def item_seconds(traj: Trajectory) -> tuple[float, float | None, float | None]:
    """Wall, model and wait seconds of one trajectory (``None``: calls not timed)."""
    timings = traj.timings
    wall = float(timings.get("total", sum(timings.values()) if timings else 0.0))
    if "model" not in timings:
        return wall, None, None
    return wall, float(timings["model"]), float(timings.get("wait", 0.0))


def group_cost(group: Group) -> GroupCost:
    trajectories = list(group.trajectories.values())
    n = len(trajectories)
    if n == 0:
        return GroupCost()
    usage = Usage.sum(traj.total_usage for traj in trajectories)
    seconds = 0.0
    model: float | None = 0.0
    wait: float | None = 0.0
    for traj in trajectories:
        wall, model_s, wait_s = item_seconds(traj)
        seconds += wall
        model = None if model is None or model_s is None else model + model_s
        wait = None if wait is None or wait_s is None else wait + (wait_s or 0.0)
    judge = Usage.sum(
        stage_usage
        for by_sample in group.rows.values()
        for row in by_sample.values()
        for stage_usage in row.usage.values()
    )
    return GroupCost(
        items=n,
        ok=sum(1 for t in trajectories if t.status == "ok"),
        usd_per_q=usage.cost_usd / n,
        tokens_per_q=usage.total_tokens / n,
        seconds_per_q=seconds / n,
        model_seconds_per_q=None if model is None else model / n,
        wait_seconds_per_q=None if wait is None else wait / n,
        count_seconds_per_q=_count_seconds(trajectories),
        judge_usd_per_q=judge.cost_usd / n,
        calls_per_q=usage.calls / n,
    )


def _count_seconds(trajectories: Sequence[Trajectory]) -> float | None:
    """Seconds per item spent counting prompt tokens (``None`` unless every item timed it)."""
    counts = [t.timings.get("count") for t in trajectories]
    if not counts or any(c is None for c in counts):
        return None
    return sum(float(c or 0.0) for c in counts) / len(counts)


def headline_metrics(groups: Sequence[Group]) -> list[str]:
    """Metric names flagged headline in any group (first seen first; retrieval recall beside
    the cited-page metrics) that some group has a value for, or lacks only because every item
    it judged failed (its cells say why); all metrics if none is flagged."""
    from scanrag.runner.summary_table import metric_order

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
    valued = [n for n in names if any(_has_value(g, n) for g in groups)]
    return metric_order(valued)[:MAX_METRICS]


def _has_value(group: Group, name: str) -> bool:
    """A value, or none because every item it judged failed (shown with why)."""
    metric = group.metric(name)
    return metric is not None and (metric.value is not None or metric.excluded > 0)


def scorer_failures(group: Group, scorer: str) -> Any:
    """The scorer's rows of ``group`` that failed, by cause (a ``FailureCounts``)."""
    from scanrag.evaluation.failures import failure_counts

    return failure_counts(group.rows.get(scorer, {}).values(), has_judges=True)


def empty_reason(group: Group, metric: str) -> str:
    """Why ``<scorer>.<metric>`` has no value in ``group``: the scorer's aggregate raised,
    its items all failed (with their causes), were all skipped (with the first reason), or it
    scored none."""
    from scanrag.evaluation.failures import causes_text

    scorer = metric.split(".", 1)[0]
    failed = group.summary.aggregate_errors.get(scorer) if group.summary else None
    if failed:
        return f"not aggregated: {failed}"
    rows = list(group.rows.get(scorer, {}).values())
    if not rows:
        return f"not scored: no {scorer} rows"
    failures = scorer_failures(group, scorer)
    if failures.failed:
        return f"no judged items: {failures.failed} failed ({causes_text(failures.causes)})"
    skipped = [r for r in rows if r.status == "skipped"]
    if skipped:
        return f"{len(skipped)} skipped: {skipped[0].reason or 'out of scope'}"
    return "no item in this metric's population"


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
    """The accuracy the plots use: the decider's own (``<scorer>.accuracy`` of the single
    scorer ``report.decider`` names), else the first of :data:`ACCURACY_METRICS` any group
    has a value for; when none has, the first whose judged items all failed (the plots then
    draw every cell as empty, with why)."""
    from scanrag.decider import decider_order
    from scanrag.evaluation.report.conditions import decider_setting

    preferred = [f"{s}.accuracy" for g in groups[:1] for s in decider_order(decider_setting(g))]
    for name in [*preferred, *ACCURACY_METRICS]:
        for group in groups:
            metric = group.metric(name)
            if metric is not None and metric.value is not None:
                return name
    for name in [*preferred, *ACCURACY_METRICS]:  # no cell has a value: all drawn as empty
        if any(_has_value(g, name) for g in groups):
            return name
    return None


def row_group(group: Group) -> Any:
    """The evaluation ``RowGroup`` of ``group`` (for the evaluation package's helpers)."""
    from scanrag.evaluation.base import RowGroup

    return RowGroup(group.key, group.strategy, group.rows, group.run.samples)


def correctness(group: Group) -> dict[str, bool]:
    """Answer correctness per sample, by the run's decider (``report.decider``; ``auto``:
    the answer judge where usable, else the rules)."""
    from scanrag.evaluation.report.conditions import decisions

    return {sid: decision.correct for sid, decision in decisions(group).items()}


class OutcomeCounts(BaseModel):
    """Items of one group by outcome, and the errors by kind (trajectory status);
    ``degraded`` counts the items (of any outcome) whose input was reduced below the
    strategy's promise."""

    correct: int = 0
    wrong: int = 0
    unanswered: int = 0
    error: int = 0
    unscored: int = 0
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    degraded: int = 0


def outcomes(group: Group) -> dict[str, Outcome]:
    """The outcome of every item of ``group`` that has a trajectory."""
    correct = correctness(group)
    return {
        sid: item_outcome(str(traj.status), gave_output(traj), correct.get(sid))
        for sid, traj in group.trajectories.items()
    }


def outcome_counts(group: Group, by_item: dict[str, Outcome] | None = None) -> OutcomeCounts:
    by_item = outcomes(group) if by_item is None else by_item
    from scanrag.evaluation.report.conditions import is_degraded

    counts = OutcomeCounts(
        errors_by_kind=error_counts(str(t.status) for t in group.trajectories.values()),
        degraded=sum(1 for t in group.trajectories.values() if is_degraded(t)),
    )
    for outcome in by_item.values():
        setattr(counts, outcome.value, getattr(counts, outcome.value) + 1)
    return counts
