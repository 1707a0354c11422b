"""Yes/no decisions written in words: one vocabulary for model replies, judges and gold labels.

Models write a decision many ways ("Yes.", "true", "Not sufficient", "supported", ``1``);
datasets store gold labels as ``"True"`` or ``"yes"``. :func:`parse_verdict` reads them all the
same way. In the default (loose) mode the first word decides, so "No, the chain misses a step"
is ``False``; ``strict=True`` wants the whole text to be one word of the vocabulary, which is
what a gold label or a judge's label field should be.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

YES_WORDS = frozenset({"yes", "y", "true", "1", "sufficient", "supported", "valid", "correct"})
NO_WORDS = frozenset(
    {"no", "n", "not", "false", "0", "insufficient", "unsupported", "invalid", "incorrect"}
)
_WORD = re.compile(r"[a-z0-9]+")
_EDGES = " \t\r\n.!?,;:\"'`*_()[]"


def parse_verdict(
    value: object, *, strict: bool = False, yes: Iterable[str] = (), no: Iterable[str] = ()
) -> bool | None:
    """``True`` / ``False`` for a decision, ``None`` when ``value`` states none.

    A bool is itself and the integers 1 and 0 are yes and no; any other non-text is ``None``.
    ``yes`` and ``no`` add words of a caller's own labels (a judge answering "consistent").
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if not isinstance(value, str):
        return None
    yes_words, no_words = YES_WORDS | set(yes), NO_WORDS | set(no)
    if strict:
        word = value.strip(_EDGES).lower()
    else:
        words = _WORD.findall(value.lower())
        word = words[0] if words else ""
    if word in yes_words:
        return True
    if word in no_words:
        return False
    return None
