"""The safe reader of list answers written as expressions: every form it computes gives what
Python's ``eval`` gives, errors where ``eval`` raises, and a reason for every refused form."""

from __future__ import annotations

import time

import pytest

from scanrag.evaluation.mmlongbench.expressions import (
    MAX_EXPONENT,
    MAX_INT_BITS,
    OutsideSubsetError,
    TooCostlyError,
    evaluate,
    time_bound,
)
from scanrag.evaluation.mmlongbench.official import official_outcome

COMPUTED = [
    "['White'] + ['10%']",
    "[['a', 'b']][0]",
    "[f'a']",
    "['a', 'b'][::-1]",
    "[*['x'], 'y']",
    "[*('x', 'z'), *{'q'}]",
    "['a', 'b', 'c'][1:]",
    "['a', 'b', 'c'][-1]",
    "[1 + 2, 3 - 1, 2 * 3, 7 / 2, 7 // 2, 7 % 4, 2 ** 10, -5, +5]",
    "[1.5 * 2, 1e3, 0x1f, 1_000]",
    "[f'{1 + 1}%', f'{3.14159:.2f}', f'{\"x\"!r}', f'{\"é\"!a}', f'{5:>4}']",
    "[('a', 1), {'k': 'v'}['k'], {1, 2}]",
    "[True + 1, None, 'a' 'b']",
    "('a', 'b')",
    "{'a': 1}",
    "[[1, 2] + [3]][0][::2]",
    "['a'] + []",
    "[1j * 2]",
]


@pytest.mark.parametrize("text", COMPUTED)
def test_the_value_is_evals(text: str) -> None:
    assert evaluate(text) == eval(text)


RAISING = [
    ("[Apple, Banana]", NameError),
    ("[1 / 0]", ZeroDivisionError),
    ("[1] + 'a'", TypeError),
    ("['a'][3]", IndexError),
    ("{'a': 1}['b']", KeyError),
    ("[*5]", TypeError),
    ("[1, 2", SyntaxError),
    ("['a'", SyntaxError),
]


@pytest.mark.parametrize(("text", "error"), RAISING)
def test_errors_are_evals(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        eval(text)
    with pytest.raises(error):
        evaluate(text)


REFUSED = [
    ("[str(1)]", "call is outside the safe subset"),
    ("['a'].copy()", "call is outside the safe subset"),
    ("['a'.upper]", "attribute is outside the safe subset"),
    ("[1 < 2]", "compare is outside the safe subset"),
    ("['a'] or ['b']", "boolop is outside the safe subset"),
    ("[x for x in 'ab']", "listcomp is outside the safe subset"),
    ("[lambda: 1]", "lambda is outside the safe subset"),
    ("['a'] * 3", "Mult of non-numbers is outside the safe subset"),
    ("[not 1]", "Not is outside the safe subset"),
    ("[~1]", "Invert is outside the safe subset"),
    ("[1 << 2]", "operator LShift is outside the safe subset"),
    (f"[2 ** {MAX_EXPONENT + 1}]", f"an exponent above {MAX_EXPONENT} is outside the safe subset"),
    ("[f'{1:>99999}']", "a format width above 10000 is outside the safe subset"),
    ("{**{'a': 1}}", "** unpacking in a dict is outside the safe subset"),
    ("['a' if 1 else 'b']", "ifexp is outside the safe subset"),
    ("[__import__('os')]", "call is outside the safe subset"),
]


@pytest.mark.parametrize(("text", "reason"), REFUSED)
def test_other_forms_are_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(OutsideSubsetError) as caught:
        evaluate(text)
    assert str(caught.value) == reason


def test_long_and_deep_expressions() -> None:
    with pytest.raises(OutsideSubsetError, match="longer than"):
        evaluate("[" + "1," * 60_000 + "]")
    with pytest.raises((RecursionError, MemoryError, SyntaxError)):
        evaluate("[" * 5000 + "]" * 5000)


# --------------------------------------------------------------------------- bounds (issue 31.5)

TEN_WIDE = " + ".join(["f'{1:>9999}'"] * 10)  # 99,990 characters
BIG = [
    (
        "[(9**999)**999]",
        "a power of up to 3,163,833 bits (3,167-bit base, exponent 999) is outside the safe "
        "subset (at most 14,000 bits)",
    ),
    (
        "[((9**999)**999)**999]",
        "a power of up to 3,163,833 bits (3,167-bit base, exponent 999) is outside the safe "
        "subset (at most 14,000 bits)",
    ),
    (
        "[9**999 * 9**999 * 9**999 * 9**999 * 9**999]",
        "a product of up to 15,835 bits is outside the safe subset (at most 14,000 bits)",
    ),
    (
        "[" + " * ".join(["2 ** 999"] * 15) + "]",
        "a product of up to 14,987 bits is outside the safe subset (at most 14,000 bits)",
    ),
    (
        "[" + " + ".join(["f'{1:>9999}'"] * 11) + "]",
        "a string of 109,989 characters is outside the safe subset (at most 100,000)",
    ),
    (
        "[*(" + TEN_WIDE + "), *(" + TEN_WIDE + ")]",
        "a list of 199,980 items is outside the safe subset (at most 100,000)",
    ),
]


@pytest.mark.parametrize(("text", "reason"), BIG)
def test_every_intermediate_is_bounded_before_it_is_made(text: str, reason: str) -> None:
    started = time.perf_counter()
    with pytest.raises(TooCostlyError) as caught:
        evaluate(text)
    assert reason in str(caught.value)
    outcome = official_outcome("['a']", text, "List")  # scored 0 with the reason, no raise
    assert (outcome.score, outcome.failure) == (0.0, None) and reason in str(outcome.refused)
    assert time.perf_counter() - started < 5  # a generous ceiling: it takes microseconds


@pytest.mark.parametrize(
    "text",
    [
        "[9999 ** 1000]",  # 13,288 bits, estimated at 14,000: still computed
        "[2 ** 1000 * 2 ** 1000, (-3) ** 999, 2 ** -1000, 10 ** 999 // 7 ** 300]",
        "[" + TEN_WIDE + "]",
        "[1.5 ** 1000]",
    ],
)
def test_values_inside_the_bounds_are_evals(text: str) -> None:
    assert evaluate(text) == eval(text)


def test_a_float_overflow_is_evals() -> None:
    for text in ("[1e300 ** 2]", "[10 ** 999 * 1e10]", "[10 ** 400 / 3]"):
        with pytest.raises(OverflowError):
            eval(text)
        with pytest.raises(OverflowError):
            evaluate(text)


def test_the_printed_value_of_every_allowed_integer_exists() -> None:
    """``str`` of an integer near the bound works (the released code's ``clean_answer``
    prints every item; past 4,300 digits ``str`` raises ValueError)."""
    value = evaluate("[" + " * ".join(["2 ** 999"] * 14) + "]")[0]
    assert value.bit_length() > MAX_INT_BITS - 20 and len(str(value)) > 4_200


def test_an_evaluation_past_its_time_bound_is_refused() -> None:
    text = "[" + ", ".join(["1 + 1"] * 2000) + "]"
    assert evaluate(text) == [2] * 2000
    with time_bound(0.0), pytest.raises(TooCostlyError, match="took longer than its time bound"):
        evaluate(text)


def test_an_items_comparison_past_its_time_bound_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Long answers compared by edit distance (quadratic) stop at the item's bound."""
    from scanrag.evaluation.mmlongbench import official

    monkeypatch.setattr(official, "ITEM_SECONDS", 0.05)
    started = time.perf_counter()
    outcome = official_outcome("a" * 20_000, "b" * 20_000, "Str")
    assert outcome.score == 0.0 and outcome.failure is None
    assert outcome.refused == "comparing the answers took longer than its time bound"
    assert time.perf_counter() - started < 5
    assert official_outcome("a" * 200, "a" * 199 + "b", "Str").refused is None
