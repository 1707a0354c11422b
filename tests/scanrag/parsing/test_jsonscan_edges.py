"""Edges of the JSON scanner: cut replies closed element by element, the limit on object
starts, fences back to back, spans side by side and repeated pieces."""

from __future__ import annotations

import pytest

from scanrag.parsing.jsonscan import (
    MAX_STARTS,
    _complete_scalar,
    _drop_partial_value,
    close_truncated,
    fenced_blocks,
    first_object,
    json_values,
)


@pytest.mark.parametrize(
    ("cut", "closed"),
    [
        # the outermost open list keeps its complete elements only
        ('{"a": [1, 2', '{"a": [1, 2]}'),
        ('{"a": [1, 2, {"b": 3', '{"a": [1, 2]}'),
        ('{"a": [1, [2, 3], [4', '{"a": [1, [2, 3]]}'),
        ('{"a": [[1], [2', '{"a": [[1]]}'),
        ('[{"a": 1}, {"b": 2', '[{"a": 1}]'),
        ('{"a": ["x", "y', '{"a": ["x"]}'),
        ('{"a": [1, 2.', '{"a": [1]}'),
        ("[1, 2", "[1, 2]"),
        # a list cut in its first element
        ('{"a": ["x', '{"a": []}'),
        ('{"a": [tr', '{"a": []}'),
        ('{"a": [1', '{"a": [1]}'),
        ('{"a":[3', '{"a":[3]}'),
        ('{"a":[2e5', '{"a":[2e5]}'),
        ('{"a":[1,2e5', '{"a":[1,2e5]}'),
        ('{"a":[1,2e', '{"a":[1]}'),
        # a complete string in a list is no dangling key
        ('["a", "b"', '["a", "b"]'),
        ('{"a": ["x", "y"', '{"a": ["x", "y"]}'),
        ('[{"a": 1, "b"', "[]"),  # the outer list drops the cut object whole
        ('{"a": [', '{"a": []}'),
        # objects: a cut string is kept, a cut number or literal goes with its key
        ('{"a": {"b": "c', '{"a": {"b": "c"}}'),
        ('{"a": "x", "b": "', '{"a": "x", "b": ""}'),
        ('{"a": "q\\"', '{"a": "q\\""}'),
        ('{"a": {"b": 1}, "c": [3', '{"a": {"b": 1}, "c": [3]}'),
        ('{"s": 0.', "{}"),
        ('{"s": tru', "{}"),
        # a dangling key
        ('{"k": "v", "b', '{"k": "v"}'),
        ('{"a": 1, "b"', '{"a": 1}'),
        ('{"x": "a", "y": [1, 2]', '{"x": "a", "y": [1, 2]}'),
    ],
)
def test_close_truncated(cut: str, closed: str) -> None:
    assert close_truncated(cut) == closed


def test_complete_scalars_and_partial_values() -> None:
    assert _complete_scalar("") is True and _complete_scalar("  ") is True
    assert _complete_scalar('"x') is True and _complete_scalar("[1") is True
    assert _complete_scalar("12") is True and _complete_scalar("null") is True
    assert _complete_scalar("1.") is False and _complete_scalar("tr") is False
    assert _drop_partial_value('{"s": 0.') == '{"s": '
    assert _drop_partial_value('{"s":  tru') == '{"s":  '
    assert _drop_partial_value('{"s": 12') == '{"s": 12'
    assert _drop_partial_value('{"s": "x') == '{"s": "x'


def test_object_starts_are_limited() -> None:
    assert MAX_STARTS == 50
    prose = "{x " * (MAX_STARTS - 1) + '{"a": 1}'
    assert first_object(prose, repair=False) == ({"a": 1}, False)
    assert first_object("{x " + prose, repair=False) == (None, False)
    assert first_object("x" * 2 * MAX_STARTS + '{"a": 1}') == ({"a": 1}, False)  # only { count


def test_a_wrong_closer_is_not_repaired_and_the_next_start_is_tried() -> None:
    assert first_object('{"a": [1} {"b": 2}') == ({"b": 2}, False)
    assert first_object('{"a": [1}') == (None, False)


def test_fences_back_to_back() -> None:
    assert fenced_blocks("```\na\n``````\nb\n```") == ["a\n", "b\n"]
    assert fenced_blocks("```\na\n```") == ["a\n"]


def test_spans_side_by_side_empty_spans_and_repeated_pieces() -> None:
    assert json_values("x [] y") == [[]]
    assert json_values("x {}") == [{}]
    assert json_values('x {"a": 1}{"b": 2}') == [{"a": 1}, {"b": 2}]
    assert json_values("```\n1\n```") == [1]
    assert json_values("```\n1\n```\n```\n1\n```") == [1]
