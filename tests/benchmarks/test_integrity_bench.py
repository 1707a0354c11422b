"""``benchmarks/integrity.py`` runs end to end on small inputs and prints every figure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "integrity.py"


def test_the_benchmark_prints_its_figures(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("integrity_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = ["--pdf-dir", str(tmp_path / "none"), "--pages", "2", "--rows", "60", "--repeats", "1"]
    assert module.main(args) == 0
    out = capsys.readouterr().out
    assert '"files": 4, "pages": 8' in out and '"rows": 60' in out
    assert out.strip().splitlines()[-1].startswith("summary: verify ")
