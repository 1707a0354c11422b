"""Rule-based answer matching: golden vectors written by hand for every format."""

from __future__ import annotations

import pytest

from scanrag.evaluation.docscope.answer_rules import (
    anls,
    infer_format,
    is_refusal,
    levenshtein,
    match_answer,
    numbers_in,
    parse_list,
    read_number,
)


@pytest.mark.parametrize(
    ("text", "value", "percent", "scale"),
    [
        ("21%", 21.0, True, 1.0),
        ("0.21", 0.21, False, 1.0),
        ("$1,234.5 million", 1234.5, False, 1e6),
        ("3 km", 3.0, False, 1.0),
        ("about 12 percent", 12.0, True, 1.0),
        ("-4.5", -4.5, False, 1.0),
        ("three", 3.0, False, 1.0),
        ("US$ 2.5bn", 2.5, False, 1e9),
    ],
)
def test_read_number(text: str, value: float, percent: bool, scale: float) -> None:
    number = read_number(text)
    assert number is not None
    assert (number.value, number.percent, number.scale) == (value, percent, scale)


def test_read_number_sets_years_aside_and_refuses_ambiguity() -> None:
    assert read_number("21% in 2010").value == 21.0  # type: ignore[union-attr]
    assert read_number("2010", prefer_years=True).value == 2010.0  # type: ignore[union-attr]
    assert read_number("between 3 and 5") is None
    assert read_number("no digits here") is None
    assert [n.value for n in numbers_in("1,234,567 and 8")] == [1234567.0, 8.0]


@pytest.mark.parametrize(
    ("gold", "pred", "fmt", "correct"),
    [
        ("21%", "21%", "Float", True),
        ("21%", "0.21", "Float", True),
        ("0.21", "21%", "Float", True),
        ("21%", "21", "Float", True),
        ("0.21", "21", "Float", False),
        ("2.92", "2.9", "Float", True),  # 0.7% off: inside the 1% tolerance
        ("2.92", "2.8", "Float", False),  # 4% off
        ("$1,234.5 million", "1234.5", "Float", True),
        ("$1,234.5 million", "1.2345 billion", "Float", True),
        ("$1,234.5 million", "$1,300 million", "Float", False),
        ("466.43", "The total is 466.43 USD", "Float", True),
        ("3", "3 km", "Int", True),
        ("3", "three", "Int", True),
        ("3", "3.0", "Int", True),
        ("3", "4", "Int", False),
        ("3", "3 or 4", "Int", False),  # two numbers: ambiguous
        ("1200", "1,200", "Int", True),
        ("100", "101", "Int", False),  # Int is exact, no tolerance
        (
            "Berlin School of Experimental Psychology",
            "the Berlin School of experimental psychology.",
            "Str",
            True,
        ),
        ("Berlin", "Paris", "Str", False),
        ("Gestalt", "Gestalt psychology theory", "Str", False),
        ("['Circle', 'Rectangle']", "Rectangle, circle", "List", True),
        ("['Circle', 'Rectangle']", "['Circle']", "List", False),
        ("['Circle', 'Rectangle']", "Circle, Rectangle, Square", "List", False),
        ("['71.02', '75.38']", "75.38 and 71.02", "List", True),
        ("['71.02', '75.38']", "75.38 and 80", "List", False),
        ("['Jun', 'Aug']", '["Aug", "Jun"]', "List", True),
        ("['3', 'Esia', 'Smartfren']", "Smartfren; Esia; 3", "List", True),
        ("Not answerable", "Unanswerable", "None", True),
        ("Not answerable", "The document does not mention this.", "None", True),
        ("Not answerable", "42", "None", False),
        ("Berlin", "Unanswerable", "Str", False),
        ("12", "", "Int", False),
    ],
)
def test_match_answer(gold: str, pred: str, fmt: str, correct: bool) -> None:
    assert match_answer(gold, pred, fmt).correct is correct


def test_soft_score_is_anls_above_threshold() -> None:
    result = match_answer("kitten", "sitting", "Str")  # distance 3 over 7: 0.571
    assert result.correct and result.score == pytest.approx(1 - 3 / 7)
    miss = match_answer("abc", "xyz", "Str")
    assert not miss.correct and miss.score == 0.0


def test_levenshtein_and_anls() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert anls("Hello.", "hello") == 1.0
    assert anls("", "") == 1.0


def test_parse_list_variants() -> None:
    assert parse_list("['a', 'b ']") == ["a", "b"]
    assert parse_list('["a", "b"]') == ["a", "b"]
    assert parse_list("a, b and c") == ["a", "b", "c"]
    assert parse_list("1,234 and 5") == ["1,234", "5"]


def test_infer_format_and_refusals() -> None:
    assert infer_format("21%") == "Float"
    assert infer_format("12") == "Int"
    assert infer_format("2.5") == "Float"
    assert infer_format("['a', 'b']") == "List"
    assert infer_format("Berlin") == "Str"
    assert infer_format("Not answerable") == "None"
    assert infer_format("12", answerable=False) == "None"
    assert is_refusal("Unanswerable") and is_refusal("I cannot answer this from the document")
    assert not is_refusal("Berlin") and not is_refusal(None)


def test_unanswerable_flag_overrides_the_format() -> None:
    assert match_answer("12", "Not answerable", "Int", answerable=False).correct
    assert not match_answer("12", "12", "Int", answerable=False).correct


def test_every_real_gold_answer_matches_itself(mmlb_dir) -> None:
    from scanrag.datasets import load_generic

    samples = load_generic(mmlb_dir / "questions.jsonl", validate=False).samples
    assert len(samples) > 50
    for s in samples:
        gold = s.answer if s.answerable else "Unanswerable"
        result = match_answer(s.answer, gold, s.answer_format, answerable=s.answerable)
        assert result.correct, (s.id, s.answer_format, s.answer, result)
        if s.answerable and s.answer_format in ("Int", "Float"):
            off = match_answer(s.answer, "987654321", s.answer_format)
            assert not off.correct, s.id
