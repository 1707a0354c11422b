"""``benchmarks/dense_before_after.py`` with tiny sizes: this checkout against itself, on
generated pages (the real comparison names another source tree as ``--before``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.model
REPO = Path(__file__).resolve().parents[2]


def test_host_and_build_sections_run_interleaved(tmp_path, bench_script):
    out = tmp_path / "report.json"
    args = [
        "--before", str(REPO), "--sections", "host,build", "--source", "synthetic",
        "--pages", "3", "--rounds", "2", "--cache-dir", str(tmp_path), "--json", str(out),
    ]  # fmt: skip
    assert bench_script("dense_before_after").main(args) == 0
    report = json.loads(out.read_text())
    host, build = report["host"], report["build"]
    for side in ("before", "after"):
        assert len(host[f"{side}_ms_per_page_wall_rounds"]) == 2
        assert host[f"{side}_ms_per_page_wall"] == min(host[f"{side}_ms_per_page_wall_rounds"])
        assert build[f"{side}_pages_per_s"] == max(build[f"{side}_pages_per_s_rounds"])
    assert host["after_over_before_cpu"] > 0 and build["after_over_before"] > 0
    assert report["environment"]["cpus"] >= 1


def test_the_before_tree_is_checked(tmp_path, bench_script):
    with pytest.raises(SystemExit):
        bench_script("dense_before_after").main(["--before", str(tmp_path)])
    with pytest.raises(SystemExit):
        bench_script("dense_before_after").main(["--before", str(REPO), "--sections", "host,warp"])
