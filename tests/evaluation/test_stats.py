"""Golden vectors for scanrag.evaluation.stats and stats_agreement, computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scanrag.evaluation.stats import (
    bootstrap_ci,
    bootstrap_midpoint,
    bootstrap_ratio_ci,
    bootstrap_statistic,
    paired_bootstrap,
    paired_bootstrap_statistic,
)
from scanrag.evaluation.stats_agreement import (
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    kendall_tau_b,
    macro_f1,
    mcc,
    per_class_f1,
)

GOLD = [1, 1, 0, 0]
PRED = [1, 0, 0, 0]


def test_accuracy() -> None:
    assert accuracy(GOLD, PRED) == 0.75
    assert accuracy([], []) is None
    with pytest.raises(ValueError, match="differ in length"):
        accuracy([1], [1, 0])


def test_macro_f1_by_hand() -> None:
    # class 0: tp=2 fp=1 fn=0 -> 4/5 ; class 1: tp=1 fp=0 fn=1 -> 2/3
    assert per_class_f1(GOLD, PRED) == pytest.approx({0: 0.8, 1: 2 / 3})
    assert macro_f1(GOLD, PRED) == pytest.approx((0.8 + 2 / 3) / 2)
    assert macro_f1([], []) is None


def test_macro_f1_all_one_class() -> None:
    # Only class 1 is seen anywhere: the unseen class never enters the mean.
    assert macro_f1([1, 1, 1], [1, 1, 1]) == 1.0
    # Naming the unseen class scores it zero_division (0), as scikit-learn does.
    assert macro_f1([1, 1, 1], [1, 1, 1], labels=[0, 1]) == 0.5
    assert macro_f1([1, 1, 1], [1, 1, 1], labels=[0, 1], zero_division=1.0) == 1.0
    # A false "0" makes class 0 seen: F1_0 = 0, F1_1 = 2*2/(2*2+0+1) = 0.8.
    assert macro_f1([1, 1, 1], [1, 0, 1]) == pytest.approx(0.4)


def test_balanced_accuracy() -> None:
    assert balanced_accuracy(GOLD, PRED) == pytest.approx(0.75)  # (1/2 + 2/2) / 2
    # Only classes present in gold count: recall of class 1 = 2/3.
    assert balanced_accuracy([1, 1, 1], [1, 0, 1]) == pytest.approx(2 / 3)
    assert balanced_accuracy([], []) is None


def test_cohen_kappa() -> None:
    # p_o = 3/4; p_e = 0.5*0.75 + 0.5*0.25 = 0.5 -> kappa = 0.25 / 0.5
    assert cohen_kappa(GOLD, PRED) == pytest.approx(0.5)
    assert cohen_kappa([0, 1, 2], [0, 1, 2]) == pytest.approx(1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # p_e = 1: undefined
    assert cohen_kappa([0, 1], [1, 0]) == pytest.approx(-1.0)


def test_mcc() -> None:
    # tp=1 tn=2 fp=0 fn=1: (1*2 - 0*1) / sqrt(1*2*2*3)
    assert mcc(GOLD, PRED) == pytest.approx(2 / math.sqrt(12))
    assert mcc([1, 1, 1], [1, 1, 1]) == 0.0  # undefined -> 0, as scikit-learn
    assert mcc([0, 1, 2], [0, 1, 2]) == pytest.approx(1.0)
    assert mcc([], []) is None


def test_kendall_tau_b() -> None:
    assert kendall_tau_b([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # ties: nc=4 nd=0, n0=6, one tie in x and one in y -> 4 / sqrt(5 * 5)
    assert kendall_tau_b([1, 2, 2, 3], [1, 2, 3, 3]) == pytest.approx(0.8)


def test_kendall_tau_b_undefined() -> None:
    assert kendall_tau_b([1.0], [2.0]) is None
    assert kendall_tau_b([], []) is None
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None


def test_bootstrap_constant_and_seeded() -> None:
    result = bootstrap_ci([2.0, 2.0, 2.0])
    assert (result.estimate, result.low, result.high, result.midpoint) == (2.0, 2.0, 2.0, 2.0)
    values = [0.0, 1.0] * 50
    a, b = bootstrap_ci(values, seed=3), bootstrap_ci(values, seed=3)
    assert a == b
    assert a.estimate == 0.5
    assert a.low < 0.5 < a.high
    assert a.midpoint == pytest.approx((a.low + a.high) / 2)
    # Normal approximation: half-width about 1.96 * 0.5 / 10 = 0.098.
    assert a.high - a.low == pytest.approx(0.196, abs=0.04)
    assert bootstrap_midpoint(values, seed=3) == a.midpoint
    assert bootstrap_ci([]).estimate is None


def test_bootstrap_ratio() -> None:
    result = bootstrap_ratio_ci([1, 0, 3], [2, 0, 4])
    assert result.estimate == pytest.approx(4 / 6)
    assert 0.5 <= result.low <= result.high <= 0.75
    assert bootstrap_ratio_ci([0, 0], [0, 0]).estimate is None
    with pytest.raises(ValueError):
        bootstrap_ratio_ci([1], [1, 2])


def test_bootstrap_statistic_macro_f1() -> None:
    gold = np.array([1, 1, 0, 0] * 10)
    pred = np.array([1, 0, 0, 0] * 10)
    result = bootstrap_statistic(
        lambda idx: macro_f1(list(gold[idx]), list(pred[idx])), gold.size, n_resamples=200
    )
    assert result.estimate == pytest.approx((0.8 + 2 / 3) / 2)
    assert result.low <= result.estimate <= result.high


def test_paired_bootstrap() -> None:
    same = paired_bootstrap([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert same.mean_diff == 0.0 and same.p_value == 1.0
    better = paired_bootstrap([1.0] * 20, [0.0] * 20, n=999)
    assert better.mean_diff == 1.0
    assert better.p_value == pytest.approx(2 / 1000)  # (0 + 1) * 2 / (999 + 1)
    noisy = paired_bootstrap([1, 0, 1, 0], [0, 1, 0, 1])
    assert noisy.mean_diff == 0.0 and noisy.p_value > 0.5
    with pytest.raises(ValueError):
        paired_bootstrap([1], [1, 2])


def test_paired_bootstrap_statistic() -> None:
    gold = [1, 0] * 10
    good, bad = list(gold), [1] * 20

    def stat(pred: list[int]):
        return lambda idx: balanced_accuracy([gold[i] for i in idx], [pred[i] for i in idx])

    result = paired_bootstrap_statistic(stat(good), stat(bad), len(gold), n_resamples=300)
    assert result.mean_diff == pytest.approx(0.5)
    assert result.p_value < 0.05
    assert result.low > 0
