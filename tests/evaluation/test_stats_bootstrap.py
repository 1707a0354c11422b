"""Bootstrap intervals, midpoints, p-values and empty inputs of scanrag.evaluation.stats, by hand.

A statistic that ignores its resample and returns 0, 1, 2, ... in call order makes the draws
a known sequence, so the percentile interval can be worked out without numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from scanrag.evaluation.stats import (
    BootstrapResult,
    PairedResult,
    bootstrap_ci,
    bootstrap_midpoint,
    bootstrap_ratio_ci,
    bootstrap_statistic,
    paired_bootstrap,
    paired_bootstrap_statistic,
)


def counter(
    estimate: float | None, skip: Callable[[int], bool] = lambda _: False
) -> Callable[[np.ndarray], float | None]:
    """First call (the full sample): ``estimate``; then the k-th resample returns k (0-based),
    or ``None`` where ``skip(k)``."""
    calls = {"n": -1}

    def statistic(idx: np.ndarray) -> float | None:
        calls["n"] += 1
        if calls["n"] == 0:
            return estimate
        k = calls["n"] - 1
        return None if skip(k) else float(k)

    return statistic


def test_percentile_interval_of_known_draws() -> None:
    # Draws 0..100: the 5th and 95th percentiles (ci 0.9) are 5 and 95, midpoint 50.
    result = bootstrap_statistic(counter(7.0), 3, n_resamples=101, ci=0.9)
    assert (result.estimate, result.low, result.high) == pytest.approx((7.0, 5.0, 95.0))
    assert result.midpoint == pytest.approx(50.0)
    assert (result.n, result.n_resamples, result.ci) == (3, 101, 0.9)
    # Default level 0.95: 2.5 and 97.5.
    default = bootstrap_statistic(counter(1.0), 3, n_resamples=101)
    assert (default.low, default.high, default.midpoint) == pytest.approx((2.5, 97.5, 50.0))


def test_interval_midpoint_is_not_the_estimate() -> None:
    # Draws 0..10 with ci 0.8: low = 1, high = 9, midpoint 5, estimate untouched.
    result = bootstrap_statistic(counter(0.25), 2, n_resamples=11, ci=0.8)
    assert (result.low, result.high, result.midpoint, result.estimate) == pytest.approx(
        (1.0, 9.0, 5.0, 0.25)
    )


def test_undefined_resamples_are_left_out() -> None:
    # Odd draws are None: the interval is that of 0, 2, ..., 20 (11 values), ci 0.8 -> 2, 18.
    result = bootstrap_statistic(counter(1.0, skip=lambda k: k % 2 == 1), 2, n_resamples=21, ci=0.8)
    assert (result.low, result.high, result.midpoint) == pytest.approx((2.0, 18.0, 10.0))


def test_every_resample_undefined_gives_no_interval() -> None:
    result = bootstrap_statistic(counter(0.5, skip=lambda k: True), 4, n_resamples=10)
    assert result.estimate == 0.5
    assert (result.low, result.high, result.midpoint) == (None, None, None)
    assert result.n == 4


def test_undefined_estimate_is_none_but_interval_stays() -> None:
    result = bootstrap_statistic(counter(None), 2, n_resamples=11, ci=0.8)
    assert result.estimate is None and (result.low, result.high) == pytest.approx((1.0, 9.0))
    infinite = bootstrap_statistic(counter(math.inf), 2, n_resamples=11, ci=0.8)
    assert infinite.estimate is None


def test_statistic_gets_the_full_sample_then_resamples_of_the_same_size() -> None:
    seen: list[np.ndarray] = []

    def record(idx: np.ndarray) -> float:
        seen.append(np.array(idx))
        return 0.0

    bootstrap_statistic(record, 3, n_resamples=200, seed=4)
    assert seen[0].tolist() == [0, 1, 2]
    resamples = seen[1:]
    assert len(resamples) == 200 and all(r.shape == (3,) for r in resamples)
    drawn = np.concatenate(resamples)
    # Indices are drawn from 0..n-1, every one of them (200 x 3 draws of 3 values).
    assert set(drawn.tolist()) == {0, 1, 2}
    # Seeded: the same seed draws the same resamples, another seed others.
    again: list[np.ndarray] = []
    bootstrap_statistic(lambda idx: again.append(np.array(idx)) or 0.0, 3, n_resamples=200, seed=4)
    assert all((a == b).all() for a, b in zip(seen, again, strict=True))
    other: list[np.ndarray] = []
    bootstrap_statistic(lambda idx: other.append(np.array(idx)) or 0.0, 3, n_resamples=200, seed=5)
    assert any((a != b).any() for a, b in zip(seen[1:], other[1:], strict=True))


EMPTY = {"estimate": None, "low": None, "high": None, "midpoint": None, "n": 0}


def test_empty_bootstrap_results() -> None:
    calls: list[object] = []
    empty = bootstrap_statistic(lambda idx: calls.append(idx) or 1.0, 0, n_resamples=7, ci=0.8)
    assert calls == []  # nothing to estimate: the statistic is never called
    assert empty == BootstrapResult(**EMPTY, n_resamples=7, ci=0.8)
    assert bootstrap_ci([], n_resamples=7, ci=0.8) == BootstrapResult(
        **EMPTY, n_resamples=7, ci=0.8
    )
    assert bootstrap_ratio_ci([], [], n_resamples=7, ci=0.8) == BootstrapResult(
        **EMPTY, n_resamples=7, ci=0.8
    )
    assert bootstrap_midpoint([]) is None
    nothing = PairedResult(
        mean_diff=None, low=None, high=None, p_value=None, n=0, n_resamples=7, ci=0.8
    )
    assert paired_bootstrap([], [], n=7, ci=0.8) == nothing
    assert paired_bootstrap_statistic(lambda i: 1.0, lambda i: 0.0, 0, n_resamples=7, ci=0.8) == (
        nothing
    )


@pytest.mark.parametrize("ci", [0.0, 1.0, -0.5, 1.5])
def test_levels_outside_the_open_unit_interval_are_refused(ci: float) -> None:
    for call in (
        lambda: bootstrap_ci([1.0], ci=ci),
        lambda: bootstrap_statistic(lambda i: 1.0, 1, ci=ci),
        lambda: bootstrap_ratio_ci([1.0], [1.0], ci=ci),
        lambda: paired_bootstrap([1.0], [1.0], ci=ci),
        lambda: paired_bootstrap_statistic(lambda i: 1.0, lambda i: 1.0, 1, ci=ci),
    ):
        with pytest.raises(ValueError, match="ci must lie in"):
            call()


def test_resample_count_must_be_positive() -> None:
    with pytest.raises(ValueError, match="n_resamples must be positive"):
        bootstrap_ci([1.0], n_resamples=0)
    with pytest.raises(ValueError, match="n_resamples must be positive"):
        paired_bootstrap([1.0], [1.0], n=0)
    # One resample is allowed: the interval is that single draw.
    one = bootstrap_ci([3.0, 3.0], n_resamples=1, ci=0.5)
    assert (one.low, one.high, one.midpoint, one.n_resamples) == pytest.approx((3.0, 3.0, 3.0, 1))


def test_bootstrap_ci_is_the_bootstrap_of_the_mean() -> None:
    values = [0.0, 1.0, 1.0, 4.0, 2.5]
    arr = np.asarray(values)
    direct = bootstrap_ci(values, n_resamples=300, seed=2, ci=0.9)
    general = bootstrap_statistic(
        lambda idx: float(arr[idx].mean()), 5, n_resamples=300, seed=2, ci=0.9
    )
    assert direct == general
    assert direct.estimate == pytest.approx(1.7)
    assert direct.n == 5 and direct.n_resamples == 300 and direct.ci == 0.9
    assert direct.midpoint == pytest.approx((direct.low + direct.high) / 2)
    assert bootstrap_midpoint(values, n_resamples=300, seed=2, ci=0.9) == direct.midpoint


def test_ratio_interval_is_the_bootstrap_of_the_ratio() -> None:
    num, den = np.array([1.0, 0.0, 3.0, 2.0]), np.array([2.0, 1.0, 4.0, 2.0])
    direct = bootstrap_ratio_ci(num, den, n_resamples=300, seed=1, ci=0.9)
    general = bootstrap_statistic(
        lambda idx: float(num[idx].sum() / den[idx].sum()), 4, n_resamples=300, seed=1, ci=0.9
    )
    assert direct == general
    assert direct.estimate == pytest.approx(6 / 9)


def test_ratio_resamples_with_zero_denominator_are_left_out() -> None:
    # Item 2 has nothing to count: a resample of only item 2 has no ratio, every other
    # resample has ratio 1 (1/1 per item 1), so the interval is exactly [1, 1].
    result = bootstrap_ratio_ci([1.0, 0.0], [1.0, 0.0], n_resamples=200, seed=0)
    assert (result.estimate, result.low, result.high, result.midpoint) == pytest.approx(
        (1.0, 1.0, 1.0, 1.0)
    )
    assert result.n == 2
    # No resample has a denominator: nothing but the (undefined) estimate.
    none = bootstrap_ratio_ci([0.0, 0.0], [0.0, 0.0], n_resamples=20)
    assert (none.estimate, none.low, none.high, none.midpoint, none.n) == (
        None,
        None,
        None,
        None,
        2,
    )


def test_ratio_lengths_must_agree() -> None:
    with pytest.raises(ValueError, match="differ in length: 1 vs 2"):
        bootstrap_ratio_ci([1.0], [1.0, 2.0])


def test_paired_bootstrap_interval_is_that_of_the_differences() -> None:
    a, b = [1.0, 0.5, 0.0, 1.0], [0.0, 0.5, 0.5, 0.0]
    paired = paired_bootstrap(a, b, n=300, seed=6, ci=0.9)
    diffs = bootstrap_ci([1.0, 0.0, -0.5, 1.0], n_resamples=300, seed=6, ci=0.9)
    assert (paired.low, paired.high) == (diffs.low, diffs.high)
    assert paired.mean_diff == pytest.approx(0.375)
    assert (paired.n, paired.n_resamples, paired.ci) == (4, 300, 0.9)
    general = paired_bootstrap_statistic(
        lambda idx: float(np.asarray(a)[idx].mean()),
        lambda idx: float(np.asarray(b)[idx].mean()),
        4,
        n_resamples=300,
        seed=6,
        ci=0.9,
    )
    assert (general.low, general.high, general.p_value) == (paired.low, paired.high, paired.p_value)
    assert general.mean_diff == pytest.approx(0.375)
    assert (general.n, general.n_resamples, general.ci) == (4, 300, 0.9)
    with pytest.raises(ValueError, match="differ in length: 1 vs 2"):
        paired_bootstrap([1.0], [1.0, 2.0])


def diff_counter(values: list[float | None]) -> tuple[Callable, Callable]:
    """Statistic A returns values[k] on its k-th call, statistic B always 0."""
    calls = {"n": -1}

    def a(idx: np.ndarray) -> float | None:
        calls["n"] += 1
        return values[calls["n"]]

    return a, lambda idx: 0.0


@pytest.mark.parametrize(
    ("draws", "p"),
    [
        # zeros count on both sides: below = #{<= 0} = 1, above = 9 -> 2 * 2 / 10
        ([0.0, 1, 2, 3, 4, 5, 6, 7, 8], 0.4),
        # all positive: below = 0 -> 2 * 1 / 10
        ([1.0, 1, 2, 3, 4, 5, 6, 7, 8], 0.2),
        # mirrored: above = 1 (the zero) -> 0.4
        ([0.0, -1, -2, -3, -4, -5, -6, -7, -8], 0.4),
        # balanced: min(5, 5) + 1 = 6 -> 12 / 10, capped at 1
        ([-1.0, -2, -3, -4, -5, 1, 2, 3, 4, 5], 1.0),
        # undefined draws are left out of the count and of the total: 2 * 1 / 4
        ([1.0, None, 2.0, None, 3.0], 0.5),
    ],
)
def test_p_value_by_hand(draws: list[float | None], p: float) -> None:
    a, b = diff_counter([0.3, *draws])
    result = paired_bootstrap_statistic(a, b, 2, n_resamples=len(draws))
    assert result.p_value == pytest.approx(p)
    assert result.mean_diff == pytest.approx(0.3)


def test_paired_statistic_undefined_on_the_full_sample() -> None:
    a, b = diff_counter([None, 1.0, 2.0, 3.0])
    result = paired_bootstrap_statistic(a, b, 2, n_resamples=3, ci=0.5)
    assert result.mean_diff is None
    assert (result.low, result.high) == pytest.approx((1.5, 2.5))
    none = paired_bootstrap_statistic(lambda idx: 1.0, lambda idx: None, 2, n_resamples=3)
    assert (none.mean_diff, none.low, none.high) == (None, None, None)
    assert none.p_value == 1.0  # no finite draw: 2 * 1 / 1, capped


def test_paired_bootstrap_p_value_of_a_sure_difference() -> None:
    # Every resampled difference is 1 > 0: below = 0 -> p = 2 / (n + 1).
    result = paired_bootstrap([2.0, 3.0], [1.0, 2.0], n=99)
    assert result.p_value == pytest.approx(0.02)
    assert (result.low, result.high, result.mean_diff) == pytest.approx((1.0, 1.0, 1.0))


def test_defaults_are_1000_resamples_seed_0_level_95() -> None:
    # Spread-out values, so that the interval depends on the exact draws (seed 1 differs).
    values = [0.13, 0.72, 0.35, 0.91, 0.5]
    default = bootstrap_ci(values)
    assert (default.n_resamples, default.ci) == (1000, 0.95)
    assert default == bootstrap_ci(values, n_resamples=1000, seed=0, ci=0.95)
    assert default != bootstrap_ci(values, n_resamples=1000, seed=1, ci=0.95)
    assert bootstrap_ratio_ci(values, [1.0] * 5) != bootstrap_ratio_ci(values, [1.0] * 5, seed=1)
    assert (
        paired_bootstrap(values, [0.5] * 5).low != paired_bootstrap(values, [0.5] * 5, seed=1).low
    )
    assert bootstrap_midpoint(values) == default.midpoint
    ratio = bootstrap_ratio_ci(values, [1.0] * 5)
    assert ratio == bootstrap_ratio_ci(values, [1.0] * 5, n_resamples=1000, seed=0, ci=0.95)
    arr = np.asarray(values)
    stat = bootstrap_statistic(lambda idx: float(arr[idx].mean()), 5)
    assert stat == default
    paired = paired_bootstrap(values, [0.5] * 5)
    assert paired == paired_bootstrap(values, [0.5] * 5, n=1000, seed=0, ci=0.95)
    assert paired.n_resamples == 1000
    general = paired_bootstrap_statistic(lambda idx: float(arr[idx].mean()), lambda idx: 0.5, 5)
    assert general.n_resamples == 1000 and general.ci == 0.95
    assert (general.low, general.high, general.p_value) == (paired.low, paired.high, paired.p_value)


def test_ratio_with_fractional_denominators() -> None:
    # Denominators below 1 are real denominators: every resample of item 1 alone has ratio
    # 0.25 / 0.5 = 0.5, of item 2 alone none, mixed ones 0.25k / 0.5k = 0.5.
    result = bootstrap_ratio_ci([0.25, 0.0], [0.5, 0.0], n_resamples=50)
    assert (result.estimate, result.low, result.high) == (0.5, 0.5, 0.5)


def test_ratio_of_a_single_item() -> None:
    result = bootstrap_ratio_ci([1.0], [4.0], n_resamples=10)
    assert (result.estimate, result.low, result.high, result.n) == (0.25, 0.25, 0.25, 1)
    single = bootstrap_ci([2.0], n_resamples=10)
    assert (single.estimate, single.low, single.n) == (2.0, 2.0, 1)
    paired = paired_bootstrap([2.0], [0.5], n=10)
    assert (paired.mean_diff, paired.low, paired.n) == (1.5, 1.5, 1)
    stat = bootstrap_statistic(lambda idx: 3.0, 1, n_resamples=10)
    assert (stat.estimate, stat.low, stat.n) == (3.0, 3.0, 1)
    general = paired_bootstrap_statistic(lambda idx: 3.0, lambda idx: 1.0, 1, n_resamples=10)
    assert (general.mean_diff, general.low, general.n) == (2.0, 2.0, 1)
