"""Smoke test: the ingestion benchmark runs end to end on a tiny generated PDF."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ingest.py"


def test_benchmark_prints_ratio_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("bench_ingest", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    args = ["--pdf-dir", str(tmp_path), "--pages", "4", "--repeats", "1", "--rss-pages", "6"]
    assert module.main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("ratio=") and float(lines[-1].split("=")[1]) > 0
    assert any(line.startswith("peak RSS ingesting 6 pages") for line in lines)
    assert any("pages=4" in line for line in lines)
