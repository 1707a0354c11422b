"""10,000-item runs: concurrency efficiency, flat memory, and a resume after ``kill -9``.

Uses ``benchmarks/runner.py``'s pieces (a scripted model that sleeps 300 ms per call, a one-call
reader strategy, 20 generated PDFs, three strategy variants per question):

1. a run of ``items`` items in this process: efficiency = ideal / run stage, ideal = calls ×
   delay ÷ concurrency (target ≥ 0.95), and RSS sampled every 50 ms: growth from the first to
   the last quarter of the run stage, first to last trajectory row (target < 50 MB);
2. the same run in a child process, killed with SIGKILL once ``kill_at`` rows are written,
   then ``resume_run`` in a fresh child: seconds from starting that process to its first new
   row (target ≤ 5 s; one model call of ``delay`` is inside that time), and to the run stage.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

_CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
import runner as bench
from scanrag.config import config_from_dict
from scanrag.llm.scripted import register_scripted
from scanrag.runner import resume_run, start_run
register_scripted("bench-sleep", bench.SleepingModel(name=bench.MODEL, delay_s={delay}))
mode, payload = sys.argv[1], sys.argv[2]
if mode == "start":
    start_run(config_from_dict(json.loads(payload)), log=None)
else:
    result = resume_run(payload, log=None)
    print(json.dumps(result.summary["sessions"][-1].get("stages", {{}})))
"""


def _bench_module() -> Any:
    sys.path.insert(0, str(HERE))
    import runner as bench

    return bench


def _rows(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.endswith(b"\n"))
    except FileNotFoundError:
        return 0


def in_process(items: int, concurrency: int, delay: float, root: Path) -> dict[str, Any]:
    from scanrag.config import config_from_dict
    from scanrag.llm.scripted import register_scripted
    from scanrag.rundir import JsonlLog
    from scanrag.runner import start_run

    bench = _bench_module()
    model = register_scripted("bench-sleep", bench.SleepingModel(name=bench.MODEL, delay_s=delay))
    dataset = bench.make_dataset(root, math.ceil(items / 3))
    exp = config_from_dict(bench.config(root, dataset, concurrency, "runs"))
    rows: list[float] = []  # when each trajectory row was written: bounds the run stage
    real_append = JsonlLog.append

    def timed_append(self: JsonlLog, row: Any) -> None:
        real_append(self, row)
        if self.path.name == "trajectories.jsonl":
            rows.append(time.perf_counter())

    JsonlLog.append = timed_append  # type: ignore[method-assign]
    try:
        with bench.RssSampler() as sampler:
            started = time.perf_counter()
            result = start_run(exp, log=None)
            wall = time.perf_counter() - started
    finally:
        JsonlLog.append = real_append  # type: ignore[method-assign]
    if not result.complete:
        raise RuntimeError(f"the run stopped: {result.stop_reason}")
    stages = result.summary["sessions"][-1]["stages"]
    calls = int(getattr(model, "calls", 0))
    run_stage = stages["run"]["seconds"]
    ideal = calls * delay / concurrency
    samples = sampler.samples
    # The run stage: from the first trajectory row to the last (ingestion before it, and the
    # summary and scoring after it, which read every row, are not part of the comparison).
    t0, t1 = rows[0], rows[-1]
    span = max(t1 - t0, 1e-9)
    q1 = [r for t, r in samples if t0 <= t <= t0 + span / 4] or [samples[0][1]]
    q4 = [r for t, r in samples if t1 - span / 4 <= t <= t1] or [samples[-1][1]]
    after = [r for t, r in samples if t > t1] or [samples[-1][1]]
    return {
        "items": result.summary["counts"]["trajectories"],
        "calls": calls,
        "concurrency": concurrency,
        "delay": delay,
        "ideal_s": ideal,
        "run_stage_s": run_stage,
        "wall_s": wall,
        "efficiency": ideal / run_stage,
        "efficiency_total": ideal / wall,
        "rss_start_mib": samples[0][1] / 2**20,
        "rss_peak_mib": max(r for _, r in samples) / 2**20,
        "rss_q1_mib": max(q1) / 2**20,
        "rss_q4_mib": max(q4) / 2**20,
        "rss_growth_mib": (max(q4) - max(q1)) / 2**20,
        "rss_after_run_mib": max(after) / 2**20,
        "dataset": str(dataset),
    }


def kill_and_resume(
    items: int, concurrency: int, delay: float, kill_at: int, root: Path
) -> dict[str, Any]:
    bench = _bench_module()
    dataset = bench.make_dataset(root, math.ceil(items / 3))
    config = bench.config(root, dataset, concurrency, "runs-killed")
    script = _CHILD.format(here=str(HERE), delay=delay)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", script, "start", json.dumps(config)], cwd=REPO, env=env
    )
    runs = root / "runs-killed"
    log = None
    try:
        while child.poll() is None:
            found = sorted(runs.glob("*/trajectories.jsonl")) if runs.is_dir() else []
            if found:
                log = found[0]
                if _rows(log) >= kill_at:
                    os.kill(child.pid, signal.SIGKILL)
                    break
            time.sleep(0.05)
    finally:
        child.wait()
    if log is None:
        raise RuntimeError("the run to kill wrote no trajectories")
    if child.returncode != -signal.SIGKILL:
        raise RuntimeError(
            f"the run ended ({child.returncode}) before {kill_at} rows: lower the kill point"
        )
    killed_rows = _rows(log)
    log_mib = log.stat().st_size / 2**20
    started = time.perf_counter()
    resumed = subprocess.Popen(
        [sys.executable, "-c", script, "resume", str(log.parent)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    first_row = None
    try:
        while resumed.poll() is None and time.perf_counter() - started < 120:
            if _rows(log) > killed_rows:
                first_row = time.perf_counter() - started
                break
            time.sleep(0.02)
    finally:
        resumed.kill()
        resumed.wait()
    return {
        "killed_at_rows": killed_rows,
        "log_mib": log_mib,
        "first_new_row_s": first_row,
        "delay": delay,
    }


def measure(items: int, concurrency: int, delay: float, kill_at: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scanrag-10k-") as tmp:
        root = Path(tmp)
        run = in_process(items, concurrency, delay, root / "inproc")
        resume = kill_and_resume(items, concurrency, delay, kill_at, root / "killed")
    return {"run": run, "resume": resume}


def print_runner(result: dict[str, Any]) -> None:
    run, resume = result["run"], result["resume"]
    print(
        f"runner: items={run['items']} calls={run['calls']} delay={run['delay']}s "
        f"concurrency={run['concurrency']}: ideal {run['ideal_s']:.1f} s, run stage "
        f"{run['run_stage_s']:.1f} s, whole start_run {run['wall_s']:.1f} s"
    )
    print(
        f"  rss start {run['rss_start_mib']:.1f} MiB, peak {run['rss_peak_mib']:.1f} MiB, "
        f"first quarter {run['rss_q1_mib']:.1f} MiB, last quarter {run['rss_q4_mib']:.1f} MiB "
        f"(of the run stage); summary and scoring after it {run['rss_after_run_mib']:.1f} MiB"
    )
    print(f"runner_efficiency={run['efficiency']:.3f}")
    print(f"runner_efficiency_total={run['efficiency_total']:.3f}")
    print(f"runner_rss_growth_mib={run['rss_growth_mib']:.1f}")
    first = resume["first_new_row_s"]
    print(
        f"  kill -9 after {resume['killed_at_rows']} rows ({resume['log_mib']:.1f} MiB of "
        f"trajectories); the resumed process wrote its first new row after "
        f"{'never' if first is None else f'{first:.2f} s'} (one {resume['delay']} s model "
        "call included)"
    )
    print(f"runner_resume_first_row_s={'nan' if first is None else f'{first:.2f}'}")
