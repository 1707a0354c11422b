"""ContextCheck's labels, error taxonomy and judge meta-evaluation (spec §5): every spelling
and table entry, the debiased rule's edges and the bootstrap wiring, by hand."""

from __future__ import annotations

import pytest

from scanrag.evaluation.faithfulness.meta import (
    CRITERIA,
    CRITERION_OF,
    ERROR_TYPES,
    Label,
    binary,
    debias,
    meta_evaluate,
    normalize_error_type,
    parse_label,
)
from scanrag.evaluation.stats import bootstrap_statistic
from scanrag.evaluation.stats_agreement import balanced_accuracy, macro_f1


@pytest.mark.parametrize(
    ("value", "label"),
    [
        (Label.CONTRADICTED, Label.CONTRADICTED),
        ("Attributable", Label.ATTRIBUTABLE),
        ("not attributable", Label.NOT_ATTRIBUTABLE),
        ("Not-Attributable!", Label.NOT_ATTRIBUTABLE),
        ("contradicted", Label.CONTRADICTED),
        (True, Label.ATTRIBUTABLE),
        (False, Label.NOT_ATTRIBUTABLE),
        (1, Label.ATTRIBUTABLE),
        (0, Label.NOT_ATTRIBUTABLE),
        ("supported", Label.ATTRIBUTABLE),
        ("Entailed", Label.ATTRIBUTABLE),
        ("faithful", Label.ATTRIBUTABLE),
        ("yes", Label.ATTRIBUTABLE),
        ("unsupported", Label.NOT_ATTRIBUTABLE),
        ("not supported", Label.NOT_ATTRIBUTABLE),
        ("No", Label.NOT_ATTRIBUTABLE),
        ("refuted", Label.CONTRADICTED),
        ("contradiction", Label.CONTRADICTED),
        ("contradicts", Label.CONTRADICTED),
    ],
)
def test_parse_label_spellings(value: object, label: Label) -> None:
    assert parse_label(value) is label


@pytest.mark.parametrize("value", [2, -1, 0.5, None, ["yes"], "maybe", ""])
def test_parse_label_refuses(value: object) -> None:
    with pytest.raises(ValueError, match="not a faithfulness label"):
        parse_label(value)


def test_binary() -> None:
    assert [binary(v) for v in ("Attributable", "Not Attributable", "Contradicted")] == [1, 0, 0]
    assert binary(1) == 1 and binary(False) == 0


def test_taxonomy_is_complete() -> None:
    assert list(ERROR_TYPES) == [f"R{i}" for i in range(1, 15)]
    assert list(CRITERIA) == [f"C{i}" for i in range(1, 8)]
    assert set(CRITERION_OF) == set(ERROR_TYPES)  # every error type has its criterion
    assert set(CRITERION_OF.values()) == set(CRITERIA)
    # Table 13, spot checks across criteria.
    assert (CRITERION_OF["R4"], CRITERION_OF["R14"], CRITERION_OF["R10"]) == ("C1", "C2", "C3")
    assert (CRITERION_OF["R13"], CRITERION_OF["R11"], CRITERION_OF["R3"]) == ("C4", "C5", "C6")
    assert CRITERION_OF["R12"] == "C7"


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("R1", "R1"),
        ("r14", "R14"),
        (" R7. Invented mechanism", "R7"),
        ("R03", "R3"),
        ("", None),
        ("   ", None),
        (None, None),
    ],
)
def test_normalize_error_type(value: str | None, code: str | None) -> None:
    assert normalize_error_type(value) == code


@pytest.mark.parametrize("value", ["R0", "R15", "X5", "5", "R", "RX"])
def test_unknown_error_types(value: str) -> None:
    with pytest.raises(ValueError, match="unknown error type"):
        normalize_error_type(value)


def test_debias_edges() -> None:
    # Sentence 0: right on both -> kept; 1: right but twin wrong -> flipped to wrong;
    # 2: wrong already -> kept wrong whatever the twin says; 3: no twin.
    gold = [1, 0, 1, 0]
    pred = [1, 0, 0, 1]
    out, flipped = debias(pred, gold, {0: 1, 1: 1, 2: 0})
    assert out == [1, 1, 0, 1] and flipped == 1
    assert pred == [1, 0, 0, 1]  # the input is not modified
    assert debias(pred, gold, {}) == (pred, 0)
    # The last sentence is a valid index; one past it is not; negatives are refused.
    assert debias([1], [1], {0: 0}) == ([0], 1)
    with pytest.raises(IndexError, match="rewritten twin for sentence 1, but only 1 sentences"):
        debias([1], [1], {1: 0})
    with pytest.raises(IndexError):
        debias([1], [1], {-1: 0})


def test_meta_evaluate_matches_the_bootstrap_of_each_measure() -> None:
    gold = ["Attributable", "Not Attributable", "Contradicted", "Attributable"] * 3
    pred = ["Attributable", "Attributable", "Contradicted", "Not Attributable"] * 3
    result = meta_evaluate(pred, gold, n_resamples=120, seed=4)
    g = [1, 0, 0, 1] * 3
    p = [1, 1, 0, 0] * 3
    expected_f1 = bootstrap_statistic(
        lambda idx: macro_f1([g[i] for i in idx], [p[i] for i in idx]), 12, n_resamples=120, seed=4
    )
    expected_bacc = bootstrap_statistic(
        lambda idx: balanced_accuracy([g[i] for i in idx], [p[i] for i in idx]),
        12,
        n_resamples=120,
        seed=4,
    )
    assert result.macro_f1 == expected_f1 and result.balanced_accuracy == expected_bacc
    assert result.n == 12 and result.flipped == 0 and result.debiased is False
    # Both classes at F1 0.5, recall 0.5 each.
    assert result.macro_f1.estimate == pytest.approx(0.5)
    assert result.balanced_accuracy.estimate == pytest.approx(0.5)


def test_meta_evaluate_twins_as_pairs_or_mapping() -> None:
    gold, pred = [1, 0, 1, 0], [1, 0, 1, 0]
    as_pairs = meta_evaluate(pred, gold, [(0, "Not Attributable"), ("1", 0)], n_resamples=30)
    as_map = meta_evaluate(pred, gold, {0: 0, 1: 0}, n_resamples=30)
    assert as_pairs == as_map
    assert as_map.flipped == 1 and as_map.debiased is True
    # Sentence 0 flipped to wrong: gold 1 0 1 0, pred 0 0 1 0 -> recall 1/2 and 1 -> 0.75
    assert as_map.balanced_accuracy.estimate == pytest.approx(0.75)
    empty = meta_evaluate(pred, gold, {}, n_resamples=30)
    assert empty.debiased is True and empty.flipped == 0


def test_meta_evaluate_defaults_and_errors() -> None:
    result = meta_evaluate([1, 0], [1, 0])
    assert result.macro_f1.n_resamples == 1000
    assert result == meta_evaluate([1, 0], [1, 0], n_resamples=1000, seed=0)
    with pytest.raises(ValueError, match="differ in length: 1 vs 2"):
        meta_evaluate([1], [1, 0])
    nothing = meta_evaluate([], [], n_resamples=10)
    assert nothing.n == 0 and nothing.macro_f1.estimate is None


def test_every_error_type_and_criterion_is_named_in_the_judge_prompt() -> None:
    from scanrag.evaluation.faithfulness.prompt import INSTRUCTIONS

    names = [*ERROR_TYPES.values(), *CRITERIA.values()]
    assert all(name.strip() for name in names) and len(set(names)) == len(names)
    for code, name in CRITERIA.items():
        assert f"- {code} {name}: " in INSTRUCTIONS
    for code, name in ERROR_TYPES.items():
        assert f"{code} {name}" in INSTRUCTIONS


def test_meta_evaluate_default_seed_is_0() -> None:
    gold = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1]
    pred = [1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1]
    default = meta_evaluate(pred, gold, n_resamples=200)
    assert default == meta_evaluate(pred, gold, n_resamples=200, seed=0)
    assert default != meta_evaluate(pred, gold, n_resamples=200, seed=1)
