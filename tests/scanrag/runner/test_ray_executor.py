"""The Ray executor on a small local Ray instance: same rows as the local executor."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.runner import JsonlLog, resume_run, start_run

ray = pytest.importorskip("ray")
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # Workers inherit the environment: they import the fake components from this folder.
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), old) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


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
