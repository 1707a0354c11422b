"""Every Triton kernel the MaxSim paths launch compiles for sm_80 and sm_90 on this CPU (Triton
ships ptxas), as ``benchmarks/gpu_check.py --compile-only`` reports it; and a kernel with the
defect of issue 29 (parameters annotated ``Any``) is caught the same way."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scanrag.indexes import colpali_aot, colpali_kernel

pytest.importorskip("triton")


def test_compile_only_compiles_every_kernel_for_ampere_and_hopper(capsys, bench_script):
    assert bench_script("gpu_check").main(["--compile-only"]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = [line for line in out if re.search(r" sm_\d+  ", line)]
    assert lines and all(" ok " in line for line in lines), [x for x in lines if " ok " not in x]
    assert re.fullmatch(r"compiled \d+ kernels for sm_80, sm_90", out[-1])
    assert int(out[-1].split()[1]) == len(lines)
    for target in (80, 90):  # the project's kernel: every group height x tile, on both targets
        ours = [x for x in lines if x.startswith("maxsim_pages") and f"sm_{target}" in x]
        family = colpali_kernel.TILES[colpali_kernel.TARGETS[target]]
        assert len(ours) == len(colpali_kernel.ROW_BLOCKS) * len(colpali_kernel.DIMS) * len(family)
        for line in ours:  # its tiles fit the smallest card of the family (100 KB, 227 KB)
            shared = int(re.search(r"shared +([\d,]+) B", line).group(1).replace(",", ""))
            assert shared <= (100 << 10 if target == 80 else colpali_aot.SHARED_LIMIT[90])
    for library in colpali_aot.LIBRARIES:
        if library.module not in colpali_aot.missing_libraries():
            assert any(line.startswith(f"{library.path}:") for line in lines)


def _annotated_kernel() -> Any:
    """The shape of the old kernel: a parameter annotated with a name Triton cannot see."""
    import triton
    import triton.language as tl

    @triton.jit
    def scaled(x_ptr: Any, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]  # noqa: N803
        offsets = tl.arange(0, BLOCK)
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)

    return scaled


def test_an_annotation_triton_cannot_resolve_fails_ahead_of_time():
    import torch

    launch = colpali_aot.Launch(
        "scaled", _annotated_kernel(), (torch.zeros(16), 16), {"BLOCK": 16}, "BLOCK=16"
    )
    result = colpali_aot.compile_launch(launch, 90)
    assert result.error is not None and "NameError" in result.error
    assert "FAILED" in result.line()
