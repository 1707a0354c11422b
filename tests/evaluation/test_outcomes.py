"""Item outcomes: the status table, score rows carrying the item's side, error counts beside
every metric (subsets counted exactly), a run of nothing but errors."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.outcomes import (
    STATUS_KINDS,
    Outcome,
    error_counts,
    gave_output,
    is_error,
    item_outcome,
    status_kind,
)
from scanrag.evaluation.schemas import ScoreRow
from scanrag.evaluation.stage import score_run, summarize
from scanrag.schemas import Sample, Status, Trajectory

NO_CI = StatsOptions(n_resamples=0)


def sample(i: int, answerable: bool = True) -> Sample:
    return Sample(
        id=f"q{i}",
        doc_ids=["d.pdf"],
        question="?",
        answer="12" if answerable else "Unanswerable",
        answerable=answerable,
        gold_pages=[1] if answerable else [],
    )


def traj(i: int, status: Status = Status.OK, answer: str | None = "12", **kw) -> Trajectory:
    data = {
        "sample_id": f"q{i}",
        "strategy": "s",
        "run_key": "cell",
        "answer": answer,
        "status": status,
        "metadata": {"dataset": "mmlb"},
    }
    return Trajectory(**(data | kw))


def test_every_trajectory_status_is_in_the_table() -> None:
    assert set(STATUS_KINDS) >= {s.value for s in Status} | {"truncated"}
    assert not is_error("ok") and not is_error(None)
    assert all(is_error(s.value) for s in Status if s is not Status.OK)


def test_an_unknown_status_is_an_error_of_its_own_kind() -> None:
    kind = status_kind("rate_limited")
    assert kind.error and kind.status == "rate_limited" and "newer" in kind.meaning
    assert error_counts(["ok", "model_error", "rate_limited", "model_error"]) == {
        "model_error": 2,
        "rate_limited": 1,
    }


@pytest.mark.parametrize(
    ("status", "answered", "correct", "outcome"),
    [
        ("ok", True, True, Outcome.CORRECT),
        ("ok", True, False, Outcome.WRONG),
        ("ok", False, False, Outcome.UNANSWERED),
        ("model_error", False, False, Outcome.ERROR),
        ("truncated", True, True, Outcome.ERROR),  # an error stays an error
        ("ok", True, None, Outcome.UNSCORED),
    ],
)
def test_item_outcome(status: str, answered: bool, correct: bool | None, outcome: Outcome) -> None:
    assert item_outcome(status, answered, correct) is outcome


def test_output_of_every_task_counts_as_an_answer() -> None:
    assert gave_output(traj(0)) and not gave_output(traj(0, answer="  "))
    assert gave_output(traj(0, answer=None, verdict=False))


async def test_rows_carry_the_item_side_and_their_outcome() -> None:
    trajs = [
        traj(0),
        traj(1, answer="13"),
        traj(2, answer=None),
        traj(3, Status.MODEL_ERROR, answer=None, errors=["503"]),
    ]
    rows = await score_run(trajs, [sample(i) for i in range(4)], ["answer_rules", "pages"])
    by = {(r.sample_id, r.scorer): r for r in rows}
    answers = [by[(f"q{i}", "answer_rules")] for i in range(4)]
    assert [r.outcome for r in answers] == ["correct", "wrong", "unanswered", "error"]
    assert [r.item_status for r in answers] == ["ok", "ok", "ok", "model_error"]
    assert all(r.dataset == "mmlb" for r in rows)
    assert by[("q3", "pages")].outcome == "error" and by[("q0", "pages")].outcome is None
    dumped = answers[3].model_dump(mode="json")
    assert dumped["outcome"] == "error" and dumped["item_status"] == "model_error"
    assert ScoreRow.model_validate(dumped) == answers[3]


def test_rows_written_before_item_status_read_it_from_their_details() -> None:
    legacy = {
        "sample_id": "q1",
        "strategy": "s",
        "scorer": "answer",
        "metrics": {"correct": 0.0},
        "details": {"trajectory_status": "model_error"},
    }
    row = ScoreRow.model_validate(legacy)
    assert row.item_status == "model_error" and row.item_error and row.outcome == "error"
    assert ScoreRow.model_validate({**legacy, "details": {}}).item_status == "ok"


async def test_errors_are_counted_beside_each_metric_on_its_own_items() -> None:
    samples = [sample(0), sample(1), sample(2, answerable=False), sample(3)]
    trajs = [
        traj(0),
        traj(1, Status.MODEL_ERROR, answer=None),
        traj(2, Status.UNPARSED, answer=None),  # an unanswerable item that errored
        traj(3, answer="7"),
    ]
    rows = await score_run(trajs, samples, ["answer_rules", "pages"])
    group = summarize(rows, samples, stats=NO_CI).groups["cell"]
    accuracy = group.metrics["answer_rules.accuracy"]
    assert accuracy.value == pytest.approx(0.25) and accuracy.n == 4 and accuracy.errors == 2
    answerable = group.metrics["answer_rules.accuracy_answerable"]
    assert answerable.n == 3 and answerable.errors == 1  # the unparsed item is unanswerable
    assert group.metrics["answer_rules.accuracy_unanswerable"].errors == 1
    assert group.metrics["pages.recall"].errors == 1  # pages skip the unanswerable item
    assert group.item_status == {"model_error": 1, "ok": 2, "unparsed": 1}


async def test_a_run_of_nothing_but_model_errors_says_so() -> None:
    samples = [sample(i) for i in range(5)]
    trajs = [traj(i, Status.MODEL_ERROR, answer=None) for i in range(5)]
    rows = await score_run(trajs, samples, ["answer_rules"])
    group = summarize(rows, samples, stats=StatsOptions(n_resamples=200)).groups["cell"]
    accuracy = group.metrics["answer_rules.accuracy"]
    assert (accuracy.value, accuracy.low, accuracy.high) == (0.0, 0.0, 0.0)
    assert accuracy.n == 5 and accuracy.errors == 5  # 0.000 [0, 0], and all of it errors
    assert group.item_status == {"model_error": 5}
    assert {r.outcome for r in rows} == {"error"}
