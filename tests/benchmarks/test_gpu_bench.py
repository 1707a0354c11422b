"""``benchmarks/gpu_bench.py`` with tiny sizes on the CPU: every section runs and its figures
are sane (the GPU figures come from running the script itself on a GPU)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.model
TINY = [
    "--pages", "3", "--host-pages", "6", "--chars", "1500", "--maxsim-pages", "40",
    "--maxsim-tokens", "24", "--doc-pages", "10", "--search-vectors", "3000", "--repeats", "1",
]  # fmt: skip


def test_every_section_runs_with_tiny_sizes(tmp_path, capsys, bench_script):
    import torch

    if torch.cuda.is_available():
        pytest.skip("sized for the CPU; run the script itself on a GPU")
    out = tmp_path / "bench.json"
    assert bench_script("gpu_bench").main([*TINY, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    dense, maxsim, search = report["dense"], report["maxsim"], report["search"]
    assert dense["device"] == "cpu" and dense["single_tokenization"] is True
    assert dense["max_abs_diff_vs_legacy"] < 1e-5  # the same vectors as before
    for name in ("project", "legacy", "raw"):
        assert dense[f"{name}_pages_per_s_parallel"] > 0
        assert dense[f"{name}_pages_per_s_tokenizers_parallelism_false"] > 0
    assert (
        dense["project_host_ms_per_page_wall"] > 0
        and dense["host_ratio_legacy_over_project_cpu"] > 0
    )
    assert maxsim["device"] == "cpu" and maxsim["bound_pairs_per_s"] > 0
    assert maxsim["fraction_of_bound"] > 0
    assert maxsim["max_rel_diff_vs_engine"] < 1e-3
    assert (
        search["torch_cpu_same_hits_as_faiss"] is True
        and "torch_cuda_p50_ms_one_query" not in search
    )
    assert "[maxsim]" in capsys.readouterr().out


def test_unknown_sections_are_refused(bench_script):
    with pytest.raises(SystemExit):
        bench_script("gpu_bench").main(["--sections", "dense,warp"])
