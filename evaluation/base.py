"""The scorer contract, the scorer registry helpers and the aggregate building blocks.

Calling convention (one for every scorer):

* ``await scorer.score(trajectory, sample, judge=ctx) -> ScoreRow``. Judge scorers await
  ``ctx.judge(...)``; pure scorers subclass :class:`PureScorer` and implement the synchronous
  ``compute``. ``ctx`` is a :class:`~scanrag.evaluation.judging.JudgeContext` (or ``None``: pure
  scorers must then still work, judge scorers return a ``skipped`` row).
* ``scorer.aggregate(rows, group, stats) -> AggregateResult`` turns the rows of one grid
  cell into metrics. It is separate from scoring, so re-summarizing never calls a judge.
* ``scorer.applies(sample)``: the stage only scores samples whose task the scorer handles
  (``tasks``); inside that, a scorer writes a ``skipped`` row when the item is out of scope
  (an unanswerable question for page metrics).

Scorers are registered by name in :data:`scanrag.registry.SCORERS` through the
``scanrag.scorers`` entry points in ``pyproject.toml``; the factory is the class, created with
keyword parameters (``SCORERS.create(name, **params)``). A scorer with ``item_level = False``
writes no rows and only aggregates other scorers' rows (evidence-chain completeness).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.outcomes import gave_output
from scanrag.evaluation.schemas import AggregateResult, MetricSummary, ScoreRow
from scanrag.evaluation.stats import MIN_INTERVAL_ITEMS
from scanrag.registry import SCORERS
from scanrag.schemas import Sample, Trajectory


@dataclass(frozen=True)
class StatsOptions:
    """Bootstrap settings for every interval of a summary (``n_resamples=0``: no intervals)."""

    n_resamples: int = 1000
    seed: int = 0
    ci: float = 0.95


@dataclass
class RowGroup:
    """The rows of one grid cell, by scorer then sample id, plus the samples themselves."""

    name: str
    strategy: str
    by_scorer: dict[str, dict[str, ScoreRow]] = field(default_factory=dict)
    samples: Mapping[str, Sample] = field(default_factory=dict)

    def rows(self, scorer: str) -> dict[str, ScoreRow]:
        return self.by_scorer.get(scorer, {})


class Scorer:
    """Base class of every scorer. Subclasses set ``name`` and implement ``score`` and
    ``aggregate``."""

    # The registry name; an instance may carry another one (a profile bound under its own
    # name, see ``scanrag.evaluation.docscope.profiled.ProfileBinding``).
    name: str = ""
    tasks: ClassVar[frozenset[str]] = frozenset({"qa"})
    roles: ClassVar[tuple[str, ...]] = ()
    item_level: ClassVar[bool] = True
    depends_on: ClassVar[tuple[str, ...]] = ()
    # Opt-in scorers run only when named (``--scorers``, ``scoring.scorers``), never by
    # default: the ``<name>_official`` twins of the DocScope scorers, say.
    opt_in: ClassVar[bool] = False

    def applies(self, sample: Sample) -> bool:
        return sample.task in self.tasks

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        raise NotImplementedError(f"scorer {self.name!r} writes no per-item rows")

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        raise NotImplementedError

    # -- helpers for subclasses -------------------------------------------------------------

    def new_row(self, trajectory: Trajectory, sample: Sample, **fields: Any) -> ScoreRow:
        """A row for this pair, carrying the item's side: its dataset, the trajectory's status
        and whether it gave an output. A trajectory that ended in an error is still scored
        (its missing outputs count as wrong); ``item_status`` says which error it was."""
        dataset = trajectory.metadata.get("dataset")
        return ScoreRow(
            sample_id=sample.id,
            run_key=trajectory.run_key,
            strategy=trajectory.strategy,
            scorer=self.name,
            dataset=None if dataset is None else str(dataset),
            item_status=str(trajectory.status),
            answered=gave_output(trajectory),
            **fields,
        )

    def skip(self, trajectory: Trajectory, sample: Sample, reason: str, **fields: Any) -> ScoreRow:
        return self.new_row(trajectory, sample, status="skipped", reason=reason, **fields)


class PureScorer(Scorer):
    """A scorer needing no judge: implement ``compute``; ``score`` wraps it."""

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        raise NotImplementedError

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        return self.compute(trajectory, sample, judge)


# --------------------------------------------------------------------------- registry helpers


def get_scorer(name: str, **params: Any) -> Scorer:
    """Instantiate the scorer registered as ``name`` (``UnknownNameError`` lists the known)."""
    return _checked(name, SCORERS.create(name, **params))


def _checked(name: str, scorer: Any) -> Scorer:
    if not isinstance(scorer, Scorer):
        raise TypeError(f"scorer {name!r} is a {type(scorer).__name__}, not an evaluation Scorer")
    return scorer


class ScorerTable:
    """Scorer names bound to their registered factories, each name looked up once.

    A scoring backend keeps one: checking a job (``plan``, before a run starts) binds its
    scorers and the aggregate-only scorers that depend on them, and scoring and summarizing
    then build from what was checked without asking the registry again. A name not bound yet
    is looked up (and bound) when first used, so a table also serves rows of scorers the
    check never saw (an earlier session's).
    """

    def __init__(self) -> None:
        self.factories: dict[str, Callable[..., Any]] = {}
        self._aggregate_only: dict[str, frozenset[str]] | None = None  # name → depends_on

    def factory(self, name: str) -> Callable[..., Any]:
        """The factory of scorer ``name`` (``UnknownNameError`` / ``RegistryError`` raise)."""
        found = self.factories.get(name)
        if found is None:
            found = self.factories[name] = SCORERS.get(name)
        return found

    def __contains__(self, name: object) -> bool:
        return name in self.factories or name in SCORERS

    def scorer(self, name: str, **params: Any) -> Scorer:
        """Scorer ``name`` built with ``params``."""
        return _checked(name, self.factory(name)(**params))

    def build(
        self, names: Sequence[str], params: Mapping[str, Mapping[str, Any]] | None = None
    ) -> dict[str, Scorer]:
        """Scorers by name with their parameters (``{name: {...}}``; ``None``: defaults)."""
        params = params or {}
        return {name: self.scorer(name, **dict(params.get(name) or {})) for name in names}

    def dependents(self, present: Iterable[str]) -> list[str]:
        """The aggregate-only scorers (``item_level = False``) depending on one of
        ``present``; every registered scorer is looked at once per table."""
        if self._aggregate_only is None:
            found = {}
            for name in SCORERS.names():
                factory = self.factory(name)
                if getattr(factory, "item_level", True) is False:
                    found[name] = frozenset(getattr(factory, "depends_on", ()))
            self._aggregate_only = found
        given = set(present)
        return [name for name, depends in self._aggregate_only.items() if depends & given]


# --------------------------------------------------------------------------- aggregate helpers


def status_counts(rows: Iterable[ScoreRow]) -> Counter[str]:
    return Counter(r.status for r in rows)


def item_statuses(by_scorer: Mapping[str, Mapping[str, ScoreRow]]) -> dict[str, int]:
    """Items per trajectory status over a grid cell's rows (each item counted once)."""
    status: dict[str, str] = {}
    for rows in by_scorer.values():
        for sample_id, row in rows.items():
            status.setdefault(sample_id, row.item_status)
    return dict(sorted(Counter(status.values()).items()))


def aggregate_counting_errors(
    scorer: Scorer, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
) -> AggregateResult:
    """``scorer.aggregate`` with ``errors`` filled in on every metric: how many of its ``n``
    items ended in an error. The scorer aggregates the error items alone (no bootstrap) and
    the ``n`` of each metric there is the count, so subsets (answerable items only, say) are
    counted exactly as the metric defines them."""
    result = scorer.aggregate(rows, group, stats)
    failed = {
        sid
        for by_sample in group.by_scorer.values()
        for sid, r in by_sample.items()
        if r.item_error
    }
    failed |= {r.sample_id for r in rows if r.item_error}
    counts: dict[str, int] = {}
    if failed:
        only = {k: {s: r for s, r in v.items() if s in failed} for k, v in group.by_scorer.items()}
        subset = RowGroup(group.name, group.strategy, only, group.samples)
        try:
            errors = scorer.aggregate(
                [r for r in rows if r.sample_id in failed], subset, StatsOptions(n_resamples=0)
            )
        except Exception:  # a scorer that cannot aggregate the subset: errors stay unknown
            return result
        counts = {name: metric.n for name, metric in errors.metrics.items()}
    for name, metric in result.metrics.items():
        metric.errors = counts.get(name, 0)
    return result


def _summary(
    estimate: float | None,
    bounds: tuple[float | None, float | None],
    n: int,
    stats: StatsOptions,
    rows_excluded: int,
    skipped: int,
    headline: bool,
) -> MetricSummary:
    low, high = bounds
    return MetricSummary(
        value=estimate,
        n=n,
        excluded=rows_excluded,
        skipped=skipped,
        low=low,
        high=high,
        ci=stats.ci if stats.n_resamples else None,
        headline=headline,
    )


def ratio_metric(
    numerators: Sequence[float] | np.ndarray,
    denominators: Sequence[float] | np.ndarray,
    stats: StatsOptions,
    *,
    excluded: int = 0,
    skipped: int = 0,
    headline: bool = False,
) -> MetricSummary:
    """Micro metric Σnum / Σden over items, interval by resampling items."""
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    total = float(den.sum()) if den.size else 0.0
    estimate = float(num.sum()) / total if total > 0 else None
    bounds: tuple[float | None, float | None] = (None, None)
    if stats.n_resamples and num.size >= MIN_INTERVAL_ITEMS:
        from scanrag.evaluation.stats import bootstrap_ratio_ci

        res = bootstrap_ratio_ci(
            num.tolist(), den.tolist(), n_resamples=stats.n_resamples, seed=stats.seed, ci=stats.ci
        )
        bounds = (res.low, res.high)
    return _summary(estimate, bounds, int(num.size), stats, excluded, skipped, headline)


def mean_metric(
    values: Sequence[float] | np.ndarray,
    stats: StatsOptions,
    *,
    excluded: int = 0,
    skipped: int = 0,
    headline: bool = False,
) -> MetricSummary:
    """Mean of per-item values (macro metric)."""
    arr = np.asarray(values, dtype=float)
    estimate = float(arr.mean()) if arr.size else None
    bounds: tuple[float | None, float | None] = (None, None)
    if stats.n_resamples and arr.size >= MIN_INTERVAL_ITEMS:
        from scanrag.evaluation.stats import bootstrap_ci

        res = bootstrap_ci(
            arr.tolist(), n_resamples=stats.n_resamples, seed=stats.seed, ci=stats.ci
        )
        bounds = (res.low, res.high)
    return _summary(estimate, bounds, int(arr.size), stats, excluded, skipped, headline)


def statistic_metric(
    statistic: Callable[[np.ndarray], float | None],
    n_items: int,
    stats: StatsOptions,
    *,
    excluded: int = 0,
    skipped: int = 0,
    headline: bool = False,
) -> MetricSummary:
    """Any statistic of an index array over items (F1 of summed counts...)."""
    estimate = statistic(np.arange(n_items)) if n_items else None
    bounds: tuple[float | None, float | None] = (None, None)
    if stats.n_resamples and n_items >= MIN_INTERVAL_ITEMS:
        from scanrag.evaluation.stats import bootstrap_statistic

        res = bootstrap_statistic(
            statistic, n_items, n_resamples=stats.n_resamples, seed=stats.seed, ci=stats.ci
        )
        bounds = (res.low, res.high)
    return _summary(estimate, bounds, n_items, stats, excluded, skipped, headline)


def f1(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean; 0 when either side is 0, ``None`` when either is undefined."""
    if precision == 0 or recall == 0:
        return 0.0
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall)


def safe_ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def count_column(rows: Sequence[ScoreRow], name: str) -> np.ndarray:
    return np.asarray([float(r.counts.get(name, 0.0)) for r in rows], dtype=float)


def split_rows(rows: Sequence[ScoreRow]) -> tuple[list[ScoreRow], int, int]:
    """Usable rows (``ok``/``partial``), the number of failed rows, the number skipped."""
    usable = [r for r in rows if r.usable]
    failed = sum(1 for r in rows if r.failed)
    skipped = sum(1 for r in rows if r.status == "skipped")
    return usable, failed, skipped


def metric_values(rows: Sequence[ScoreRow], name: str) -> list[float]:
    """Non-``None`` values of a per-item metric over usable rows."""
    return [v for r in rows if r.usable and (v := r.metrics.get(name)) is not None]
