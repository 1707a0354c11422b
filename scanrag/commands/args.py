"""Argument helpers shared by the sub-commands: argparse types and ``KEY=VALUE`` lists."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``low..high`` (the error names the flag, not a
    config key; the bounds of flags that set a config key are the key's,
    :mod:`scanrag.counts`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}, got {value:,}")
        return value

    return parse


def positive_float(text: str) -> float:
    """An argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def key_values(items: Sequence[str], key: str = "ROLE", what: str = "MODEL") -> dict[str, str]:
    """``KEY=VALUE`` strings (``--judge-role-model region=MODEL``) as a mapping, stripped;
    raises ``ValueError`` naming the expected shape on a malformed one."""
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"expected {key}={what}, got {item!r}")
        pairs[name.strip()] = value.strip()
    return pairs
