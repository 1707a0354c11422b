"""Smoke tests: ``benchmarks/scale.py --quick`` runs its parts end to end and prints every figure.

The figures of a quick run are not measurements (a few hundred pages, 90 items); the tests
check that each part runs, prints its ``key=value`` lines, and that the checks built into it
hold (identical output, a resumed run that writes new rows). Each run is a fresh process:
the parts start worker pools, Ray and child runs of their own.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "scale.py"


def _figures(*args: str, timeout: int) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=timeout,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    pairs = [line.split("=", 1) for line in out.stdout.splitlines() if "=" in line]
    figures = {key: value for key, value in pairs if " " not in key}
    assert figures, out.stdout
    return figures


def _number(figures: dict[str, str], key: str) -> float:
    value = float(figures[key])
    assert math.isfinite(value), f"{key}={figures[key]}"
    return value


def test_quick_run_prints_memory_ingest_and_runner_figures(tmp_path: Path) -> None:
    figures = _figures("--parts", "memory,ingest,runner", "--work", str(tmp_path), timeout=600)
    for key in ("memory_eval_kb_per_page", "memory_beyond_index_kb_per_page"):
        _number(figures, key)
    assert _number(figures, "memory_index_kb_per_page") > 0
    assert figures["ingest_identical"] == "True"
    for key in ("ingest_ratio_pool", "ingest_ratio_single", "ingest_parallel_efficiency"):
        assert _number(figures, key) > 0
    assert 0 < _number(figures, "runner_efficiency") <= 1.05
    _number(figures, "runner_rss_growth_mib")
    assert 0 < _number(figures, "runner_resume_first_row_s") < 120
    assert (tmp_path / "corpus-300-30" / "corpus.json").is_file()  # corpora kept in --work


@pytest.mark.slow
def test_quick_run_prints_ray_figures() -> None:
    pytest.importorskip("ray")
    figures = _figures("--parts", "ray", timeout=600)
    assert figures["ray_identical"] == "True"
    assert _number(figures, "ray_ingest_bm25_ratio") > 0


def test_unknown_part_is_refused() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--parts", "memory,gpu"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert out.returncode == 2 and "known: memory, ingest, runner, ray" in out.stderr
