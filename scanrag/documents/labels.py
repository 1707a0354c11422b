"""Printed page labels: PDF page-label rules, or a page number printed in the margin.

``doc_page`` is the label a reader sees on the page ("iv", "12"). It comes from the PDF's own
page-label table when the file has one, else from a short number or roman numeral standing
alone on a line in the top or bottom margin band, else it is ``"none"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

NO_LABEL = "none"

# Fraction of the page height at the top and bottom searched for a printed page number.
MARGIN_BAND = 0.1
_MAX_ROMAN = 100

_ROMAN_RE = re.compile(r"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_ROMAN_VALUES = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)
# "12", "- 12 -", "Page 12", "page 12 of 40", "12 / 40", "[iv]"
_NUMBER_LINE_RE = re.compile(
    r"^(?:page\s+)?(?P<label>\d{1,4}|[ivxlcdm]{1,8}|[IVXLCDM]{1,8})(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DECORATION = " \t-–—|·•"  # not brackets: "(4)" is an equation number
# A lone number must sit centered or towards a side edge (figure ticks sit elsewhere).
_CENTER_TOLERANCE = 0.08
_SIDE_BAND = 0.2


def int_to_roman(value: int) -> str:
    """Upper-case roman numeral for ``value`` ≥ 1."""
    if value < 1:
        raise ValueError(f"roman numerals start at 1, got {value}")
    out = []
    for amount, symbol in _ROMAN_VALUES:
        count, value = divmod(value, amount)
        out.append(symbol * count)
    return "".join(out)


def roman_to_int(text: str) -> int | None:
    """Value of a roman numeral written in one case, or ``None`` if ``text`` is not one."""
    if not text or not (text.isupper() or text.islower()):
        return None
    upper = text.upper()
    if not _ROMAN_RE.match(upper):
        return None
    total, i = 0, 0
    for amount, symbol in _ROMAN_VALUES:
        while upper.startswith(symbol, i):
            total += amount
            i += len(symbol)
    return total


def _letters(value: int) -> str:
    """Alphabetic label style: 1 → A, 26 → Z, 27 → AA, 28 → BB (the PDF convention)."""
    if value < 1:
        return ""
    repeat, index = divmod(value - 1, 26)
    return chr(ord("A") + index) * (repeat + 1)


def _styled(style: str, value: int) -> str:
    if style == "D":
        return str(value)
    if style in ("r", "R") and value >= 1:
        roman = int_to_roman(value)
        return roman.lower() if style == "r" else roman
    if style in ("a", "A"):
        letters = _letters(value)
        return letters.lower() if style == "a" else letters
    return ""


def labels_from_rules(rules: Sequence[dict[str, Any]], page_count: int) -> list[str]:
    """Expand PDF page-label rules (as ``Document.get_page_labels()`` returns them) to one
    label per physical page; pages a rule does not cover, or whose label is empty, get ``""``."""
    ordered = sorted(rules, key=lambda rule: int(rule.get("startpage", 0)))
    labels = [""] * page_count
    for index, rule in enumerate(ordered):
        start = max(0, int(rule.get("startpage", 0)))
        stop = (
            int(ordered[index + 1].get("startpage", page_count))
            if index + 1 < len(ordered)
            else page_count
        )
        first = int(rule.get("firstpagenum", 1) or 1)
        prefix = str(rule.get("prefix", "") or "")
        style = str(rule.get("style", "") or "")
        for pno in range(start, min(stop, page_count)):
            labels[pno] = prefix + _styled(style, first + pno - start)
    return labels


def _label_from_line(line: str) -> str | None:
    text = line.strip(_DECORATION)
    if not text:
        return None
    match = _NUMBER_LINE_RE.match(" ".join(text.split()))
    if not match:
        return None
    label = match.group("label")
    if label.isdigit():
        return label
    value = roman_to_int(label)
    return label if value is not None and value <= _MAX_ROMAN else None


def _plausible_position(center_x: float) -> bool:
    return (
        abs(center_x - 0.5) <= _CENTER_TOLERANCE
        or center_x <= _SIDE_BAND
        or center_x >= 1.0 - _SIDE_BAND
    )


def detect_printed_label(blocks: Iterable[tuple[Any, ...]]) -> str:
    """Find a printed page number among raw text blocks ``(x1, y1, x2, y2, text, ...)`` whose
    coordinates are normalized to the page.

    Only lines of blocks lying wholly inside the top or bottom margin band count. A band with
    more than one numeric line (axis ticks of a figure, a table) is ambiguous and ignored, and a
    number alone in its block must sit centered or near a side edge; when
    both bands hold exactly one, the line nearer its page edge wins.
    """
    found: dict[str, list[tuple[float, str]]] = {"top": [], "bottom": []}
    for block in blocks:
        y1, y2, text = block[1], block[3], block[4]
        if y1 >= 1.0 - MARGIN_BAND:
            band, distance = "bottom", 1.0 - y2
        elif y2 <= MARGIN_BAND:
            band, distance = "top", y1
        else:
            continue
        lines = text.strip().split("\n")
        if len(lines) == 1 and not _plausible_position((block[0] + block[2]) / 2):
            continue
        for line in lines:
            label = _label_from_line(line)
            if label is not None:
                found[band].append((distance, label))
    unique = [hits[0] for hits in found.values() if len(hits) == 1]
    return min(unique)[1] if unique else NO_LABEL
