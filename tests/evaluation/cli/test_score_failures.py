"""``scanrag score`` with a failing judge or scorer: failures counted by cause on stderr and in
summary.json, exit 5 when every item a scorer judged failed, a reply cut at its (schema-sized)
token cap named ``length``, and a raising scorer a recorded ``scorer_error`` row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.evaluation.base import PureScorer
from scanrag.llm import ChatRequest, ModelError, ScriptedModel, clear_scripted, register_scripted
from scanrag.registry import SCORERS
from scanrag.schemas import Trajectory

CELL = "topk-bm25"


def _answers(run: Path, answers: list[str]) -> None:
    """Give the run's trajectories answers that differ from the gold, so the judge is asked."""
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    out = []
    for line, answer in zip(lines, answers, strict=True):
        traj = Trajectory.model_validate_json(line)
        out.append(traj.model_copy(update={"answer": answer}).model_dump_json())
    (run / "trajectories.jsonl").write_text("\n".join(out) + "\n")


@pytest.fixture
def judges():
    yield
    clear_scripted()


def _score(run: Path, model: str, *extra: str) -> list[str]:
    return ["score", str(run), "--judge-model", model, "--scorers", "answer", *extra]


def test_a_rambling_judge_is_cut_at_its_cap_named_length_and_exits_5(
    run_dir: Path,
    judges: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _answers(run_dir, ["twelve", "a dozen", "12.0 units"])
    rambler = register_scripted(
        "rambler", ScriptedModel(responder=lambda r: "Let me think. " * 600, cap_replies=True)
    )
    assert main(_score(run_dir, "scripted/rambler", "--resamples", "0")) == 5
    err = capsys.readouterr().err
    assert f"judge errors in {CELL}, answer: every judged item failed (3 of 3): length 3" in err
    assert "(exit code 5)" in err
    # the cap is sized to the verdict's schema, not 1,024; structured output is asked for
    first = rambler.requests[0]
    assert first.max_tokens == 256 and first.json_schema is not None
    summary = json.loads((run_dir / "summary.json").read_text())
    counts = summary["scoring"]["groups"][CELL]["judge_errors"]["answer"]
    assert counts == {"judged": 3, "failed": 3, "causes": {"length": 3}, "all_failed": True}
    rows = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines()]
    record = rows[0]["judges"][0]
    assert rows[0]["status"] == "judge_parse_error" and record["cause"] == "length"
    assert record["finish_reason"] == "length" and "cap of 256 tokens" in record["error"]


def test_mixed_failures_are_counted_by_cause_without_exit_5(
    run_dir: Path,
    judges: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _answers(run_dir, ["prose-0", "fine-1", "down-2"])

    def respond(request: ChatRequest) -> str:
        text = "\n".join(m.text for m in request.messages)  # the corrective call's too
        if "down-2" in text:
            raise ModelError(request.model, "connection refused")
        if "prose-0" in text:
            return "Hmm, hard to tell from here."
        return '{"consistent": true}'

    register_scripted("mixed", ScriptedModel(responder=respond))
    assert main(_score(run_dir, "scripted/mixed", "--resamples", "0")) == 0
    err = capsys.readouterr().err
    line = f"judge errors in {CELL}, answer: 2 of 3 judged items failed: parse 1, transport 1"
    assert line in err and "exit code 5" not in err
    summary = json.loads((run_dir / "summary.json").read_text())
    metric = summary["scoring"]["groups"][CELL]["metrics"]["answer.accuracy"]
    assert (metric["n"], metric["excluded"], metric["value"]) == (1, 2, 1.0)


class Raising(PureScorer):
    """Raises on one item, as the int→str digit limit once did inside a scorer."""

    name = "raising_test"

    def compute(self, trajectory, sample, judge=None):  # type: ignore[no-untyped-def]
        if sample.id == "q1":
            raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
        return self.new_row(trajectory, sample, metrics={"correct": 1.0})

    def aggregate(self, rows, group, stats):  # type: ignore[no-untyped-def]
        from scanrag.evaluation.base import mean_metric, split_rows
        from scanrag.evaluation.schemas import AggregateResult

        usable, failed, _ = split_rows(rows)
        values = [1.0 for _ in usable]
        return AggregateResult(
            metrics={"accuracy": mean_metric(values, stats, excluded=failed, headline=True)}
        )


@pytest.fixture
def raising():
    SCORERS.register("raising_test")(Raising)
    yield
    SCORERS.unregister("raising_test")


def test_a_scorer_exception_is_a_counted_row_never_a_dropped_one(
    run_dir: Path,
    raising: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["score", str(run_dir), "--scorers", "raising_test", "--resamples", "0"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "3 new score rows" in captured.out
    line = f"judge errors in {CELL}, raising_test: 1 of 3 judged items failed: scorer 1"
    assert line in captured.err
    rows = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines()]
    broken = next(r for r in rows if r["sample_id"] == "q1")
    assert broken["status"] == "scorer_error"
    assert broken["reason"].startswith("ValueError: Exceeds the limit (4300 digits)")
    summary = json.loads((run_dir / "summary.json").read_text())
    group = summary["scoring"]["groups"][CELL]
    metric = group["metrics"]["raising_test.accuracy"]
    assert (metric["value"], metric["n"], metric["excluded"]) == (1.0, 2, 1)
    assert group["status"]["raising_test"] == {"ok": 2, "scorer_error": 1}
