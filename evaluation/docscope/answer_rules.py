"""Rule-based answer matching by answer format, MMLongBench-Doc style (no judge).

Formats:

* ``Int``: the numbers must be equal. ``Float``: equal within a relative tolerance (1% by
  default). Numbers are read after stripping currency signs, thousands separators, units and
  surrounding words: "21%", "$1,234.5 million", "3 km", "three". A percentage also stands for
  its fraction ("21%" matches "0.21") and a scale word for its product ("1,234.5 million"
  matches "1234.5" and "1.2345 billion"). When an answer holds several numbers, years
  (1800-2100) are set aside unless the gold is a year; more than one remaining number is
  ambiguous and does not match.
* ``Str``: ANLS, 1 - Levenshtein / max length on normalized text (lower case, quotes, outer
  punctuation and extra spaces removed); a match when it reaches 0.5. The soft score is the
  ANLS value when it reaches 0.5, else 0.
* ``List``: parsed from JSON / Python literals, else split on commas, semicolons, new lines and
  "and". Order does not matter: the lists must have the same length and every gold element
  must match a distinct predicted one, each compared by its own type (Int, Float or Str).
* ``None`` (unanswerable): the prediction must be a refusal ("Unanswerable", "Not
  answerable", "cannot be answered", "not mentioned in the document", ...).

A missing ``answer_format`` is inferred from the gold answer.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass

FORMATS = ("Int", "Float", "Str", "List", "None")

_CURRENCY = re.compile(r"[$€£¥₹]|\b(?:usd|eur|gbp|rmb|cny|jpy|inr|us\$)\b", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_NUMBER = re.compile(r"(?<![\w.])[-+−]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)
_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
}
_SCALE_AFTER = re.compile(
    r"^\s*(thousand|million|billion|trillion|mn|bn|tn|k|m|b)\b", re.IGNORECASE
)
_PERCENT_AFTER = re.compile(r"^\s*(?:%|percent\b|per cent\b|pct\b)", re.IGNORECASE)
_WORDS = {
    w: i
    for i, w in enumerate(
        [
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
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_REFUSAL = re.compile(
    r"^\W*(?:unanswerable|not answerable|none|n/?a|no answer)\W*$"
    r"|\b(?:not answerable|unanswerable|cannot be (?:answered|determined|found)|can ?not answer"
    r"|can't (?:be )?(?:answer|determine)|unable to (?:answer|determine|find)"
    r"|(?:does|do) not (?:contain|mention|provide|include|specify|state)"
    r"|not (?:mentioned|provided|specified|stated|available|given) in"
    r"|no (?:information|mention|data) (?:about|on|regarding|is)"
    r"|(?:insufficient|not enough) (?:information|evidence|context))\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"\s*(?:;|\n|,(?!\d{3})|\band\b|&)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Number:
    """A number read from text, with the alternatives it stands for."""

    value: float
    percent: bool = False
    scale: float = 1.0
    is_int: bool = True

    def candidates(self) -> set[float]:
        out = {self.value}
        if self.percent:
            out.add(self.value / 100)
        if self.scale != 1.0:
            out.add(self.value * self.scale)
        return out


def _is_year(n: Number) -> bool:
    return n.is_int and not n.percent and n.scale == 1.0 and 1800 <= n.value <= 2100


def numbers_in(text: str) -> list[Number]:
    """Every number in ``text`` with its percent / scale marks."""
    cleaned = _THOUSANDS.sub("", _CURRENCY.sub(" ", text)).replace("−", "-")
    found: list[Number] = []
    for match in _NUMBER.finditer(cleaned):
        token = match.group(0)
        rest = cleaned[match.end() :]
        scale_match = _SCALE_AFTER.match(rest)
        found.append(
            Number(
                value=float(token),
                percent=bool(_PERCENT_AFTER.match(rest)),
                scale=_SCALES[scale_match.group(1).lower()] if scale_match else 1.0,
                is_int="." not in token and "e" not in token.lower(),
            )
        )
    if not found:
        words = re.findall(r"[a-z]+", text.lower())
        found = [Number(float(_WORDS[w])) for w in words if w in _WORDS][:1]
    return found


def read_number(text: str, prefer_years: bool = False) -> Number | None:
    """The one number an answer states, or ``None`` when it has none or several."""
    found = numbers_in(text)
    if len(found) > 1 and not prefer_years:
        found = [n for n in found if not _is_year(n)] or found
    distinct = {n.value for n in found}
    return found[0] if len(distinct) == 1 else None


def numbers_match(gold: Number, pred: Number, rel_tol: float, exact: bool) -> bool:
    tol = 1e-9 if exact else rel_tol
    return any(
        math.isclose(g, p, rel_tol=tol, abs_tol=1e-9)
        for g in gold.candidates()
        for p in pred.candidates()
    )


def normalize_text(text: str) -> str:
    text = text.strip().lower()
    text = re.sub(r"\s+", " ", text)
    return text.strip(" \t\"'`“”‘’.,;:!?()[]{}")


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def anls(gold: str, pred: str) -> float:
    """Normalized Levenshtein similarity of the normalized strings (1 for two empties)."""
    g, p = normalize_text(gold), normalize_text(pred)
    longest = max(len(g), len(p))
    return 1.0 if longest == 0 else 1.0 - levenshtein(g, p) / longest


def is_refusal(text: str | None) -> bool:
    return bool(text and _REFUSAL.search(text.strip()))


def parse_list(text: str) -> list[str]:
    """List elements of an answer: JSON or Python literal first, then separators."""
    stripped = text.strip()
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, (list, tuple)):
            return [str(v).strip() for v in value if str(v).strip()]
    stripped = stripped.strip("[]()")
    return [part for part in (p.strip(" '\"") for p in _SPLIT.split(stripped)) if part]


def infer_format(gold: str | None, answerable: bool = True) -> str:
    if not answerable or gold is None or is_refusal(gold):
        return "None"
    stripped = gold.strip()
    if stripped.startswith("[") and len(parse_list(stripped)) > 1:
        return "List"
    number = read_number(stripped, prefer_years=True)
    if number is not None and re.fullmatch(r"[^A-Za-z]*(?:%|percent)?[^A-Za-z]*", stripped):
        return "Int" if number.is_int and not number.percent else "Float"
    return "Str"


def element_format(gold: str) -> str:
    fmt = infer_format(gold)
    return fmt if fmt in ("Int", "Float") else "Str"


@dataclass(frozen=True)
class RuleMatch:
    correct: bool
    score: float
    method: str
    detail: str = ""


def match_scalar(gold: str, pred: str, fmt: str, rel_tol: float, threshold: float) -> RuleMatch:
    if fmt in ("Int", "Float"):
        g = read_number(gold, prefer_years=True)
        if g is None:  # gold not numeric after all: compare as text
            return match_scalar(gold, pred, "Str", rel_tol, threshold)
        p = read_number(pred, prefer_years=_is_year(g))
        if p is None:
            return RuleMatch(False, 0.0, fmt, "no single number in the prediction")
        ok = numbers_match(g, p, rel_tol, exact=fmt == "Int")
        return RuleMatch(ok, float(ok), fmt, f"gold {g.value:g}, predicted {p.value:g}")
    similarity = anls(gold, pred)
    ok = similarity >= threshold
    return RuleMatch(ok, similarity if ok else 0.0, "Str", f"anls {similarity:.3f}")


def _perfect_matching(ok: list[list[bool]]) -> bool:
    """Whether every row can take a distinct column (augmenting paths)."""
    n_cols = len(ok[0]) if ok else 0
    owner: list[int | None] = [None] * n_cols

    def assign(row: int, seen: set[int]) -> bool:
        for col in range(n_cols):
            if ok[row][col] and col not in seen:
                seen.add(col)
                taken = owner[col]
                if taken is None or assign(taken, seen):
                    owner[col] = row
                    return True
        return False

    return all(assign(row, set()) for row in range(len(ok)))


def match_list(gold: str, pred: str, rel_tol: float, threshold: float) -> RuleMatch:
    gold_items, pred_items = parse_list(gold), parse_list(pred)
    if len(gold_items) != len(pred_items):
        detail = f"{len(gold_items)} gold items, {len(pred_items)} predicted"
        return RuleMatch(False, 0.0, "List", detail)
    if not gold_items:
        return RuleMatch(True, 1.0, "List", "both empty")
    table = [
        [match_scalar(g, p, element_format(g), rel_tol, threshold).correct for p in pred_items]
        for g in gold_items
    ]
    ok = _perfect_matching(table)
    return RuleMatch(ok, float(ok), "List", f"{len(gold_items)} items")


def match_answer(
    gold: str | None,
    pred: str | None,
    fmt: str | None = None,
    *,
    answerable: bool = True,
    rel_tol: float = 0.01,
    threshold: float = 0.5,
) -> RuleMatch:
    """Compare a predicted answer with the gold one under the rules of ``fmt``."""
    fmt = fmt if fmt in FORMATS else infer_format(gold, answerable)
    if not answerable:
        fmt = "None"
    if fmt == "None":
        ok = is_refusal(pred)
        return RuleMatch(ok, float(ok), "None", "refusal" if ok else "answered")
    if gold is None:
        return RuleMatch(False, 0.0, fmt, "no gold answer")
    if not pred or not pred.strip():
        return RuleMatch(False, 0.0, fmt, "no answer")
    if is_refusal(pred) and not is_refusal(gold):
        return RuleMatch(False, 0.0, fmt, "refused an answerable question")
    if fmt == "List":
        return match_list(gold, pred, rel_tol, threshold)
    return match_scalar(gold, pred, fmt, rel_tol, threshold)


__all__ = [
    "FORMATS",
    "RuleMatch",
    "anls",
    "infer_format",
    "is_refusal",
    "levenshtein",
    "match_answer",
    "numbers_in",
    "parse_list",
    "read_number",
]
