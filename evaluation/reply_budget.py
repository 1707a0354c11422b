"""The token cap of a judge call, sized to the JSON reply its schema asks for.

A judge's verdict is a small JSON object; a cap far above it (the old fixed 1,024) only lets a
judge that rambles — a small local model, typically — spend minutes before its reply is
cut and fails anyway. :func:`reply_tokens` walks the JSON schema of the reply and adds up
what each part may take: :data:`FREE_TEXT_TOKENS` for a free-text field (a reason),
:data:`WORD_TOKENS` for a number, a boolean or a short label, the key and punctuation of every
field; a list counts ``items`` entries when the call knows how many (one label per gold box
or fact) and :data:`LIST_ITEMS` otherwise. The sum gets :data:`MARGIN` on top and is rounded
up to a multiple of 32, at least :data:`MIN_TOKENS`. A schema the walk cannot size (an object
open to any field) gets :data:`OPEN_TOKENS`.

A reply that still reaches the cap ends with the provider's ``finish_reason: length`` and, when
it cannot be read, fails with the cause ``length``, named as such (never a bare parse error).
``JudgeConfig.max_tokens`` set to a number replaces this sizing for every call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

FREE_TEXT_TOKENS = 160  # a reason or reasoning field of free text
WORD_TOKENS = 8  # a number, a boolean, a null, a short id
LIST_ITEMS = 8  # entries of a list whose length the call does not know
OPEN_TOKENS = 1024  # an object open to any field: no shape to size
MARGIN = 1.25
MIN_TOKENS = 64
_MAX_DEPTH = 20


def _chars(n: int) -> int:
    """Tokens of ``n`` characters of JSON text (about three characters a token)."""
    return math.ceil(n / 3) + 2


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = defs.get(ref.removeprefix("#/$defs/"))
        return found if isinstance(found, Mapping) else {}
    return node


def _string(node: Mapping[str, Any]) -> int:
    if isinstance(node.get("enum"), list) and node["enum"]:
        return _chars(max(len(str(v)) for v in node["enum"]))
    if isinstance(node.get("maxLength"), int):
        return _chars(node["maxLength"])
    return FREE_TEXT_TOKENS


def _size(node: Mapping[str, Any], defs: Mapping[str, Any], items: int, depth: int) -> int | None:
    """Tokens of a value of ``node``; ``None`` when its shape is open."""
    if depth > _MAX_DEPTH:
        return None
    node = _resolve(node, defs)
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list) and options:
        limit = node.get("maxLength")  # a union's length hint holds for its string option
        options = [
            {**o, "maxLength": limit} if limit and o.get("type") == "string" else o
            for o in options
            if isinstance(o, Mapping)
        ]
        sizes = [_size(o, defs, items, depth + 1) for o in options]
        return None if any(s is None for s in sizes) else max(s for s in sizes if s is not None)
    if "enum" in node or "const" in node:
        values = node.get("enum") or [node.get("const")]
        return _chars(max(len(str(v)) for v in values))
    kind = node.get("type")
    if kind == "string":
        return _string(node)
    if kind in ("integer", "number", "boolean", "null"):
        return WORD_TOKENS
    if kind == "array":
        inner = node.get("items")
        one = _size(inner, defs, items, depth + 1) if isinstance(inner, Mapping) else None
        if one is None:
            return None
        limit = node.get("maxItems")
        count = limit if isinstance(limit, int) else items
        return 2 + count * (one + 1)
    if kind == "object" or "properties" in node:
        fields = node.get("properties")
        if not isinstance(fields, Mapping) or not fields:
            return None
        total = 2
        for key, value in fields.items():
            one = _size(value, defs, items, depth + 1) if isinstance(value, Mapping) else None
            if one is None:
                return None
            total += _chars(len(key) + 3) + one
        return total
    return None


def reply_tokens(schema: Mapping[str, Any], items: int | None = None) -> int:
    """The token cap of a reply matching ``schema`` (a JSON schema, pydantic's
    ``model_json_schema()``); ``items`` is the length of its lists when the call knows it."""
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), Mapping) else {}
    assert isinstance(defs, Mapping)
    size = _size(schema, defs, items if items is not None else LIST_ITEMS, 0)
    if size is None:
        return OPEN_TOKENS
    return max(MIN_TOKENS, 32 * math.ceil(size * MARGIN / 32))


__all__ = [
    "FREE_TEXT_TOKENS",
    "LIST_ITEMS",
    "MIN_TOKENS",
    "OPEN_TOKENS",
    "WORD_TOKENS",
    "reply_tokens",
]
