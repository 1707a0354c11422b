"""The safe reader of list answers written as expressions: every form it computes gives what
Python's ``eval`` gives, errors where ``eval`` raises, and a reason for every refused form."""

from __future__ import annotations

import pytest

from scanrag.evaluation.mmlongbench.expressions import MAX_EXPONENT, OutsideSubsetError, evaluate

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
