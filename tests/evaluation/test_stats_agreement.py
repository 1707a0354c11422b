"""Classification and rank measures of scanrag.evaluation.stats on small cases worked out by hand
(restricted label lists, unsortable labels, degenerate tables)."""

from __future__ import annotations

import math

import pytest

from scanrag.evaluation.stats_agreement import (
    balanced_accuracy,
    cohen_kappa,
    kendall_tau_b,
    macro_f1,
    mcc,
    per_class_f1,
)


def test_restricted_label_list_counts_every_item() -> None:
    # Class 1 against everything: tp = 1 (item 2), fp = 1 (item 1: gold 0, predicted 1),
    # fn = 1 (item 3: gold 1, predicted 0) -> 2 / (2 + 1 + 1) = 0.5 (scikit-learn agrees).
    gold, pred = [0, 1, 1], [1, 1, 0]
    assert per_class_f1(gold, pred, labels=[1]) == {1: 0.5}
    assert macro_f1(gold, pred, labels=[1]) == 0.5
    # Classes 1 and 2 of four items: F1_1 = 0.5 as above, F1_2 = 1 -> 0.75.
    assert macro_f1([0, 1, 1, 2], [1, 1, 0, 2], labels=[1, 2]) == pytest.approx(0.75)
    # Order of the list is the order of the result.
    assert list(per_class_f1([0, 1], [0, 1], labels=[1, 0])) == [1, 0]


def test_listed_class_without_support_or_predictions_scores_zero_division() -> None:
    assert per_class_f1([0, 0], [0, 0], labels=[0, 5]) == {0: 1.0, 5: 0.0}
    assert per_class_f1([0, 0], [0, 0], labels=[5], zero_division=1.0) == {5: 1.0}
    # zero_division only replaces undefined scores: a real 0 stays 0.
    assert per_class_f1([0, 1], [1, 0], zero_division=1.0) == {0: 0.0, 1: 0.0}


def test_per_class_f1_counts() -> None:
    # gold a a b c, pred a b b a: a: tp 1 fp 1 fn 1 -> 0.5; b: tp 1 fp 1 fn 0 -> 2/3;
    # c: tp 0 fp 0 fn 1 -> 0.
    scores = per_class_f1(list("aabc"), list("abba"))
    assert scores == pytest.approx({"a": 0.5, "b": 2 / 3, "c": 0.0})
    assert macro_f1(list("aabc"), list("abba")) == pytest.approx((0.5 + 2 / 3) / 3)


def test_labels_that_cannot_be_sorted_keep_their_order() -> None:
    gold, pred = [1, "x", 1], [1, "x", "x"]
    scores = per_class_f1(gold, pred)
    assert list(scores) == [1, "x"]
    # 1: tp 1 fp 0 fn 1 -> 2/3; "x": tp 1 fp 1 fn 0 -> 2/3
    assert scores == pytest.approx({1: 2 / 3, "x": 2 / 3})
    assert balanced_accuracy(gold, pred) == pytest.approx(0.75)  # (1/2 + 1) / 2


def test_classes_are_sorted_when_they_can_be() -> None:
    assert list(per_class_f1([3, 1, 2], [3, 1, 2])) == [1, 2, 3]


def test_balanced_accuracy_ignores_classes_only_predicted() -> None:
    # Class 9 is only predicted: recall is averaged over gold classes 0 and 1.
    assert balanced_accuracy([0, 0, 1, 1], [0, 9, 1, 1]) == pytest.approx(0.75)
    assert balanced_accuracy([0, 1], [0, 1]) == 1.0
    with pytest.raises(ValueError, match="differ in length: 1 vs 2"):
        balanced_accuracy([0], [0, 1])


def test_cohen_kappa_three_classes() -> None:
    # gold 0 0 1 2, pred 0 1 1 2: p_o = 3/4; marginals gold (2,1,1), pred (1,2,1):
    # p_e = (2*1 + 1*2 + 1*1) / 16 = 5/16 -> (3/4 - 5/16) / (11/16) = 7/11
    assert cohen_kappa([0, 0, 1, 2], [0, 1, 1, 2]) == pytest.approx(7 / 11)
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa([0], [0, 1])


def test_mcc_three_classes() -> None:
    # Same table: c = 3, s = 4, t = (2,1,1), p = (1,2,1): (3*4 - (2+2+1)) /
    # sqrt((16 - (1+4+1)) * (16 - (4+1+1))) = 7 / 10
    assert mcc([0, 0, 1, 2], [0, 1, 1, 2]) == pytest.approx(0.7)
    assert mcc([0, 1], [1, 0]) == pytest.approx(-1.0)
    # One predicted class only: the predicted side has no spread -> 0.0
    assert mcc([0, 1, 1], [1, 1, 1]) == 0.0
    with pytest.raises(ValueError):
        mcc([0], [0, 1])


def test_kendall_tau_b_two_items_and_ties() -> None:
    assert kendall_tau_b([1, 2], [1, 2]) == 1.0
    assert kendall_tau_b([1, 2], [2, 1]) == -1.0
    # x = 1 1 2, y = 1 2 3: n0 = 3, one pair tied in x (none in y), nc = 2, nd = 0:
    # 2 / sqrt(2 * 3)
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau_b([1, 2, 3], [1, 1, 2]) == pytest.approx(2 / math.sqrt(6))
    # Every pair tied in y: undefined.
    assert kendall_tau_b([1, 2, 3], [5, 5, 5]) is None
    with pytest.raises(ValueError, match="differ in length: 2 vs 1"):
        kendall_tau_b([1, 2], [1])


def test_one_sided_count_is_a_real_zero_not_zero_division() -> None:
    # Class 5: predicted once, never gold: tp 0, fp 1, fn 0 -> F1 = 0 / 1 = 0, not the
    # zero_division value (kept for 0 / 0).
    assert per_class_f1([0], [5], labels=[5], zero_division=1.0) == {5: 0.0}
