"""Exit codes come from the typed stop (its kind), never from the wording of its message, and
the item outcome decides a complete run's code."""

from __future__ import annotations

import pytest

from scanrag.runner.outcome import (
    ALL_FAILED_EXIT,
    INCOMPLETE_EXIT,
    THRESHOLD_EXIT,
    Stop,
    StopKind,
    exit_code,
    run_outcome,
)
from scanrag.runner.usage import Budget
from scanrag.schemas import Usage


@pytest.mark.parametrize(
    ("kind", "code"), [(StopKind.BUDGET, 3), (StopKind.DISK_FULL, 4), (StopKind.INTERRUPTED, 130)]
)
def test_a_stopped_session_exits_with_its_kinds_code(kind: StopKind, code: int) -> None:
    # the message is free text: a budget stop worded like a disk one still exits 3
    misleading = "disk full: interrupted" if kind is StopKind.BUDGET else "budget reached"
    assert exit_code(False, Stop(kind, misleading), 0) == code
    assert kind.exit_code == code


def test_incomplete_without_a_stop_and_complete_runs() -> None:
    assert exit_code(False, None, 0) == INCOMPLETE_EXIT == 1
    assert exit_code(True, None, 0) == 0
    assert exit_code(True, None, THRESHOLD_EXIT) == THRESHOLD_EXIT
    # a stop recorded on a run that still completed does not change its code
    assert exit_code(True, Stop(StopKind.BUDGET, "budget reached"), 0) == 0


def test_the_budget_stops_with_a_budget_kind_and_says_what_was_spent() -> None:
    stop = Budget(tokens=100).exceeded(Usage(prompt_tokens=60, completion_tokens=40))
    assert stop is not None and stop.kind is StopKind.BUDGET
    assert str(stop) == stop.message == "budget reached: used 100 of 100 tokens"
    assert Budget(usd=2.0).exceeded(Usage(cost_usd=1.0)) is None


def test_every_item_of_a_cell_failing_is_its_own_code() -> None:
    rows = [
        {"run_key": "a", "sample_id": "1", "status": "model_error", "errors": ["boom"]},
        {"run_key": "b", "sample_id": "1", "status": "ok"},
    ]
    outcome = run_outcome(rows, ["a", "b"])
    assert outcome.exit_code() == ALL_FAILED_EXIT and outcome.all_failed_cells == ["a"]
    assert exit_code(True, None, outcome.exit_code()) == ALL_FAILED_EXIT
