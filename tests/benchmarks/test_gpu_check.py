"""``benchmarks/gpu_check.py`` on this CPU-only machine: every section runs and the chosen
device falls back to the CPU, where the "GPU" and CPU indexes must agree exactly."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.model


def test_every_section_runs_and_agrees_on_the_cpu(tmp_path, capsys, bench_script):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test pins the CPU fallback; run the script itself on a GPU")
    out = tmp_path / "gpu.json"
    assert bench_script("gpu_check").main(["--pages", "40", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["environment"]["cuda"] is False
    dense = report["dense"]
    assert dense["encoder_device"] == "cpu" and dense["faiss_gpu"] is False
    # backend auto: torch on a CPU-only machine too (fp32 ONNX measured slower)
    assert dense["backend"] == "torch" and dense["encoder_param_device"] == "cpu"
    assert dense["top5_same"] is True and dense["max_score_diff"] == 0.0
    for family in ("colpali_colqwen2", "colpali_colpali"):
        section = report[family]
        assert section["device"] == section["scorer_device"] == "cpu"
        assert section["pages"] == 12 and section["top5_same"] is True
        assert section["vectors_max_abs_diff"] == 0.0 and section["regions_on_top3"] > 0
    maxsim = report["maxsim"]
    assert maxsim["device"] == "cpu" and maxsim["max_rel_diff_vs_engine"] < 1e-4
    assert "[maxsim]" in capsys.readouterr().out
