"""``benchmarks/integrity.py`` runs end to end on small inputs and prints every figure."""

from __future__ import annotations

from pathlib import Path


def test_the_benchmark_prints_its_figures(tmp_path: Path, capsys, bench_script) -> None:  # type: ignore[no-untyped-def]
    module = bench_script("integrity")
    args = ["--pdf-dir", str(tmp_path / "none"), "--pages", "2", "--rows", "60", "--repeats", "1"]
    assert module.main(args) == 0
    out = capsys.readouterr().out
    assert '"files": 4, "pages": 8' in out and '"rows": 60' in out
    assert "dataset rows:" in out and '"verify_run_ms"' in out and '"read_over_json"' in out
    assert out.strip().splitlines()[-1].startswith("summary: verify ")
