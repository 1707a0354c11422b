"""Paired bootstrap significance of each headline metric against a baseline group.

For a metric ``<scorer>.<name>`` the items are the samples both groups have a row for (same
scorer). Each resample draws those items with replacement; the scorer's own ``aggregate``
recomputes the metric for both groups on the same draw (with no inner bootstrap), so micro
ratios, accuracies on subsets and means are all tested exactly as they are defined. The
two-sided p-value and the interval of the difference come from
:func:`scanrag.evaluation.stats.paired_bootstrap_statistic`. Aggregates are computed once per draw
and shared by every metric of the same scorer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from scanrag.evaluation.report.data import Group

# Below this many paired items a bootstrap test says nothing useful (with two items every
# resample shows the same difference, so p comes out 0): no significance marker is shown.
MIN_TEST_ITEMS = 10


class Comparison(BaseModel):
    """A metric of one group against the baseline (this minus baseline)."""

    diff: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    n: int = 0

    @property
    def marker(self) -> str:
        """``*`` p < 0.05, ``**`` p < 0.01, ``***`` p < 0.001; empty otherwise, and always
        empty below ``MIN_TEST_ITEMS`` paired items."""
        if self.p_value is None or self.n < MIN_TEST_ITEMS:
            return ""
        for threshold, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*")):
            if self.p_value < threshold:
                return mark
        return ""


class _Aggregates:
    """Metric values of one group's rows on bootstrap draws, cached per draw."""

    def __init__(self, group: Group, scorer: Any, rows: list[Any]) -> None:
        from scanrag.evaluation.base import RowGroup, StatsOptions

        self.scorer = scorer
        self.rows = rows
        self.group = RowGroup(group.key, group.strategy, {}, group.run.samples)
        self.stats = StatsOptions(n_resamples=0)
        self.cache: dict[bytes, dict[str, float | None]] = {}

    def values(self, idx: Any) -> dict[str, float | None]:
        key = idx.tobytes()
        found = self.cache.get(key)
        if found is None:
            result = self.scorer.aggregate([self.rows[i] for i in idx], self.group, self.stats)
            found = {name: m.value for name, m in result.metrics.items()}
            self.cache[key] = found
        return found

    def statistic(self, name: str) -> Callable[[Any], float | None]:
        return lambda idx: self.values(idx).get(name)


BaselineCache = dict[tuple[str, str, tuple[str, ...]], _Aggregates]


def compare(
    group: Group,
    baseline: Group,
    metrics: Sequence[str],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    scorer_params: dict[str, dict[str, Any]] | None = None,
    cache: BaselineCache | None = None,
) -> dict[str, Comparison]:
    """Paired comparisons of ``group`` against ``baseline`` for each metric it can test.

    ``cache`` (shared across calls with the same baseline) keeps the baseline's aggregates per
    draw: groups scored on the same items draw the same resamples, so they are reused.
    """
    cache = {} if cache is None else cache
    from scanrag.evaluation.base import get_scorer
    from scanrag.evaluation.stats import paired_bootstrap_statistic

    out: dict[str, Comparison] = {}
    by_scorer: dict[str, list[str]] = {}
    for name in metrics:
        prefix, _, metric = name.partition(".")
        by_scorer.setdefault(prefix, []).append(metric)
    for scorer_name, names in by_scorer.items():
        mine, theirs = group.rows.get(scorer_name, {}), baseline.rows.get(scorer_name, {})
        common = sorted(set(mine) & set(theirs))
        if not common:
            continue
        try:
            scorer = get_scorer(scorer_name, **(scorer_params or {}).get(scorer_name, {}))
        except Exception:  # an unregistered scorer: its rows cannot be re-aggregated
            continue
        a = _Aggregates(group, scorer, [mine[s] for s in common])
        key = (baseline.label, scorer_name, tuple(common))
        b = cache.get(key) or cache.setdefault(
            key, _Aggregates(baseline, scorer, [theirs[s] for s in common])
        )
        for metric in names:
            result = paired_bootstrap_statistic(
                a.statistic(metric),
                b.statistic(metric),
                len(common),
                n_resamples=n_resamples,
                seed=seed,
            )
            out[f"{scorer_name}.{metric}"] = Comparison(
                diff=result.mean_diff,
                low=result.low,
                high=result.high,
                p_value=result.p_value if result.mean_diff is not None else None,
                n=result.n,
            )
    return out
