"""Yes/no vocabulary and text coercion: one kernel helper each, golden cases from every former
copy (reader tags, SIN-Bench verify scoring, dataset gold labels, judge labels)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanrag.parsing import NO_WORDS, YES_WORDS, as_text, parse_verdict

GOLDEN = json.loads((Path(__file__).parent / "golden" / "words.json").read_text())


@pytest.mark.parametrize("case", GOLDEN["verdicts"], ids=lambda c: repr(c["value"]))
def test_verdict_golden(case: dict[str, Any]) -> None:
    assert parse_verdict(case["value"]) is case["loose"]
    assert parse_verdict(case["value"], strict=True) is case["strict"]


@pytest.mark.parametrize("case", GOLDEN["as_text"], ids=lambda c: repr(c["value"]))
def test_as_text_golden(case: dict[str, Any]) -> None:
    assert as_text(case["value"]) == case["json"]
    assert as_text(case["value"], list_sep=", ") == case["joined"]


def test_every_vocabulary_word_is_read_in_both_modes() -> None:
    assert not YES_WORDS & NO_WORDS
    for word in YES_WORDS:
        assert parse_verdict(word) is True and parse_verdict(word.upper(), strict=True) is True
    for word in NO_WORDS:
        assert parse_verdict(word) is False and parse_verdict(f" {word}. ", strict=True) is False


def test_a_caller_adds_its_own_label_words() -> None:
    assert parse_verdict("consistent", strict=True) is None
    assert parse_verdict("Consistent", strict=True, yes=["consistent"]) is True
    assert parse_verdict("not_consistent", strict=True, no=["not_consistent"]) is False
