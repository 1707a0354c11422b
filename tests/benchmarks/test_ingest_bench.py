"""Smoke test: the ingestion benchmark runs end to end on a tiny generated PDF."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def test_benchmark_prints_ratio_last(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    bench_script: Any,
) -> None:
    module = bench_script("ingest")
    args = ["--pdf-dir", str(tmp_path), "--pages", "4", "--repeats", "1", "--rss-pages", "6"]
    assert module.main([*args, "--busy", "1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("ratio=") and float(lines[-1].split("=")[1]) > 0
    assert any(line.startswith("peak RSS ingesting 6 pages") for line in lines)
    assert any("pages=4" in line for line in lines)
    assert any("1 busy process(es) beside" in line for line in lines)
