"""Statistics for headline metrics: bootstrap intervals and paired tests.

Everything here is pure (numpy only) and deterministic for a given ``seed``; the agreement
measures (accuracy, F1, κ, MCC, Kendall's τ_b) are in :mod:`scanrag.evaluation.stats_agreement`.

Conventions
-----------
* Percentile bootstrap: resample items with replacement ``n_resamples`` times, recompute the
  statistic, and take the ``(1 - ci) / 2`` and ``(1 + ci) / 2`` percentiles (numpy's linear
  interpolation). ``midpoint`` is the center of that interval, the "stabilized estimate"
  ContextCheck reports instead of the plain point estimate.
* Paired bootstrap p-value (two-sided): with d* the resampled differences of the statistic
  (A minus B on the same resampled items), ``p = min(1, 2 * (min(#{d* <= 0}, #{d* >= 0}) + 1)
  / (n_resamples + 1))``. It is the smallest two-sided level at which the percentile interval
  of d* excludes 0; the +1 keeps it from ever being exactly 0 with finitely many resamples.
* No interval below :data:`MIN_INTERVAL_ITEMS` items: resampling n items draws at most
  C(2n-1, n) distinct samples (1 for n = 1, 10 for n = 3), so such an "interval" (``[0.000,
  0.000]`` for one wrong item) describes n, not the metric. Metric summaries leave ``low`` and
  ``high`` empty there and every table shows "n too small" (:func:`interval_text`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

MIN_INTERVAL_ITEMS = 5
"""The fewest items a bootstrap interval is computed for (see the module docstring)."""
TOO_FEW = "n too small"


def interval_text(low: float | None, high: float | None, n: int, digits: int = 3) -> str:
    """``[0.410, 0.800]``; ``n too small`` for 1 ≤ n < :data:`MIN_INTERVAL_ITEMS` (also for a
    summary written before intervals had a minimum); ``—`` without an interval."""
    if 0 < n < MIN_INTERVAL_ITEMS:
        return TOO_FEW
    if low is not None and high is not None:
        return f"[{low:.{digits}f}, {high:.{digits}f}]"
    return "—"


class BootstrapResult(BaseModel):
    """A point estimate with its percentile bootstrap interval.

    All numbers are ``None`` when there is nothing to estimate (no items, or the statistic
    is undefined on the full sample).
    """

    estimate: float | None
    low: float | None
    high: float | None
    midpoint: float | None
    n: int
    n_resamples: int
    ci: float


class PairedResult(BaseModel):
    """Paired bootstrap comparison of two systems on the same items (A minus B)."""

    mean_diff: float | None
    low: float | None
    high: float | None
    p_value: float | None
    n: int
    n_resamples: int
    ci: float


# -- bootstrap -------------------------------------------------------------------------------


def _resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_resamples, n))


def _interval(samples: np.ndarray, ci: float) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = (1.0 - ci) / 2.0
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def _check_ci(ci: float, n_resamples: int) -> None:
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must lie in (0, 1); got {ci}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive; got {n_resamples}")


def _none_if_nan(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _empty(n_resamples: int, ci: float) -> BootstrapResult:
    return BootstrapResult(
        estimate=None, low=None, high=None, midpoint=None, n=0, n_resamples=n_resamples, ci=ci
    )


def bootstrap_statistic(
    statistic: Callable[[np.ndarray], float | None],
    n_items: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap of any statistic of a set of items.

    ``statistic`` receives an index array into the items (``np.arange(n_items)`` for the
    point estimate) and returns a float, or ``None`` when undefined on that resample
    (those resamples are left out of the interval).
    """
    _check_ci(ci, n_resamples)
    if n_items == 0:
        return _empty(n_resamples, ci)
    estimate = statistic(np.arange(n_items))
    draws = np.array(
        [
            np.nan if (v := statistic(idx)) is None else v
            for idx in _resample_indices(n_items, n_resamples, seed)
        ],
        dtype=float,
    )
    low, high = _interval(draws, ci)
    midpoint = (low + high) / 2.0
    return BootstrapResult(
        estimate=_none_if_nan(estimate),
        low=_none_if_nan(low),
        high=_none_if_nan(high),
        midpoint=_none_if_nan(midpoint),
        n=n_items,
        n_resamples=n_resamples,
        ci=ci,
    )


def bootstrap_ci(
    values: Sequence[float], n_resamples: int = 1000, seed: int = 0, ci: float = 0.95
) -> BootstrapResult:
    """Percentile bootstrap interval of the mean of per-item values (macro metrics)."""
    _check_ci(ci, n_resamples)
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return _empty(n_resamples, ci)
    idx = _resample_indices(arr.size, n_resamples, seed)
    draws = arr[idx].mean(axis=1)
    low, high = _interval(draws, ci)
    return BootstrapResult(
        estimate=float(arr.mean()),
        low=low,
        high=high,
        midpoint=(low + high) / 2.0,
        n=int(arr.size),
        n_resamples=n_resamples,
        ci=ci,
    )


def bootstrap_ratio_ci(
    numerators: Sequence[float],
    denominators: Sequence[float],
    n_resamples: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> BootstrapResult:
    """Interval of a micro metric Σnum / Σden, resampling items (pairs of num, den).

    Resamples whose denominator sums to 0 are left out; the estimate is ``None`` when the
    full denominator is 0.
    """
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if num.shape != den.shape:
        raise ValueError(f"numerators and denominators differ in length: {num.size} vs {den.size}")
    _check_ci(ci, n_resamples)
    if num.size == 0:
        return _empty(n_resamples, ci)
    idx = _resample_indices(num.size, n_resamples, seed)
    num_sums, den_sums = num[idx].sum(axis=1), den[idx].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = np.where(den_sums > 0, num_sums / np.where(den_sums > 0, den_sums, 1), np.nan)
    low, high = _interval(draws, ci)
    total = float(den.sum())
    return BootstrapResult(
        estimate=float(num.sum()) / total if total > 0 else None,
        low=_none_if_nan(low),
        high=_none_if_nan(high),
        midpoint=_none_if_nan((low + high) / 2.0),
        n=int(num.size),
        n_resamples=n_resamples,
        ci=ci,
    )


def bootstrap_midpoint(
    values: Sequence[float], n_resamples: int = 1000, seed: int = 0, ci: float = 0.95
) -> float | None:
    """ContextCheck's stabilized estimate: the midpoint of the bootstrap interval of the mean."""
    return bootstrap_ci(values, n_resamples=n_resamples, seed=seed, ci=ci).midpoint


def _p_value(diffs: np.ndarray) -> float:
    finite = diffs[np.isfinite(diffs)]
    below = int(np.count_nonzero(finite <= 0))
    above = int(np.count_nonzero(finite >= 0))
    return min(1.0, 2.0 * (min(below, above) + 1) / (finite.size + 1))


def paired_bootstrap_statistic(
    statistic_a: Callable[[np.ndarray], float | None],
    statistic_b: Callable[[np.ndarray], float | None],
    n_items: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> PairedResult:
    """Paired bootstrap of statistic A minus statistic B over the same resampled items.

    Use it for metrics that are not means (balanced accuracy, macro-F1): each statistic gets
    the same index array per resample. See the module docstring for the p-value.
    """
    _check_ci(ci, n_resamples)
    if n_items == 0:
        return PairedResult(
            mean_diff=None,
            low=None,
            high=None,
            p_value=None,
            n=0,
            n_resamples=n_resamples,
            ci=ci,
        )

    def diff(idx: np.ndarray) -> float:
        a, b = statistic_a(idx), statistic_b(idx)
        return math.nan if a is None or b is None else a - b

    observed = diff(np.arange(n_items))
    draws = np.array(
        [diff(idx) for idx in _resample_indices(n_items, n_resamples, seed)], dtype=float
    )
    low, high = _interval(draws, ci)
    return PairedResult(
        mean_diff=_none_if_nan(observed),
        low=_none_if_nan(low),
        high=_none_if_nan(high),
        p_value=_p_value(draws),
        n=n_items,
        n_resamples=n_resamples,
        ci=ci,
    )


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    n: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> PairedResult:
    """Paired bootstrap test of mean(a) - mean(b), items aligned by position.

    ``n`` is the number of resamples. Returns the observed mean difference, its percentile
    interval and the two-sided p-value defined in the module docstring.
    """
    arr_a, arr_b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if arr_a.shape != arr_b.shape:
        raise ValueError(f"paired samples differ in length: {arr_a.size} vs {arr_b.size}")
    _check_ci(ci, n)
    if arr_a.size == 0:
        return PairedResult(
            mean_diff=None, low=None, high=None, p_value=None, n=0, n_resamples=n, ci=ci
        )
    d = arr_a - arr_b
    draws = d[_resample_indices(d.size, n, seed)].mean(axis=1)
    low, high = _interval(draws, ci)
    return PairedResult(
        mean_diff=float(d.mean()),
        low=low,
        high=high,
        p_value=_p_value(draws),
        n=int(d.size),
        n_resamples=n,
        ci=ci,
    )
