"""``scanrag run``: config errors, a full run through the CLI, and resume after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.cli import main

FAKES = Path(__file__).resolve().parents[1] / "runner"
sys.path.insert(0, str(FAKES))
import runner_fakes as rf  # noqa: E402


@pytest.fixture(autouse=True)
def _fake_models_registered() -> None:
    """Other test packages clear the scripted registry; the in-process runs and the preflight
    reach the fake models by name."""
    rf.register_models()


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(FAKES), out.get("PYTHONPATH")) if p)
    return out


def write_config(root: Path, **sections: Any) -> Path:
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(rf.make_config(root, **sections)))
    return path


def rows(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "trajectories.jsonl").read_text().splitlines(keepends=True)
    return [json.loads(line) for line in lines if line.endswith("\n")]


def test_invalid_config_exits_2_and_names_the_problem(tmp_path: Path, capsys) -> None:
    config = rf.make_config(tmp_path)
    config["strategies"][0]["name"] = "telepathy"
    config["runner"]["budget"] = {"dollars": 3}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "strategies.0.name: unknown strategy 'telepathy'" in err
    assert "full_doc" in err and "fake_reader" in err
    assert "runner.budget: unknown key(s) 'dollars'; allowed keys: tokens, usd" in err
    assert not (tmp_path / "runs").exists()


def test_cli_needs_exactly_one_of_config_and_resume(capsys) -> None:
    assert main(["run"]) == 2
    assert "give a CONFIG file or --resume" in capsys.readouterr().err


def test_cli_run_with_overrides_prints_the_table(tmp_path: Path, capsys) -> None:
    path = write_config(tmp_path)
    code = main(["run", str(path), "--limit", "2", "--set", "runner.seed=3", "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "rag+overlap" in out and "first_pages" in out
    (run_dir,) = (tmp_path / "runs").iterdir()
    resolved = yaml.safe_load((run_dir / "config.resolved.yaml").read_text())
    assert resolved["runner"]["seed"] == 3
    assert resolved["datasets"][0]["limit"] == 2
    assert len(rows(run_dir)) == 4


def test_resume_after_kill_9_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    rf.make_dataset(tmp_path, docs=5, pages=8)  # 40 samples × 2 cells = 80 items
    strategies = [
        {
            "name": "fake_reader",
            "label": "rag",
            "retriever": "overlap",
            "params": {"k": 1, "delay_s": 0.08},
        },
        {"name": "fake_reader", "label": "first_pages", "params": {"delay_s": 0.08}},
    ]
    path = write_config(tmp_path, strategies=strategies, runner={"concurrency": 2})
    cmd = [sys.executable, "-m", "scanrag.cli", "run", str(path)]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        traj = None
        while time.monotonic() < deadline:
            found = list((tmp_path / "runs").glob("*/trajectories.jsonl"))
            if found and len(found[0].read_bytes().splitlines()) >= 12:
                traj = found[0]
                break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.05)
        assert traj is not None, "the run never wrote 12 rows"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run_dir = traj.parent
    before = rows(run_dir)
    assert 12 <= len(before) < 80
    with open(traj, "ab") as fh:  # as if the kill had landed in the middle of a write
        fh.write(b'{"schema_version":"1.0","sample_id":"q4-8","stra')

    resume = [sys.executable, "-m", "scanrag.cli", "run", "--resume", str(run_dir)]
    done = subprocess.run(resume, env=env(), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "removed a torn last line" in done.stderr
    after = rows(run_dir)
    keys = [(r["run_key"], r["sample_id"]) for r in after]
    assert len(keys) == len(set(keys)) == 80
    assert after[: len(before)] == before  # rows written before the kill are untouched
    assert all(r["status"] == "ok" for r in after)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["complete"] is True
    assert [s["resumed"] for s in summary["sessions"]] == [False, True]


@pytest.mark.parametrize("flag", ["--limit", "--model"])
def test_resume_refuses_sample_or_model_changes(tmp_path: Path, flag: str, capsys) -> None:
    assert main(["run", "--resume", str(tmp_path), flag, "2"]) == 2
    assert "cannot change a run being resumed" in capsys.readouterr().err


def test_sigterm_stops_cleanly_with_a_resumable_summary(tmp_path: Path) -> None:
    strategies = [{"name": "fake_reader", "label": "slow", "params": {"delay_s": 0.3}}]
    path = write_config(tmp_path, strategies=strategies, runner={"concurrency": 1})
    cmd = [sys.executable, "-m", "scanrag.cli", "run", str(path)]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        found = list((tmp_path / "runs").glob("*/trajectories.jsonl"))
        if found and found[0].read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted" and summary["complete"] is False
    assert 2 <= summary["counts"]["trajectories"] < 12


def test_no_cache_and_other_shortcuts_become_overrides() -> None:
    import argparse

    from scanrag.commands.run import add_common_options, overrides_from_args

    parser = argparse.ArgumentParser()
    add_common_options(parser)
    args = parser.parse_args(["--no-cache", "--no-score", "--set", "name=x"])
    assert overrides_from_args(args) == [
        "name=x",
        "scoring.enabled=false",
        "runner.llm.cache=false",
    ]
