"""The nine ScholScan error families (task ``error_detection``) and how to read their names.

The one owner of the family table: the ScholScan loader, the synthetic corpus, the ScholScan
scorer and the agents all read it from here.
"""

from __future__ import annotations

import re
from typing import Any

FAMILIES: dict[str, str] = {
    "RQD": "Research Question & Definitions",
    "DI": "Design & Identifiability",
    "SG": "Sampling & Generalizability",
    "MO": "Measurement & Operationalization",
    "DHP": "Data Handling & Preprocessing",
    "CF": "Computation & Formulae",
    "IC": "Inference & Conclusions",
    "RCA": "Referential & Citation Alignment",
    "LE": "Language & Expression",
}
# The official files label the families A–I in this order.
LETTERS = dict(zip("ABCDEFGHI", FAMILIES, strict=True))

_LEADING_CODE = re.compile(r"^\s*([A-Za-z]{1,3})\s*(?:[.:)\-(]|\s|$)")
_PARENTHESIS = re.compile(r"\(([^)]+)\)")


def _simple(text: str) -> str:
    return "".join(ch for ch in text.lower().replace("&", "and") if ch.isalnum())


_BY_NAME = {_simple(name): code for code, name in FAMILIES.items()}


def family_code(value: Any) -> str | None:
    """The family code (``"RCA"``) written as a code, a letter A–I, a full name (``&`` or
    ``and``, any case and punctuation), ``"H. <name>"``, ``"RCA (<name>)"``, ``"<x> (<name>)"``
    or a truncated or extended full name of at least six letters; ``None`` if none of these."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    simple = _simple(text)
    if simple in _BY_NAME:
        return _BY_NAME[simple]
    match = _LEADING_CODE.match(text)
    if match:
        token = match.group(1).upper()
        if token in FAMILIES:
            return token
        if len(token) == 1 and token in LETTERS:
            return LETTERS[token]
    inner = _PARENTHESIS.search(text)
    if inner and _simple(inner.group(1)) in _BY_NAME:
        return _BY_NAME[_simple(inner.group(1))]
    if len(simple) >= 6:  # a truncated or extended full name ("Data Handling ...")
        for name, code in _BY_NAME.items():
            if simple.startswith(name) or name.startswith(simple):
                return code
    return None
