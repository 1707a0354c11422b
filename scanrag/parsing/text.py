"""A JSON value as text, for fields that should be strings but a model or a dataset wrote as
something else (a list of answers, a number, an object)."""

from __future__ import annotations

import json
from typing import Any


def as_text(value: Any, *, list_sep: str | None = None) -> str:
    """``value`` as a string: strings as they are, ``None`` as ``""``, numbers and booleans
    with ``str``, objects as JSON. Lists are JSON too, unless ``list_sep`` is given: then their
    items are converted one by one and joined with it (``["a", "b"]`` → ``"a, b"``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list) and list_sep is not None:
        return list_sep.join(as_text(item, list_sep=list_sep) for item in value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
