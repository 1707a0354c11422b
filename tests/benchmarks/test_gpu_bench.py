"""``benchmarks/gpu_bench.py`` with tiny sizes on the CPU: every section runs and its figures
are sane, every section says where it is, a budget stops a section cleanly, and a run killed
midway keeps the sections that finished (the GPU figures come from running the script itself
on a GPU)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.model
REPO = Path(__file__).resolve().parents[2]
TINY = [
    "--pages", "3", "--host-pages", "6", "--chars", "1500", "--maxsim-pages", "40",
    "--maxsim-tokens", "24", "--doc-pages", "10", "--search-vectors", "3000", "--repeats", "1",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _cpu_only():
    import torch

    if torch.cuda.is_available():
        pytest.skip("sized for the CPU; run the script itself on a GPU")


def test_every_section_runs_with_tiny_sizes_and_says_where_it_is(tmp_path, capsys, bench_script):
    out = tmp_path / "bench.json"
    argv = [*TINY, "--tick-s", "0.05", "--json", str(out)]
    assert bench_script("gpu_bench").main(argv) == 0
    report = json.loads(out.read_text())
    dense, maxsim, search = report["dense"], report["maxsim"], report["search"]
    assert dense["device"] == "cpu" and dense["single_tokenization"] is True
    assert dense["max_abs_diff_vs_legacy"] < 1e-5  # the same vectors as before
    for name in ("project", "legacy", "raw"):
        assert dense[f"{name}_pages_per_s_parallel"] > 0
        assert dense[f"{name}_pages_per_s_tokenizers_parallelism_false"] > 0
    assert dense["project_speed_over_raw_parallel"] > 0
    assert (
        dense["project_host_ms_per_page_wall"] > 0
        and dense["host_ratio_legacy_over_project_cpu"] > 0
    )
    assert maxsim["device"] == "cpu" and maxsim["bound_pairs_per_s"] > 0
    for path in ("kernel", "lik", "flash"):  # the fused paths need CUDA: they say so
        assert maxsim[f"{path}_unavailable"] == "needs CUDA"
    assert maxsim["matmul_fraction_of_bound"] > 0 and maxsim["fastest_whole"] == "matmul"
    assert maxsim["matmul_max_rel_diff_vs_reference"] == 0.0
    assert maxsim["matmul_max_rel_diff_vs_engine"] < 1e-3
    assert maxsim["auto"]["chosen"] == "matmul"
    assert (
        search["torch_cpu_same_hits_as_faiss"] is True
        and "torch_cuda_p50_ms_one_query" not in search
    )
    lines = capsys.readouterr().out.splitlines()
    for name in ("dense", "maxsim", "search"):
        mine = [line for line in lines if line.startswith(f"[{name}] ")]
        assert "start (budget" in mine[0] and mine[-1].endswith("end: complete"), mine
        stages = [line for line in mine if re.search(r"stage .+ \(\d+/(\d+|\?)\)$", line)]
        assert len(stages) >= 2, mine  # stage lines with done/total, between start and end


def test_the_ticker_repeats_a_slow_stage_with_its_count(bench_script):
    """A stage that takes longer than ``tick_s`` is printed again by the ticker (the encoder
    load of the run above may take no time at all when an earlier test loaded it)."""
    import io

    progress = bench_script("gpu_bench_progress")
    out = io.StringIO()
    with progress.Section("slow", budget_s=60, tick_s=0.02, out=out) as section:
        section.stage("wait", 3)
        section.advance()
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    ticks = [line for line in lines if line.endswith("stage wait (1/3)")]
    assert len(ticks) >= 2, lines  # the ticker's repeats, with done/total
    assert lines[-1].endswith("end: complete")


def test_a_section_past_its_budget_stops_cleanly_and_is_marked_incomplete(
    tmp_path, capsys, bench_script
):
    out = tmp_path / "bench.json"
    argv = [*TINY, "--sections", "search,maxsim", "--budget-s", "0", "--json", str(out)]
    assert bench_script("gpu_bench").main(argv) == 1
    report = json.loads(out.read_text())
    for name in ("search", "maxsim"):
        assert report[name]["incomplete"] is True and "budget of 0 s" in report[name]["stopped"]
    assert "end: incomplete" in capsys.readouterr().out


def test_a_run_killed_midway_keeps_the_sections_that_finished(tmp_path):
    out = tmp_path / "bench.json"
    command = [
        sys.executable, str(REPO / "benchmarks" / "gpu_bench.py"), *TINY,
        "--sections", "search,dense", "--tick-s", "0.2", "--json", str(out),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env) as run:
        assert run.stdout is not None
        seen = []
        deadline = time.monotonic() + 600
        for line in run.stdout:
            seen.append(line)
            if line.startswith("[dense] ") and "stage" in line:  # search done, dense running
                run.send_signal(signal.SIGKILL)
                break
            assert time.monotonic() < deadline, seen
        run.wait(timeout=60)
    assert run.returncode == -signal.SIGKILL
    report = json.loads(out.read_text())
    assert set(report) == {"environment", "search"}, "".join(seen)
    assert report["search"]["torch_cpu_same_hits_as_faiss"] is True
    assert report["search"]["section_s"] > 0


HUNG = """
import sys, time
from pathlib import Path
sys.path.insert(0, "benchmarks")
import gpu_bench_progress as progress

progress.STACK_GRACE_S, progress.HARD_FACTOR = 0.3, 1.0
keep = lambda section: Path(sys.argv[1]).write_text(f"kept at {section.label}")
with progress.Section("stuck", 0.2, tick_s=0.05, on_hang=keep) as section:
    section.stage("a call that never returns", 1)
    time.sleep(60)
"""


def test_a_section_that_never_returns_prints_every_stack_and_ends(tmp_path):
    kept = tmp_path / "kept.txt"
    done = subprocess.run(
        [sys.executable, "-c", HUNG, str(kept)], cwd=REPO, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 124, done.stderr
    assert "hung: no return from stage a call that never returns" in done.stdout
    assert done.stderr.count("(most recent call first)") >= 2  # every thread, dumped
    assert 'File "<string>", line 11' in done.stderr  # the main thread, where it sleeps
    assert kept.read_text() == "kept at a call that never returns"


def test_unknown_sections_are_refused(bench_script):
    with pytest.raises(SystemExit):
        bench_script("gpu_bench").main(["--sections", "dense,warp"])
