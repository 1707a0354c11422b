"""One scoring path: ``scanrag run`` and ``scanrag score`` score a run the same way, through
the registered backend, with the recorded scorer parameters, and rebuild the whole summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.evaluation.backend import EvaluationBackend
from scanrag.evaluation.cli.score import score_dir
from scanrag.protocols import ScoringJob, ScoringPlan
from scanrag.registry import BACKENDS
from scanrag.rundir import JsonlLog, RunDir
from scanrag.runner import start_run
from scanrag.schemas import Trajectory

SCALED = {"enabled": True, "scorers": ["fake_scaled"], "params": {"fake_scaled": {"scale": 2.0}}}


def run(root: Path, **sections: Any):
    return start_run(config_from_dict(rf.make_config(root, **sections)), llm=rf.MODEL, log=None)


def score_lines(run_dir: Path) -> list[dict[str, Any]]:
    return list(JsonlLog(run_dir / RunDir.SCORES).rows())


def test_score_command_keeps_rows_scored_with_configured_params(tmp_path: Path) -> None:
    result = run(tmp_path, scoring=SCALED)
    assert result.summary["headline"]["rag+overlap"]["fake_scaled.accuracy"] == 2.0
    before = (result.run_dir / RunDir.SCORES).read_bytes()
    again = score_dir(result.run_dir)
    assert again.new_rows == 0  # the rows are current under the recorded parameters
    assert (result.run_dir / RunDir.SCORES).read_bytes() == before
    summary = json.loads((result.run_dir / RunDir.SUMMARY).read_text())
    assert summary["headline"]["rag+overlap"]["fake_scaled.accuracy"] == 2.0


def test_score_command_rebuilds_the_whole_summary(tmp_path: Path) -> None:
    result = run(tmp_path)  # the fake config does not score
    assert result.summary["headline"] == {} and result.summary["counts"]["score_rows"] == 0
    scored = score_dir(result.run_dir, scorers=["fake_exact"], n_resamples=0)
    assert scored.new_rows == 24
    summary = json.loads((result.run_dir / RunDir.SUMMARY).read_text())
    assert summary["name"] == "fake" and summary["complete"] is True
    assert summary["headline"]["rag+overlap"] == {"fake_exact.accuracy": 1.0}
    assert summary["counts"]["score_rows"] == 24 and summary["counts"]["scored"] == 24
    assert summary["cells"]["rag+overlap"]["status"] == {"ok": 12}
    sessions = json.loads((result.run_dir / RunDir.MANIFEST).read_text())["sessions"]
    assert [s.get("command") for s in sessions] == [None, "score"]


def test_score_command_goes_through_a_replaced_backend(tmp_path: Path) -> None:
    result = run(tmp_path)
    calls: list[str] = []

    class Counting(EvaluationBackend):
        def plan(self, job: ScoringJob) -> ScoringPlan:
            calls.append("plan")
            return super().plan(job)

    BACKENDS.register("scoring", replace=True)(Counting)
    try:
        score_dir(result.run_dir, scorers=["fake_exact"], n_resamples=0)
    finally:
        BACKENDS.register_lazy(
            "scoring", "scanrag.evaluation.backend:EvaluationBackend", replace=True
        )
    assert calls, "scanrag score bypassed the registered scoring backend"


def test_a_rescored_pair_counts_once(tmp_path: Path) -> None:
    result = run(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    trajectories = JsonlLog(result.run_dir / RunDir.TRAJECTORIES)
    first = Trajectory.model_validate(next(trajectories.rows()))
    trajectories.append(first.model_copy(update={"answer": "changed"}))  # a re-run item
    trajectories.close()
    again = score_dir(result.run_dir, n_resamples=0)
    assert again.new_rows == 1  # only the stale pair
    assert len(score_lines(result.run_dir)) == 25
    summary = json.loads((result.run_dir / RunDir.SUMMARY).read_text())
    assert summary["counts"]["score_rows"] == 24
    assert summary["headline"][first.run_key]["fake_exact.accuracy"] == pytest.approx(11 / 12)


def test_judge_overrides_replace_the_recorded_judges(tmp_path: Path) -> None:
    from scanrag.runner.scoring import judge_models

    config = config_from_dict(
        rf.make_config(tmp_path, models={"judges": {"default": "a/x", "region": "b/y"}})
    )
    recorded = config.judge_models()
    assert judge_models(recorded) == {"default": "a/x", "region": "b/y"}
    assert judge_models(recorded, "c/z", {"fact": "d/w"}) == {"default": "c/z", "fact": "d/w"}
    assert judge_models({}, roles={"answer": "e/v"}) == {"answer": "e/v"}


def test_a_scorer_with_null_parameters_is_scored_and_summarized(tmp_path: Path) -> None:
    # `scoring.params.fake_exact: null` passes the checks (the defaults); the summary used to
    # hand the None on to the scorer's constructor and fail after every pair was scored
    params = {"enabled": True, "scorers": ["fake_exact"], "params": {"fake_exact": None}}
    result = run(tmp_path, scoring=params)
    assert result.complete and len(score_lines(result.run_dir)) == 24
    assert result.summary["headline"]["rag+overlap"]["fake_exact.accuracy"] == 1.0
