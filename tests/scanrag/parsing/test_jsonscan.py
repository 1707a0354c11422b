"""JSON found in model replies: one scanner for readers (first object, cut replies closed) and
judges (every value, most likely first). The golden file holds both former callers' cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanrag.parsing import bracket_end, close_truncated, fenced_blocks, first_object, json_values

GOLDEN = json.loads((Path(__file__).parent / "golden" / "json_replies.json").read_text())


@pytest.mark.parametrize("case", GOLDEN, ids=[f"{c['from']}-{i}" for i, c in enumerate(GOLDEN)])
def test_golden_replies(case: dict[str, Any]) -> None:
    assert first_object(case["text"]) == (case["first_object"], case["repaired"])
    assert json_values(case["text"]) == case["json_values"]


def test_golden_file_covers_both_callers_and_the_interesting_outcomes() -> None:
    assert {c["from"] for c in GOLDEN} == {"reader", "judge"}
    assert any(c["repaired"] and c["first_object"] for c in GOLDEN)  # a cut reply closed
    assert any(c["first_object"] is None for c in GOLDEN)
    assert any(isinstance(v, list) for c in GOLDEN for v in c["json_values"])  # bare lists


def test_without_repair_a_cut_object_is_not_taken() -> None:
    assert first_object('{"answer": "The pop', repair=False) == (None, False)
    assert first_object('{"answer": "The pop"}', repair=False) == ({"answer": "The pop"}, False)


def test_fenced_blocks_skip_the_language_tag_and_ignore_an_open_fence() -> None:
    text = "```json\n{}\n``` and ```python x = 1``` and ```\nopen"
    assert fenced_blocks(text) == ["{}\n", "x = 1"]


def test_bracket_end_respects_strings_and_reports_broken_brackets() -> None:
    assert bracket_end('{"a": "}"}', 0) == 9
    assert bracket_end('{"a": [1}', 0) is None
    assert bracket_end('{"a": 1', 0) is None


def test_close_truncated_keeps_a_cut_string_and_drops_a_cut_number() -> None:
    assert json.loads(close_truncated('{"a": "partial')) == {"a": "partial"}
    assert json.loads(close_truncated('{"a": "x", "s": 0.')) == {"a": "x"}


_SCALARS = st.none() | st.booleans() | st.integers(-5, 99) | st.text(max_size=6)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=5), _VALUES, min_size=1, max_size=4), st.integers(0, 200))
def test_any_cut_of_an_object_gives_an_object_or_nothing(value: dict[str, Any], cut: int) -> None:
    text = json.dumps(value)
    data, repaired = first_object("Reply: " + text[: max(1, cut)])
    assert data is None or isinstance(data, dict)
    if cut >= len(text):
        assert (data, repaired) == (value, False)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_never_raises(text: str) -> None:
    first_object(text)
    json_values(text)
