"""The Ray executor on a small local Ray instance: same rows as the local executor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.rundir import JsonlLog
from scanrag.runner import resume_run, start_run

ray = pytest.importorskip("ray")


def test_ray_executor_runs_every_item_and_resumes(tmp_path: Path, local_ray: None) -> None:
    config = rf.make_config(tmp_path, runner={"executor": "ray", "budget": {"tokens": 250}})
    stopped = start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    assert stopped.exit_code == 3  # budget: the driver stops submitting
    partial = [r["sample_id"] for r in JsonlLog(stopped.run_dir / "trajectories.jsonl").rows()]
    assert 0 < len(partial) < 24

    finished = resume_run(
        stopped.run_dir, overrides=["runner.budget.tokens=null"], llm=rf.MODEL, log=None
    )
    assert finished.complete
    rows = list(JsonlLog(stopped.run_dir / "trajectories.jsonl").rows())
    keys = [(r["run_key"], r["sample_id"]) for r in rows]
    assert len(keys) == len(set(keys)) == 24
    assert all(r["status"] == "ok" for r in rows)
    rag = [r for r in rows if r["run_key"] == "rag+overlap"]
    assert all(r["answer"] == f"v{r['sample_id'][1]}x{r['sample_id'][3]}" for r in rag)
    assert all(r["usage"]["reader"]["calls"] == 1 for r in rows)
    manifest = json.loads((stopped.run_dir / "manifest.json").read_text())
    assert manifest["retrievers"]["overlap"]["manifest"]["pages"] == 12
    assert manifest["executor"] == "ray"
    summary = json.loads((stopped.run_dir / "summary.json").read_text())
    assert summary["usage"]["run"]["reader"]["calls"] == 24


@pytest.mark.parametrize("restarts", [3, 0], ids=["ray-restarts-it", "driver-replaces-it"])
def test_dead_retriever_actor_is_replaced_and_items_rerun(
    tmp_path: Path, local_ray: None, restarts: int
) -> None:
    marker = tmp_path / "died"
    config = rf.make_config(
        tmp_path,
        retrievers={"overlap": {"type": "fake_mortal", "params": {"marker": str(marker)}}},
        strategies=[{"name": "fake_reader", "label": "rag", "retriever": "overlap"}],
        runner={"executor": "ray", "ray": {"actor_restarts": restarts}},
    )
    result = start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    assert marker.is_file()  # the actor's process did die
    rows = list(JsonlLog(result.run_dir / "trajectories.jsonl").rows())
    assert len(rows) == 12 and all(r["status"] == "ok" for r in rows), [
        r["errors"] for r in rows if r["status"] != "ok"
    ]
    assert all(r["answer"] == f"v{r['sample_id'][1]}x{r['sample_id'][3]}" for r in rows)
    assert result.exit_code == 0


def test_ray_errors_are_cut_to_their_cause() -> None:
    from scanrag.runner.ray_workers import ray_cause

    class ActorDiedError(Exception):
        pass

    died = ActorDiedError(
        "The actor died unexpectedly before finishing this task.\n\tclass_name: RetrieverHost\n"
        "\tpid: 13763\nThe actor is dead because its worker process has died. Worker exit type: "
        "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error "
        "code 2. End of file. Some common causes include: (1) the process was killed by the OOM"
    )
    assert ray_cause(died) == (
        "ActorDiedError: The actor died unexpectedly before finishing this task. (worker exit "
        "SYSTEM_ERROR: Worker unexpectedly exits with a connection error code 2)"
    )

    class RayTaskError(Exception):
        def __init__(self, text: str, cause: BaseException) -> None:
            super().__init__(text)
            self.cause = cause

    wrapped = RayTaskError(
        'ray::run_item_task() (pid=1, ip=x)\n  File "a.py", line 3, in f\n    boom()\n'
        "ValueError: index file truncated",
        ValueError("index file truncated\nmore detail"),
    )
    assert ray_cause(wrapped) == "ValueError: index file truncated"


def test_actor_loss_past_the_retries_is_one_short_error(
    tmp_path: Path, local_ray: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scanrag.runner.ray_executor as ray_executor
    from scanrag.runner.ray_workers import ACTOR_GONE

    monkeypatch.setattr(ray_executor, "ITEM_RETRIES_AFTER_ACTOR_LOSS", 0)
    config = rf.make_config(
        tmp_path,
        retrievers={"overlap": {"type": "fake_mortal", "params": {"marker": str(tmp_path / "m")}}},
        strategies=[{"name": "fake_reader", "label": "rag", "retriever": "overlap"}],
        runner={"executor": "ray", "ray": {"actor_restarts": 0}, "concurrency": 1},
    )
    result = start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    rows = list(JsonlLog(result.run_dir / "trajectories.jsonl").rows())
    failed = [r for r in rows if r["status"] != "ok"]
    assert failed, "the actor's death went unnoticed"
    for row in failed:
        (message,) = row["errors"]
        assert ACTOR_GONE in message and "\n" not in message
        assert "Some common causes" not in message and len(message) < 300


def test_a_ray_run_prints_no_error_looking_ray_lines(tmp_path: Path) -> None:
    """A run that starts its own local cluster: no ``core_worker.cc ... max_restarts`` error
    line (actors take no object-store constructor arguments) and no token-auth notice."""
    import os
    import subprocess
    import sys

    import yaml

    config = rf.make_config(tmp_path, runner={"executor": "ray", "ray": {"num_cpus": 2}})
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    here = str(Path(rf.__file__).parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "scanrag.cli", "run", str(path), "--no-progress"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "core_worker.cc" not in done.stderr and "max_restarts" not in done.stderr
    assert "Token authentication" not in done.stderr
    assert "Started a local Ray instance" in done.stderr  # Ray's stderr was there to see
