"""JSON inside a model's reply: found wherever it sits, and closed when a token limit cut it.

Models wrap JSON in code fences, put prose before and after it, leave a trailing comma, or stop
in the middle of it when they run out of tokens. Two readers share the scanning here:

* :func:`json_values` — every JSON value the reply holds, most likely first (the whole reply,
  then fenced blocks, then bracketed spans in order). A judge validates each against its
  schema and takes the first that fits; a broken judgment is asked for again, never guessed.
* :func:`first_object` — the reply's first JSON object, for a reader. An object the token limit
  cut off is closed by :func:`close_truncated`, keeping every complete part, before any later
  ``{`` is tried: a truncated reply keeps its outer object (the answer and every complete fact)
  instead of yielding one of its nested objects.

Nothing here raises on odd input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE_OPEN = re.compile(r"```[ \t]*(?:[A-Za-z][\w+.-]*)?[ \t]*\n?")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PAIRS = {"{": "}", "[": "]"}
MAX_STARTS = 50


class _Structure:
    """Iterates over ``(index, char)`` of the characters of ``text[start:]`` that stand outside
    string literals (a string's opening quote included); ``in_string`` says afterwards whether
    the text ended inside one."""

    def __init__(self, text: str, start: int = 0) -> None:
        self.text, self.start, self.in_string = text, start, False

    def __iter__(self) -> Iterator[tuple[int, str]]:
        escaped = False
        for i in range(self.start, len(self.text)):
            ch = self.text[i]
            if not self.in_string:
                self.in_string = ch == '"'
                yield i, ch
            elif escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                self.in_string = False


def fenced_blocks(text: str) -> list[str]:
    """Bodies of the closed ```` ``` ```` blocks of ``text`` (a language tag is skipped)."""
    blocks: list[str] = []
    pos = 0
    while (opened := _FENCE_OPEN.search(text, pos)) is not None:
        close = text.find("```", opened.end())
        if close < 0:
            break
        blocks.append(text[opened.end() : close])
        pos = close + 3
    return blocks


def _scan(text: str, start: int) -> tuple[int | None, bool]:
    """Where the bracket at ``start`` closes: ``(index, False)``; ``(None, True)`` when the text
    ends first (a cut reply); ``(None, False)`` when a wrong closer comes first."""
    stack: list[str] = []
    for j, ch in _Structure(text, start):
        if ch in _PAIRS:
            stack.append(_PAIRS[ch])
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None, False
            if not stack:
                return j, False
    return None, True


def bracket_end(text: str, start: int) -> int | None:
    """Index of the bracket closing the ``{`` or ``[`` at ``start`` (string literals respected),
    or ``None`` when it is never closed properly."""
    return _scan(text, start)[0]


def _decoded_spans(text: str) -> list[tuple[str, Any]]:
    """Every ``{...}`` / ``[...]`` span of ``text`` that decodes, with its value, in order. A
    span that decodes hides the spans inside it; inside a broken one they are tried."""
    found: list[tuple[str, Any]] = []
    i = 0
    while i < len(text):
        if text[i] in _PAIRS and (end := bracket_end(text, i)) is not None:
            ok, value, _ = _decode(text[i : end + 1])
            if ok:
                found.append((text[i : end + 1], value))
                i = end + 1
                continue
        i += 1
    return found


def _without_trailing_commas(text: str) -> str:
    """``text`` with every ``,`` that stands right before a closer (outside strings) removed."""
    out: list[str] = []
    last = 0
    for i, ch in _Structure(text):
        if ch == "," and _TRAILING_COMMA.match(text, i):
            out.append(text[last:i])
            last = i + 1
    out.append(text[last:])
    return "".join(out)


def _decode(piece: str) -> tuple[bool, Any, bool]:
    """``(ok, value, lenient)``: strict JSON first, then without trailing commas."""
    try:
        return True, json.loads(piece), False
    except json.JSONDecodeError:
        pass
    relaxed = _without_trailing_commas(piece)
    if relaxed != piece:
        try:
            return True, json.loads(relaxed), True
        except json.JSONDecodeError:
            pass
    return False, None, False


def json_values(text: str) -> list[Any]:
    """JSON values found in ``text``, most likely first: the whole text, fenced blocks, then
    bracketed spans in order of appearance (a trailing comma is forgiven)."""
    found: list[Any] = []
    seen: set[str] = set()
    for piece in [text.strip(), *(block.strip() for block in fenced_blocks(text))]:
        if piece and piece not in seen:
            seen.add(piece)
            ok, value, _ = _decode(piece)
            if ok:
                found.append(value)
    for piece, value in _decoded_spans(text):
        if piece not in seen:
            seen.add(piece)
            found.append(value)
    return found


def first_object(text: str, *, repair: bool = True) -> tuple[dict[str, Any] | None, bool]:
    """The first JSON object in ``text`` and whether it had to be repaired.

    Fenced blocks are tried before the whole text. Within one, objects are tried from the
    first ``{`` on: a complete object that decodes (a trailing comma forgiven, which counts as
    a repair) is taken; one that runs to the end of the text is closed (``repair``) and taken
    if that decodes; after a broken one the next ``{`` (possibly inside it) is tried.
    """
    for candidate in [*fenced_blocks(text), text]:
        data, repaired = _first_in(candidate, repair)
        if data is not None:
            return data, repaired
    return None, False


def _first_in(text: str, repair: bool) -> tuple[dict[str, Any] | None, bool]:
    pos = 0
    for _ in range(MAX_STARTS):
        start = text.find("{", pos)
        if start < 0:
            break
        end, cut = _scan(text, start)
        if end is not None:
            ok, value, lenient = _decode(text[start : end + 1])
            if ok and isinstance(value, dict):
                return value, lenient
        elif repair:
            closed = _repaired(text[start:]) if cut else None
            if closed is None:
                closed = _repaired_at_line_break(text[start:])
            if closed is not None:
                return closed, True
        pos = start + 1
    return None, False


def _repaired(text: str) -> dict[str, Any] | None:
    ok, value, _ = _decode(close_truncated(text))
    return value if ok and isinstance(value, dict) else None


_OUTER_CLOSERS = re.compile(r"[\s,}]*$")


def _repaired_at_line_break(text: str) -> dict[str, Any] | None:
    """The object of ``text`` cut where one of its strings runs into a raw line break.

    A JSON string cannot hold a raw line break, so a string that meets one was never closed:
    the model left the format there (``{ "answer": "2.20 EUR }`` and prose after it, until the
    token limit). The object is kept up to that line, the string ending where the line ends,
    without the ``}`` or ``,`` the model meant to close it with, and closed like a cut reply.
    """
    for i, ch in _string_chars(text):
        if ch == "\n":
            head = _OUTER_CLOSERS.sub("", text[:i])
            return _repaired(head) if head else None
    return None


def _string_chars(text: str) -> Iterator[tuple[int, str]]:
    """``(index, char)`` of the characters of ``text`` inside string literals."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if not in_string:
            in_string = ch == '"'
        elif escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            in_string = False
        else:
            yield i, ch


def close_truncated(text: str) -> str:
    """Close the strings, lists and objects a reply cut off by a token limit left open.

    An element of a list that the cut went through (a fact whose text or box stops midway)
    is dropped whole: the outermost open list keeps its complete elements only. A scalar value
    of an object cut midway is kept as far as it goes when it is a string (the answer), and
    dropped with its key when it is not (a number such as ``0.``).
    """
    stack: list[list[Any]] = []  # [closer, start offset, offset of its last own comma]
    structure = _Structure(text)
    for i, ch in structure:
        if ch in _PAIRS:
            stack.append([_PAIRS[ch], i, None])
        elif ch in "]}" and stack:
            stack.pop()
        elif ch == "," and stack:
            stack[-1][2] = i
    in_string = structure.in_string
    lists = [depth for depth, entry in enumerate(stack) if entry[0] == "]"]
    if lists:
        depth = lists[0]
        _, start, comma = stack[depth]
        last = text[(comma if comma is not None else start) + 1 :]
        if depth < len(stack) - 1 or in_string or not _complete_scalar(last):
            text = text[: comma if comma is not None else start + 1]
            del stack[depth + 1 :]
            in_string = False
    out = text + ('"' if in_string else "")
    if not in_string:
        out = _drop_partial_value(out)
    out = re.sub(r"[,:\s]*$", "", out)
    if out.endswith('"') and stack[-1:] and stack[-1][0] == "}":
        # A dangling key without its value: drop it.
        out = re.sub(r'([{,])\s*"[^"]*"$', lambda m: "{" if m.group(1) == "{" else "", out)
    return out + "".join(entry[0] for entry in reversed(stack))


def _complete_scalar(text: str) -> bool:
    """Whether ``text`` (the end of a list) is empty or one complete JSON scalar."""
    stripped = text.strip()
    if not stripped or stripped.startswith(('"', "{", "[")):
        return True  # strings and containers are handled by the caller
    try:
        json.loads(stripped)
    except json.JSONDecodeError:
        return False
    return True


def _drop_partial_value(text: str) -> str:
    """Remove a number or literal cut midway after the last ``:`` (``"score": 0.``)."""
    match = re.search(r":\s*([^\s\"\[\]{},:][^\"\[\]{},:]*)$", text)
    if match and not _complete_scalar(match.group(1)):
        return text[: match.start(1)]
    return text
