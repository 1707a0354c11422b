"""The commands' argument helpers: argparse types and KEY=VALUE lists."""

from __future__ import annotations

import argparse

import pytest

from scanrag.commands.args import key_values, positive_float, whole_number


def test_bounded_and_positive_numbers() -> None:
    count = whole_number(1, 10)
    assert count("3") == 3 and positive_float("0.5") == 0.5
    with pytest.raises(argparse.ArgumentTypeError, match="must be at least 1, got 0"):
        count("0")
    with pytest.raises(argparse.ArgumentTypeError, match="must be at most 10, got 11"):
        count("11")
    with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number, got '2.5'"):
        count("2.5")
    with pytest.raises(argparse.ArgumentTypeError, match="must be greater than 0, got 0"):
        positive_float("0")
    with pytest.raises(argparse.ArgumentTypeError, match="expected a number, got 'x'"):
        positive_float("x")


def test_key_values() -> None:
    assert key_values([" region = openai/gpt-4o ", "fact=a=b"]) == {
        "region": "openai/gpt-4o",
        "fact": "a=b",
    }
    assert key_values([]) == {}
    for bad in ("region", "=m", "region= "):
        with pytest.raises(ValueError, match=f"expected ROLE=FILE, got {bad!r}"):
            key_values([bad], what="FILE")
