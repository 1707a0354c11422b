"""MMLongBench-Doc headline numbers: accuracy and the generalized F1 (``eval_acc_and_f1``),
on cases worked out by hand (and checked against the official code)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from scanrag.evaluation.mmlongbench import official_acc_f1, official_metrics

NA = "Not answerable"
ITEMS = [
    ("4", "4", 1.0),
    ("Paris", "Pari", 0.8),
    (NA, NA, 1.0),  # accuracy only
    (NA, "5", 0.0),  # answered: precision's denominator
    ("x", NA, 0.0),  # refused: recall's denominator only
    (NA, "not answerable", 0.9),  # not the exact refusal text: counts as answered
    ("y", "z", None),  # not scored: left out
]


def test_accuracy_and_f1_by_hand() -> None:
    result = official_metrics(ITEMS)
    assert result.n == 6
    assert result.accuracy == pytest.approx(3.7 / 6)
    assert result.recall == pytest.approx(1.8 / 3)  # answerable: 4, Paris, x
    assert result.precision == pytest.approx(1.8 / 4)  # answered: 4, Paris, 5, not answerable
    assert result.f1 == pytest.approx(2 * 0.6 * 0.45 / 1.05)
    assert official_acc_f1(ITEMS) == (result.accuracy, result.f1)


def test_accuracy_sums_in_order_like_the_official_code() -> None:
    assert official_acc_f1(ITEMS)[0] == (1.0 + 0.8 + 1.0 + 0.0 + 0.0 + 0.9) / 6


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([], (0.0, 0.0)),
        ([("a", "b", None)], (0.0, 0.0)),
        ([(NA, "x", 0.5)], (0.5, 0.0)),  # no answerable item: no recall
        ([("a", NA, 0.0)], (0.0, 0.0)),  # nothing answered: no precision
        ([("a", "b", 0.0), ("c", "d", 0.0)], (0.0, 0.0)),  # recall + precision = 0
        ([("a", "a", 1.0), ("b", "b", 1.0)], (1.0, 1.0)),
        ([("a", "a", 1.0), ("b", NA, 0.0)], (0.5, pytest.approx(2 / 3))),
    ],
)
def test_edge_cases(items: list, expected: tuple) -> None:
    assert official_acc_f1(items) == expected


def test_undefined_parts_are_none() -> None:
    only_unanswerable = official_metrics([(NA, "x", 0.5)])
    assert only_unanswerable.recall is None and only_unanswerable.precision == 0.0
    all_refused = official_metrics([("a", NA, 0.0)])
    assert all_refused.recall == 0.0 and all_refused.precision is None
    empty = official_metrics([])
    assert (empty.recall, empty.precision, empty.n) == (None, None, 0)


def test_metrics_are_immutable() -> None:
    result = official_metrics(ITEMS)
    with pytest.raises(FrozenInstanceError):
        result.f1 = 1.0  # type: ignore[misc]
