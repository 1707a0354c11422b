"""SIN-Bench chain metrics (spec §4, paper eq. 7–11): the threshold, tie-breaking of the
one-to-one assignment, empty chains, F1 below one, anchor-field kinds and verdict words, by
hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.sinbench.metrics import (
    TAU,
    anchor_keys,
    assign_hits,
    chain_metrics,
)
from scanrag.parsing import parse_verdict


def test_relevance_threshold_is_two_thirds() -> None:
    assert TAU == 2 / 3
    # Grade 2 of 3 reaches the threshold, grade 1 does not.
    assert chain_metrics(["fig:1"], ["fig:1"], {(0, 0): 2}).true_positives == 1
    assert chain_metrics(["fig:1"], ["fig:1"], {(0, 0): 1}).true_positives == 0


def test_threshold_tolerates_rounding() -> None:
    # 1 - 2/3 is 1/3 plus a rounding error: grade 1 (1/3) still reaches it.
    assert chain_metrics(["fig:1"], ["fig:1"], {(0, 0): 1}, tau=1 - 2 / 3).true_positives == 1


def test_ties_are_broken_by_prediction_then_gold_order() -> None:
    # Two hits on one gold pair with the same grade: the earlier prediction takes it,
    # whatever order the grades come in.
    assert assign_hits({(1, 0): 3, (0, 0): 3}) == {0: 0}
    # One hit against two gold pairs with the same grade: the earlier gold pair.
    assert assign_hits({(0, 1): 3, (0, 0): 3}) == {0: 0}
    # A higher grade wins over chain order.
    assert assign_hits({(0, 0): 2, (1, 0): 3}) == {1: 0}


def test_empty_chains_score_zero() -> None:
    nothing = chain_metrics([], ["fig:1"], {})
    assert (nothing.precision, nothing.recall, nothing.f1, nothing.n_pred) == (0.0, 0.0, 0.0, 0)
    no_gold = chain_metrics(["fig:1"], [], {})
    assert (no_gold.precision, no_gold.recall, no_gold.n_gold, no_gold.hits) == (0.0, 0.0, 0, 0)


def test_f1_when_precision_and_recall_sum_below_one() -> None:
    # 2 predictions, 1 relevant; 4 gold pairs: P = 1/2, R = 1/4, F1 = 2PR/(P+R) = 1/3
    m = chain_metrics(["fig:1", "fig:9"], ["fig:1", "fig:2", "fig:3", "fig:4"], {(0, 0): 3})
    assert (m.precision, m.recall) == (0.5, 0.25)
    assert m.f1 == pytest.approx(1 / 3)


def test_bare_numbers_in_an_anchor_field() -> None:
    # A leading bare number is a figure; later ones take the kind of the part before.
    assert anchor_keys("2 and 3") == ["fig:2", "fig:3"]
    assert anchor_keys("Table 1, 4") == ["table:1", "table:4"]


def test_field_only_spellings_in_an_anchor_field() -> None:
    # "img 3" is a figure in a field although running text would not read it.
    assert anchor_keys("img 3, Table 1") == ["fig:3", "table:1"]


@pytest.mark.parametrize(
    ("word", "verdict"),
    [
        ("yes", True),
        ("true", True),
        ("Sufficient evidence", True),
        ("supported", True),
        ("valid", True),
        ("1", True),
        ("no", False),
        ("false", False),
        ("insufficient", False),
        ("Unsupported.", False),
        ("invalid", False),
        ("0", False),
        ("unclear", None),
        ("!!!", None),
        (1, True),  # the integers 1 and 0 are yes and no (scanrag.parsing)
        (0, False),
        (2, None),
        (1.5, None),
        (False, False),
    ],
)
def test_verdict_words(word: object, verdict: bool | None) -> None:
    assert parse_verdict(word) is verdict
