"""Bounds on what one dataset row may hold: its nesting depth, and text that UTF-8 can store.

A row becomes a :class:`~scanrag.schemas.Sample` that a run writes to ``samples.jsonl``, sends
to models and copies into every output, so a defect in one row can break a run far from the
row: a lone surrogate (``"\\ud800"``, which JSON can spell but UTF-8 cannot store) crashed
the write of ``samples.jsonl`` after the run folder existed, and a line nested 100,000 deep
exhausted Python's recursion while the file was read. Both are found where the row enters
(:func:`row_problem`, called on every record :func:`scanrag.datasets.sources.read_records`
reads, and on every sample a loader returns) and the row is dropped with the reason; the rest
of the file loads.

:func:`loads` and :func:`literal` read a JSON text or a Python literal held inside a field
(``"[3, 5]"``) under the same bound, raising ``ValueError`` instead of ``RecursionError`` or
``MemoryError``.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

MAX_DEPTH = 64  # lists and objects inside one another in a row (real rows: under 6)
MAX_LITERAL = 1_000_000  # characters of a literal held in a field


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as UTF-8 (a lone surrogate), or ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        return (
            f"holds a lone surrogate (U+{code:04X}) at character {exc.start}, which UTF-8 "
            "cannot store"
        )
    return None


def _where(path: tuple[Any, ...]) -> str:
    if not path:
        return "the row"
    name = str(path[0]) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])
    return f"field {name!r}"


def row_problem(value: Any, *, text: bool = True) -> str | None:
    """The first defect of a row read from a file (text UTF-8 cannot store, in a key or a
    value, or nesting deeper than :data:`MAX_DEPTH`), as a drop reason; ``None`` when
    sound. Walks without recursion, fields in order; ``text=False`` checks the nesting only
    (the row's source holds no surrogate: :func:`suspects`)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return f"{_where(path[:1])} nests deeper than {MAX_DEPTH} levels"
        if isinstance(item, str):
            problem = text_problem(item) if text else None
            if problem is not None:
                return f"{_where(path)} {problem}"
        elif isinstance(item, dict):
            for key in item if text else ():
                problem = text_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    return f"a key of {_where(path)} {problem}"
            stack.extend(
                (item[k], (*path, k)) for k in reversed(list(item)) if text or _nests(item[k])
            )
        elif isinstance(item, list | tuple):
            indexes = reversed(range(len(item)))
            stack.extend((item[i], (*path, i)) for i in indexes if text or _nests(item[i]))
    return None


def _nests(value: Any) -> bool:
    return isinstance(value, dict | list | tuple)


# A JSON escape of a surrogate: the one way a surrogate gets into text read as UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def suspects(json_text: str) -> tuple[bool, bool]:
    """Whether the row read from ``json_text`` may hold text UTF-8 cannot store (the text has
    a surrogate escape) and whether it may nest past :data:`MAX_DEPTH` (more brackets than
    that). ``False`` is certain, so :func:`row_problem` runs (and checks text) only where it
    can find something: a C-speed look instead of a walk for nearly every row."""
    deep = json_text.count("[") + json_text.count("{") > MAX_DEPTH
    surrogate = "\\u" in json_text and _SURROGATE_ESCAPE.search(json_text) is not None
    return surrogate, deep


def loads(text: str) -> Any:
    """``json.loads`` of a field's text; ``ValueError`` for one too deep or too long to
    read (as for one that is not JSON)."""
    if len(text) > MAX_LITERAL:
        raise ValueError(f"longer than {MAX_LITERAL:,} characters")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deep to read") from None


def literal(text: str) -> Any:
    """``ast.literal_eval`` of a field's text (``"['Chart', 'Table']"``); ``ValueError`` for
    one that is no literal, or too deep or too long to read."""
    if len(text) > MAX_LITERAL:
        raise ValueError(f"longer than {MAX_LITERAL:,} characters")
    try:
        return ast.literal_eval(text)
    except SyntaxError as exc:
        raise ValueError(f"not a literal ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise ValueError("nested too deep to read") from None


class TooDeep:
    """An element of a JSON array nested too deep to read (the rest of the array is read)."""


def array_elements(text: str) -> list[Any]:
    """The elements of the JSON array ``text``; one nested too deep for the JSON reader comes
    back as a :class:`TooDeep` and the others are read. ``ValueError`` for a text that is no
    JSON array."""
    try:
        data = json.loads(text)
    except RecursionError:
        return _one_by_one(text)
    if not isinstance(data, list):
        raise ValueError("its top level is not a list")
    return data


def _one_by_one(text: str) -> list[Any]:
    """The array's elements read one at a time, so that one too deep is skipped alone."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    at = _skip_space(text, text.index("[") + 1)
    while at < len(text) and text[at] != "]":
        try:
            item, at = decoder.raw_decode(text, at)
        except RecursionError:
            item, at = TooDeep(), _value_end(text, at)
        items.append(item)
        at = _skip_space(text, at)
        if at < len(text) and text[at] == ",":
            at = _skip_space(text, at + 1)
        elif at >= len(text) or text[at] != "]":
            raise ValueError(f"expected ',' or ']' at character {at}")
    return items


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _value_end(text: str, at: int) -> int:
    """Where the JSON array or object starting at ``at`` ends (brackets counted outside
    strings, without recursion)."""
    depth, inside, escaped = 0, False, False
    for end in range(at, len(text)):
        char = text[end]
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return end + 1
    raise ValueError(f"the value at character {at} is never closed")
