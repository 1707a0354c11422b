"""Statistics for headline metrics: bootstrap intervals, paired tests, agreement measures.

Everything here is pure (numpy only) and deterministic for a given ``seed``.

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
* Classification measures follow scikit-learn's defaults so numbers are comparable:
  classes are the union of gold and predicted labels unless ``labels`` is given; a
  precision/recall/F1 with a zero denominator counts as ``zero_division`` (0.0); balanced
  accuracy averages recall over the classes present in the gold labels; MCC is 0.0 when
  undefined. Cohen's κ and Kendall's τ_b are ``None`` when undefined (scikit-learn/scipy
  return NaN there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np
from pydantic import BaseModel

Label = Hashable


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


# -- classification agreement -------------------------------------------------------------


def _check_pair(gold: Sequence[Label], pred: Sequence[Label]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"gold and predicted labels differ in length: {len(gold)} vs {len(pred)}")


def _classes(gold: Sequence[Label], pred: Sequence[Label]) -> list[Label]:
    seen: dict[Label, None] = {}
    for label in [*gold, *pred]:
        seen.setdefault(label, None)
    try:
        return sorted(seen)  # type: ignore[type-var]
    except TypeError:
        return list(seen)


def _confusion(gold: Sequence[Label], pred: Sequence[Label], labels: Sequence[Label]) -> np.ndarray:
    """Confusion matrix, rows = gold, columns = predicted; labels outside ``labels`` are dropped."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=float)
    for g, p in zip(gold, pred, strict=True):
        if g in index and p in index:
            matrix[index[g], index[p]] += 1
    return matrix


def accuracy(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Fraction of positions where the labels agree; ``None`` for no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    return sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)


def per_class_f1(
    gold: Sequence[Label],
    pred: Sequence[Label],
    labels: Sequence[Label] | None = None,
    zero_division: float = 0.0,
) -> dict[Label, float]:
    """F1 of each class (one-vs-rest); a zero denominator gives ``zero_division``.

    With ``labels``, only those classes are scored, but each against every item, as
    scikit-learn does: a prediction of a listed class on an item of an unlisted one is a
    false positive, and the reverse a false negative.
    """
    _check_pair(gold, pred)
    classes = list(labels) if labels is not None else _classes(gold, pred)
    everything = list(dict.fromkeys([*classes, *_classes(gold, pred)]))
    matrix = _confusion(gold, pred, everything)
    scores: dict[Label, float] = {}
    for label in classes:
        i = everything.index(label)
        tp = matrix[i, i]
        fp = matrix[:, i].sum() - tp
        fn = matrix[i, :].sum() - tp
        denom = 2 * tp + fp + fn
        scores[label] = float(2 * tp / denom) if denom > 0 else zero_division
    return scores


def macro_f1(
    gold: Sequence[Label],
    pred: Sequence[Label],
    labels: Sequence[Label] | None = None,
    zero_division: float = 0.0,
) -> float | None:
    """Unweighted mean of per-class F1 (scikit-learn ``f1_score(average="macro")``).

    Classes default to those seen in gold or predictions, so a class with neither support
    nor predictions never enters the mean; naming it in ``labels`` scores it
    ``zero_division`` (0.0), as scikit-learn does. ``None`` for no items.
    """
    _check_pair(gold, pred)
    if not gold:
        return None
    scores = per_class_f1(gold, pred, labels=labels, zero_division=zero_division)
    return float(np.mean(list(scores.values()))) if scores else None


def balanced_accuracy(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Mean recall over the classes present in the gold labels; ``None`` for no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    classes = _classes(gold, pred)
    matrix = _confusion(gold, pred, classes)
    support = matrix.sum(axis=1)
    present = support > 0
    recalls = np.diag(matrix)[present] / support[present]
    return float(recalls.mean())


def cohen_kappa(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e); ``None`` when p_e = 1 (one shared class) or no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    classes = _classes(gold, pred)
    matrix = _confusion(gold, pred, classes)
    total = matrix.sum()
    observed = np.trace(matrix) / total
    expected = float((matrix.sum(axis=1) * matrix.sum(axis=0)).sum() / total**2)
    if math.isclose(expected, 1.0):
        return None
    return float((observed - expected) / (1.0 - expected))


def mcc(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Matthews correlation (multi-class R_K form); 0.0 when undefined, ``None`` for no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    classes = _classes(gold, pred)
    matrix = _confusion(gold, pred, classes)
    t_k, p_k = matrix.sum(axis=1), matrix.sum(axis=0)
    correct, total = np.trace(matrix), matrix.sum()
    numerator = correct * total - float(t_k @ p_k)
    denominator = math.sqrt((total**2 - float(p_k @ p_k)) * (total**2 - float(t_k @ t_k)))
    if denominator == 0:
        return 0.0
    return float(numerator / denominator)


# -- rank correlation -----------------------------------------------------------------------


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ_b with tie correction: (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2)).

    n_0 = n(n−1)/2 pairs, n_1 / n_2 = pairs tied in x / in y; a pair tied in either counts
    as neither concordant nor discordant. ``None`` when undefined: fewer than two items,
    or every pair tied in x or in y.
    """
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} vs {len(y)}")
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = xs.size
    if n < 2:
        return None
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n - 1):
        dx = np.sign(xs[i + 1 :] - xs[i])
        dy = np.sign(ys[i + 1 :] - ys[i])
        product = dx * dy
        concordant += int(np.count_nonzero(product > 0))
        discordant += int(np.count_nonzero(product < 0))
        tied_x += int(np.count_nonzero(dx == 0))
        tied_y += int(np.count_nonzero(dy == 0))
    pairs = n * (n - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    if denominator == 0:
        return None
    return (concordant - discordant) / denominator
