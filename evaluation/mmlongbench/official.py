"""MMLongBench-Doc's released answer scoring, rule for rule (``eval/eval_score.py``).

:func:`official_score` gives, for a gold answer, an (extracted) prediction and the gold's
``answer_format``, the number the benchmark's own ``eval_score`` gives, quirks included.
Where the official code raises (a gold ``Float`` that is no number, a list that is no Python
literal, an empty gold list) the benchmark's run scripts record 0, and so does this module.

The rules, by format:

* ``Int``: the gold must read as a Python integer and the prediction as a float, which is
  then truncated toward zero (``"4.7"`` scores 1 against ``4``). No separators, units or
  signs other than Python's own: ``"9,259"`` scores 0 against ``9259``. A gold that is no
  integer scores 0, except the empty gold, which scores 1 against anything.
* ``Float``: both sides are cleaned (see :func:`clean_answer`) and must read as floats. The
  prediction matches the gold, the gold / 100 or the gold × 100 when it is within 1 %
  (relative) of one of them, or equal to it after rounding both to the shorter number of
  decimals shown (at least 2).
* ``Str`` and ``None``: both sides are cleaned; when the gold looks like a number run, a
  date, a time, a URL, an e-mail address, a code file or a page reference
  (:func:`needs_exact_match`) the prediction must equal it, otherwise the score is ANLS:
  1 - edit distance / longer length, set to 0 at or below 0.5. A ``None`` gold is the text
  "Not answerable", compared the same way.
* anything else (``List``): gold and prediction starting with ``[`` are read as Python list
  literals, anything else is a one-item list. Different lengths score 0. Items are cleaned
  and sorted on both sides; when the smallest gold item is a number or needs an exact match,
  the two sorted lists must be equal item by item, otherwise the score is the lowest ANLS of
  the items paired in sorted order.

The official code reads lists with ``eval``; this module computes the same values without it
(:mod:`scanrag.evaluation.mmlongbench.expressions`: literals, ``+``, indexing, slicing, f-strings,
``*`` unpacking, arithmetic on numbers), so ``"['White'] + ['10%']"`` is the list it makes.
A form outside that set (a call, say) scores 0 with the reason (:class:`Outcome`).

Where ``eval_score`` raises (a ``Float`` gold that is no number, a list that ``eval`` cannot
read, two empty lists), :func:`official_outcome` says so: the benchmark's pipeline then records
the prediction "Failed to extract" with a score of 0 (:func:`official_score` returns 0.0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scanrag.evaluation.mmlongbench.expressions import (
    OutsideSubsetError,
    check_time,
    evaluate,
    time_bound,
)

NOT_ANSWERABLE = "Not answerable"
ANLS_THRESHOLD = 0.5
FLOAT_REL_TOL = 0.01
MIN_DECIMALS = 2
DECIMALS_WITHOUT_POINT = 3
ITEM_SECONDS = 10.0  # one prediction's score, expression and edit distances included

_EDGE_QUOTE = re.compile(r"^['\"]|['\"]$")
# Full-string patterns of golds that need an exact match. The official "YYYY-MM" pattern is
# left out: every string it matches is already a number run.
_NUMBER_RUN = re.compile(r"\d+(?:-\d+|\s\d+)?")  # 42, 2015-2016, 555 1234
_DATE = re.compile(r"\d{4}[-\s]\d{2}[-\s]\d{2}")  # 2024-05-01
_EMAIL = re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}")
_EXACT_PATTERNS = (_NUMBER_RUN, _DATE, _EMAIL)
# What ``eval`` (and the code right after it) may raise on a list answer.
_EVAL_ERRORS = (
    ValueError,
    TypeError,
    SyntaxError,
    NameError,
    ArithmeticError,
    LookupError,
    MemoryError,
    RecursionError,
)


class ReleasedCodeRaisesError(ValueError):
    """``eval_score`` raises on this case; its pipeline scores it 0 as "Failed to extract"."""


@dataclass(frozen=True)
class Outcome:
    """The official score of one prediction, and why it is 0 when no rule decided it.

    ``failure``: the released ``eval_score`` raises here (its pipeline then records the
    prediction "Failed to extract"). ``refused``: the prediction is an expression outside the
    safe subset (``eval`` might have computed a list; here it scores 0)."""

    score: float
    failure: str | None = None
    refused: str | None = None


def clean_answer(value: object) -> str:
    """Lower case and trimmed, without parenthetical notes, one quote at either end, leading
    dollar signs and trailing percent signs: ``'"$1,200 (2019)"'`` becomes ``"1,200"``."""
    text = str(value).lower().strip()
    text = drop_parentheticals(text).strip()
    text = _EDGE_QUOTE.sub("", text).strip()
    text = text.lstrip("$").strip()
    return text.rstrip("%").strip()


def drop_parentheticals(text: str) -> str:
    """``re.sub(r"\\s*\\([^)]*\\)", "", text)``, the released cleaning step, in linear time
    (the pattern takes time quadratic in a run of spaces or of ``(``: minutes for an answer of
    100,000 characters)."""
    out: list[str] = []
    done = 0
    while (opening := text.find("(", done)) >= 0:
        closing = text.find(")", opening + 1)
        if closing < 0:  # no later "(" has a ")" after it either
            break
        start = opening
        while start > done and text[start - 1].isspace():  # the \s* before the "("
            start -= 1
        out.append(text[done:start])
        done = closing + 1
    out.append(text[done:])
    return "".join(out)


def needs_exact_match(text: str) -> bool:
    """Whether a cleaned gold is compared by equality instead of ANLS: a URL (``https://``),
    a code file (``.py``, ``ipynb``), a page reference, a number run (``42``, ``2015-2016``,
    phone numbers), a time (``a.m.``/``p.m.``), a date or an e-mail address."""
    return (
        "https://" in text
        or text.endswith((".py", "ipynb"))
        or text.startswith("page")
        or "a.m." in text
        or "p.m." in text
        or any(pattern.fullmatch(text) for pattern in _EXACT_PATTERNS)
    )


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one character)."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        check_time("comparing the answers")  # a row costs len(b) steps
        current = [i]
        for j, char_b in enumerate(b, start=1):
            cost = 0 if char_a == char_b else 1
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost))
        previous = current
    return previous[-1]


def anls(gold: str, pred: str, threshold: float = ANLS_THRESHOLD) -> float:
    """1 - edit distance / longer length, 0 when that is not above ``threshold``.

    The length is taken of the upper-cased strings, as officially (``"ß"`` counts 2)."""
    longest = max(len(gold.upper()), len(pred.upper()))
    similarity = 1.0 - (levenshtein(gold, pred) / longest if longest else 0.0)
    return similarity if similarity > threshold else 0.0


def _decimals(value: float) -> int:
    """Digits after the point in ``str(value)`` (3 when there is no point: ``1e-05``)."""
    text = str(value)
    return len(text.split(".")[-1]) if "." in text else DECIMALS_WITHOUT_POINT


def float_equal(gold: float, pred: float) -> bool:
    """The official Float match: ``pred`` against gold / 100, gold and gold × 100, each
    within 1 % or equal after rounding to the shorter shown precision (at least 2)."""
    for candidate in (gold / 100, gold, gold * 100):
        if math.isclose(candidate, pred, rel_tol=FLOAT_REL_TOL):
            return True
        digits = max(min(_decimals(pred), _decimals(candidate)), MIN_DECIMALS)
        if round(pred, digits) == round(candidate, digits):
            return True
    return False


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def score_int(gold: str, pred: str) -> float:
    try:
        expected = int(gold)
    except ValueError:
        return float(gold == "")  # the official comparison falls back to gold == ""
    try:
        given = int(float(pred))
    except (ValueError, OverflowError):
        return 0.0
    return float(expected == given)


def score_float(gold: str, pred: str) -> float:
    try:
        expected = float(clean_answer(gold))
    except ValueError as exc:
        raise ReleasedCodeRaisesError(f"the Float gold {gold!r} is no number") from exc
    try:
        given = float(clean_answer(pred))
    except ValueError:
        return 0.0
    return float(float_equal(expected, given))


def score_text(gold: str, pred: str) -> float:
    expected, given = clean_answer(gold), clean_answer(pred)
    if needs_exact_match(expected):
        return float(expected == given)
    return anls(expected, given)


def list_items(text: str) -> list[object]:
    """The items of a list answer: the value of the expression when ``text`` starts with ``[``
    (a list, else one item; :class:`ReleasedCodeRaisesError` where ``eval`` would raise,
    :class:`~scanrag.evaluation.mmlongbench.expressions.OutsideSubsetError` for a form not computed
    here), else ``[text]``."""
    if not text.startswith("["):
        return [text]
    try:
        value = evaluate(text)
    except OutsideSubsetError:
        raise
    except _EVAL_ERRORS as exc:
        raise ReleasedCodeRaisesError(f"eval cannot read {text[:80]!r}: {exc}") from exc
    return value if isinstance(value, list) else [value]


def score_list(gold: str, pred: str) -> float:
    expected, given = list_items(gold), list_items(pred)
    if len(expected) != len(given):
        return 0.0
    if not expected:
        raise ReleasedCodeRaisesError("two empty lists (the released code reads the first item)")
    gold_items = sorted(_cleaned(expected))
    pred_items = sorted(_cleaned(given))
    if _is_number(gold_items[0]) or needs_exact_match(gold_items[0]):
        return float("-".join(gold_items) == "-".join(pred_items))
    return min(map(anls, gold_items, pred_items))


def _cleaned(items: list[object]) -> Iterator[str]:
    for item in items:
        check_time("cleaning the list items")
        yield clean_answer(item)


SCORERS_BY_FORMAT: dict[str, Callable[[str, str], float]] = {
    "Int": score_int,
    "Float": score_float,
    "Str": score_text,
    "None": score_text,
}


def official_outcome(gold: str, pred: str, answer_format: str) -> Outcome:
    """What MMLongBench-Doc's ``eval_score(gold, pred, answer_format)`` gives: its score, or
    that it raises. Formats other than ``Int``, ``Float``, ``Str`` and ``None`` are scored as
    lists, as officially. A prediction whose score would take longer than
    :data:`ITEM_SECONDS` (an expression past its bounds, answers too long to compare) is
    refused, as a form outside the safe subset is."""
    try:
        with time_bound(ITEM_SECONDS):
            return Outcome(SCORERS_BY_FORMAT.get(answer_format, score_list)(gold, pred))
    except OutsideSubsetError as exc:
        return Outcome(0.0, refused=str(exc))
    except ReleasedCodeRaisesError as exc:
        return Outcome(0.0, failure=str(exc))


def official_score(gold: str, pred: str, answer_format: str) -> float:
    """:func:`official_outcome`'s score (0.0 where the released code raises)."""
    return official_outcome(gold, pred, answer_format).score
