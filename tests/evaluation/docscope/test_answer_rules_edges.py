"""Rule-based answer matching, the edges: number words, every scale word and refusal phrase,
years, tolerances, the ANLS threshold, list pairing, and the reasons a match reports."""

from __future__ import annotations

import pytest

from scanrag.evaluation.docscope.answer_rules import (
    FORMATS,
    Number,
    anls,
    element_format,
    infer_format,
    is_refusal,
    levenshtein,
    match_answer,
    match_list,
    match_scalar,
    normalize_text,
    numbers_in,
    numbers_match,
    parse_list,
    read_number,
)

WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
TENS = {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}


def test_every_number_word() -> None:
    expected = {word: value for value, word in enumerate(WORDS)} | TENS
    got = {word: read_number(f"There were {word} of them.") for word in expected}
    assert {w: n.value if n else None for w, n in got.items()} == {
        w: float(v) for w, v in expected.items()
    }
    assert all(n is not None and n.is_int and not n.percent for n in got.values())


def test_number_words_only_when_there_are_no_digits() -> None:
    # Digits win; only the first number word counts; words inside words do not.
    assert [n.value for n in numbers_in("two of 7")] == [7.0]
    assert [n.value for n in numbers_in("Three or four")] == [3.0]
    assert numbers_in("someone") == []
    assert match_answer("3", "Three", "Int").correct


@pytest.mark.parametrize(
    ("text", "scale"),
    [
        ("5 thousand", 1e3),
        ("5k", 1e3),
        ("5 million", 1e6),
        ("5 mn", 1e6),
        ("5m", 1e6),
        ("5 billion", 1e9),
        ("5 bn", 1e9),
        ("5B", 1e9),
        ("5 trillion", 1e12),
        ("5 tn", 1e12),
        ("5 kilometres", 1.0),  # "k" must be a whole word
        ("5 years", 1.0),
    ],
)
def test_scale_words(text: str, scale: float) -> None:
    number = read_number(text)
    assert number is not None and (number.value, number.scale) == (5.0, scale)
    assert number.candidates() == ({5.0, 5.0 * scale} if scale != 1.0 else {5.0})


@pytest.mark.parametrize("text", ["7%", "7 %", "7 percent", "7 per cent", "7 pct", "7 Percent"])
def test_percent_spellings(text: str) -> None:
    number = read_number(text)
    assert number is not None and number.percent and number.candidates() == {7.0, 0.07}


def test_percent_needs_a_word_boundary() -> None:
    assert not read_number("7 percentile").percent  # type: ignore[union-attr]
    assert not read_number("7 pcts").percent  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "value", "is_int"),
    [
        ("−3", -3.0, True),  # typographic minus
        ("+3", 3.0, True),
        (".5", 0.5, False),
        ("1e3", 1000.0, False),
        ("2E-2", 0.02, False),
        ("€ 40", 40.0, True),
        ("£40", 40.0, True),
        ("¥40", 40.0, True),
        ("₹40", 40.0, True),
        ("EUR 40", 40.0, True),
        ("40 GBP", 40.0, True),
        ("RMB 40", 40.0, True),
        ("CNY 40", 40.0, True),
        ("JPY 40", 40.0, True),
        ("INR 40", 40.0, True),
        ("usd 40", 40.0, True),
    ],
)
def test_number_forms(text: str, value: float, is_int: bool) -> None:
    number = read_number(text)
    assert number is not None and number.value == pytest.approx(value)
    assert number.is_int is is_int


def test_thousands_separators() -> None:
    assert read_number("1,234").value == 1234.0  # type: ignore[union-attr]
    assert read_number("1,234.5").value == 1234.5  # type: ignore[union-attr]
    # A comma not followed by exactly three digits separates numbers.
    assert [n.value for n in numbers_in("1,23")] == [1.0, 23.0]
    assert [n.value for n in numbers_in("12,3456")] == [12.0, 3456.0]
    # A number glued to a word or a dot is not read on its own.
    assert numbers_in("v2") == [] and [n.value for n in numbers_in("1.5.3")] == [1.5]


@pytest.mark.parametrize(
    ("value", "year"),
    [(1799, False), (1800, True), (1999, True), (2100, True), (2101, False)],
)
def test_year_range(value: int, year: bool) -> None:
    # With another number beside it, a year is set aside; anything else is ambiguous.
    found = read_number(f"{value} and 42")
    assert (found is not None and found.value == 42.0) is year


def test_years_need_a_plain_integer() -> None:
    assert read_number("2000% and 42") is None  # a percentage is no year
    assert read_number("2.0e3 and 42") is None  # nor is a float
    assert read_number("2 thousand and 42") is None  # nor a scaled number
    assert read_number("2010 and 2012") is None  # only years: all kept, ambiguous
    assert read_number("12 and 12").value == 12.0  # type: ignore[union-attr]


def test_year_gold_keeps_year_predictions() -> None:
    assert match_answer("2015", "In 2015, 12 plants", "Int").correct is False
    assert match_answer("12", "In 2015, 12 plants", "Int").correct is True


def test_numbers_match_tolerance() -> None:
    gold = Number(100.0)
    assert numbers_match(gold, Number(100.9), 0.01, exact=False)
    assert not numbers_match(gold, Number(101.5), 0.01, exact=False)
    assert not numbers_match(gold, Number(100.9), 0.01, exact=True)
    assert numbers_match(Number(0.0), Number(0.0), 0.01, exact=True)
    assert match_answer("100", "102", "Float", rel_tol=0.05).correct
    assert not match_answer("100", "102", "Float").correct


def test_match_scalar_details() -> None:
    result = match_scalar("12", "12.0", "Int", 0.01, 0.5)
    assert result == match_scalar("12", "12.0", "Int", 0.01, 0.5)
    assert (result.correct, result.score, result.method) == (True, 1.0, "Int")
    assert result.detail == "gold 12, predicted 12"
    miss = match_scalar("12", "many", "Float", 0.01, 0.5)
    assert (miss.correct, miss.score, miss.method, miss.detail) == (
        False,
        0.0,
        "Float",
        "no single number in the prediction",
    )
    # A numeric format with a gold that holds no number is compared as text.
    text = match_scalar("about a dozen", "about a dozen", "Int", 0.01, 0.5)
    assert (text.method, text.score, text.detail) == ("Str", 1.0, "anls 1.000")


def test_anls_threshold_boundary() -> None:
    # "abcd" vs "abxy": distance 2 of 4 -> 0.5, exactly the threshold: a match.
    at = match_scalar("abcd", "abxy", "Str", 0.01, 0.5)
    assert at.correct and at.score == 0.5
    below = match_scalar("abcd", "axyz", "Str", 0.01, 0.5)  # 0.25
    assert not below.correct and below.score == 0.0 and below.detail == "anls 0.250"
    assert match_answer("abcd", "abxy", "Str", threshold=0.6).correct is False


def test_normalize_text() -> None:
    assert normalize_text('  "Hello,   World!"  ') == "hello, world"
    assert normalize_text("(a) [b] {c}.") == "a) [b] {c"
    assert normalize_text("`x`;:?") == "x"
    assert normalize_text("“quoted” ‘single’") == "quoted” ‘single"
    assert anls("ab", "abcd") == 0.5


def test_levenshtein_is_symmetric_and_counts_each_edit() -> None:
    assert levenshtein("abc", "") == 3 and levenshtein("", "") == 0
    assert levenshtein("flaw", "lawn") == levenshtein("lawn", "flaw") == 2
    assert levenshtein("abc", "abd") == 1  # one substitution
    assert levenshtein("abc", "abcd") == 1  # one insertion
    assert levenshtein("abcd", "acd") == 1  # one deletion


@pytest.mark.parametrize(
    "text",
    [
        "Unanswerable",
        "not answerable.",
        "None",
        "N/A",
        "na",
        "No answer",
        "This cannot be answered.",
        "It cannot be determined.",
        "The value cannot be found.",
        "I can not answer that.",
        "I cannot answer that.",
        "We can't answer this.",
        "We can't be determine it.",
        "I can't determine it.",
        "I am unable to answer.",
        "I am unable to determine it.",
        "I am unable to find it.",
        "The report does not contain it.",
        "The report does not mention it.",
        "The report does not provide it.",
        "The report does not include it.",
        "The report does not specify it.",
        "The report does not state it.",
        "The pages do not contain it.",
        "It is not mentioned in the report.",
        "It is not provided in the report.",
        "It is not specified in the report.",
        "It is not stated in the report.",
        "It is not available in the report.",
        "It is not given in the report.",
        "There is no information about it.",
        "There is no mention on it.",
        "There is no data on it.",
        "There is no information regarding it.",
        "There is no information is given.",
        "There is insufficient information.",
        "There is not enough evidence.",
        "There is insufficient context.",
    ],
)
def test_refusal_phrases(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text", ["", "Nonetheless it grew.", "Berlin", "It is mentioned in the report.", "nano"]
)
def test_not_refusals(text: str) -> None:
    assert not is_refusal(text)


def test_parse_list_forms() -> None:
    assert parse_list("(1, 2)") == ["1", "2"]  # a Python tuple
    assert parse_list("[1, '', 'x']") == ["1", "x"]  # empty elements dropped
    assert parse_list("{'a': 1}") == ["{'a': 1}"]  # a dict is not a list: kept as one item
    assert parse_list("a; b\nc & d") == ["a", "b", "c", "d"]
    assert parse_list("[a, b]") == ["a", "b"]  # not a literal: brackets stripped, then split
    assert parse_list("'x', \"y\"") == ["x", "y"]
    assert parse_list("sand and band") == ["sand", "band"]
    assert parse_list("") == []


def test_infer_format_edges() -> None:
    assert infer_format(None) == "None"
    assert infer_format("Unanswerable") == "None"
    assert infer_format("['a']") == "Str"  # one item is no list
    assert infer_format("[1, 2]") == "List"
    assert infer_format("12 percent") == "Float"
    assert infer_format("$12") == "Int"
    assert infer_format("12 apples") == "Str"
    assert infer_format("2012") == "Int"
    assert infer_format("1 and 2") == "Str"
    assert element_format("3.5") == "Float" and element_format("x") == "Str"
    assert element_format("['a', 'b']") == "Str"


def test_match_list_details() -> None:
    same = match_list("['a', 'b']", "b, a", 0.01, 0.5)
    assert (same.correct, same.score, same.method, same.detail) == (True, 1.0, "List", "2 items")
    short = match_list("['a', 'b']", "a", 0.01, 0.5)
    assert (short.correct, short.score, short.detail) == (False, 0.0, "2 gold items, 1 predicted")
    empty = match_list("[]", "[]", 0.01, 0.5)
    assert (empty.correct, empty.score, empty.detail) == (True, 1.0, "both empty")


def test_list_pairing_needs_distinct_partners() -> None:
    # Both gold items match the first prediction, only one matches the second: a perfect
    # pairing still exists (augmenting path) ...
    assert match_answer("['10', '10.05']", "10.05, 10", "List", rel_tol=0.01).correct
    # ... but not when two gold items can only take the same prediction.
    assert not match_answer("['apple', 'apples']", "apple, pear", "List").correct
    assert match_answer("['apple', 'pear']", "pear; apple", "List").correct
    # Numbers are compared as numbers: Int exact, Float with tolerance.
    assert not match_answer("['3', '4']", "3, 5", "List").correct
    assert match_answer("['3.00', '4']", "3.01, 4", "List").correct


def test_match_answer_reasons() -> None:
    assert match_answer(None, "x", "Str").detail == "no gold answer"
    assert match_answer("12", "   ", "Int").detail == "no answer"
    assert match_answer("12", None, "Int").detail == "no answer"
    refused = match_answer("12", "Not answerable", "Int")
    assert (refused.correct, refused.detail, refused.method) == (
        False,
        "refused an answerable question",
        "Int",
    )
    none_ok = match_answer("Not answerable", "None", "None")
    assert (none_ok.correct, none_ok.score, none_ok.method, none_ok.detail) == (
        True,
        1.0,
        "None",
        "refusal",
    )
    answered = match_answer("x", "42", answerable=False)
    assert (answered.correct, answered.detail) == (False, "answered")
    # An unknown format falls back to the inferred one; a refusal gold accepts a refusal.
    assert match_answer("12", "12", "Integer").method == "Int"
    assert match_answer("Not answerable", "Unanswerable", "Str").correct
    assert FORMATS == ("Int", "Float", "Str", "List", "None")


def test_exact_match_absorbs_float_rounding() -> None:
    # 0.067 * 1e9 is 67000000.00000001 in floating point: still equal for Int.
    assert match_answer("67000000", "0.067 billion", "Int").correct
    # A zero gold is matched within an absolute 1e-9.
    assert match_answer("0", "1e-10", "Float").correct
    assert not match_answer("0", "0.001", "Float").correct


def test_currency_sign_glued_to_a_word() -> None:
    number = read_number("Total$5")
    assert number is not None and number.value == 5.0


def test_years_are_kept_when_preferred() -> None:
    assert read_number("2010 and 42", prefer_years=True) is None  # two numbers: ambiguous
    assert read_number("2010 and 42").value == 42.0  # type: ignore[union-attr]
    # A gold with a year and another number is not one number: compared as text.
    assert infer_format("2010 / 5") == "Str"
    text = match_scalar("2015 12", "12", "Int", 0.01, 0.5)
    assert (text.correct, text.method, text.detail) == (False, "Str", "anls 0.286")


def test_quotes_around_split_items() -> None:
    assert parse_list("'x', y") == ["x", "y"]
    assert parse_list('"x"; y') == ["x", "y"]


def test_results_are_frozen() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        Number(1.0).value = 2.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        match_answer("1", "1", "Int").correct = False  # type: ignore[misc]


def test_single_item_lists_and_formats() -> None:
    assert match_answer("['a']", "a", "List").correct
    assert not match_answer("['a']", "b", "List").correct
    assert element_format("3") == "Int"


def test_failed_matches_score_zero() -> None:
    for result in (
        match_answer(None, "x", "Str"),
        match_answer("12", "", "Int"),
        match_answer("12", "Unanswerable", "Int"),
        match_list("['a', 'b']", "a", 0.01, 0.5),
    ):
        assert (result.correct, result.score) == (False, 0.0)
    assert match_list("['a', 'b']", "a", 0.01, 0.5).method == "List"
    assert match_list("[]", "[]", 0.01, 0.5).method == "List"
