"""Routing decisions as pure functions."""

from __future__ import annotations

import pytest

from scanrag.agents import routing


def test_after_prepare() -> None:
    assert routing.after_prepare(False) == routing.PROCEED
    assert routing.after_prepare(True) == routing.FINISH


@pytest.mark.parametrize(
    ("failed", "new", "iteration", "expected"),
    [(True, 3, 0, "finish"), (False, 2, 0, "read"), (False, 0, 1, "plan"), (False, 0, 3, "answer")],
)
def test_after_retrieve(failed: bool, new: int, iteration: int, expected: str) -> None:
    assert routing.after_retrieve(failed, new, iteration, max_steps=3) == expected


def test_fruitless_searches_spend_the_budget() -> None:
    # every page already read: searches find nothing new, the agent must answer in the end
    assert routing.after_retrieve(False, 0, 1, 3, searches=5) == "plan"
    assert routing.after_retrieve(False, 0, 1, 3, searches=6) == "answer"
    assert routing.after_retrieve(False, 0, 1, 3, searches=2, max_searches=2) == "answer"
    assert routing.after_retrieve(False, 1, 1, 3, searches=9) == "read"


def test_after_read_forces_an_answer_when_the_budget_is_spent() -> None:
    assert routing.after_read(2, 3) == "assess"
    assert routing.after_read(3, 3) == "answer"


@pytest.mark.parametrize(
    ("decision", "query", "has", "expected"),
    [
        ("answer", "x", True, "answer"),
        ("refine", "new words", True, "retrieve"),
        ("refine", None, True, "plan"),
        ("neighbors", None, True, "neighbors"),
        ("neighbors", None, False, "plan"),
    ],
)
def test_after_assess(decision: str, query: str | None, has: bool, expected: str) -> None:
    assert routing.after_assess(decision, query, has) == expected


def test_neighbor_pages_are_unseen_in_range_and_nearest_first() -> None:
    assert routing.neighbor_pages([3, 10], seen=[3, 4, 10], num_pages=10, limit=5) == [2, 9]
    assert routing.neighbor_pages([1], seen=[1], num_pages=1, limit=3) == []
    assert routing.neighbor_pages([5], seen=[5], num_pages=9, limit=1) == [6]


def test_unseen_keeps_order_and_limit() -> None:
    assert routing.unseen([4, 2, 4, 7, 9], seen=[2], limit=2) == [4, 7]


@pytest.mark.parametrize(
    ("text", "data", "expected"),
    [
        ("", {"decision": "refine", "query": "board meetings"}, ("refine", "board meetings")),
        ("", {"action": "Neighbours"}, ("neighbors", None)),
        ("I think we should refine the search", None, ("refine", None)),
        ("no idea", None, ("answer", None)),
        ("", {"decision": "explode", "query": "  "}, ("answer", None)),
    ],
)
def test_read_decision(text: str, data: dict | None, expected: tuple[str, str | None]) -> None:
    assert routing.read_decision(text, data) == expected


def test_windows() -> None:
    assert routing.windows(5, 2) == [[1, 2], [3, 4], [5]]
    assert routing.windows(5, 3, stride=2) == [[1, 2, 3], [3, 4, 5]]
    assert routing.windows(1, 4) == [[1]]
    with pytest.raises(ValueError, match="window size"):
        routing.windows(3, 0)
