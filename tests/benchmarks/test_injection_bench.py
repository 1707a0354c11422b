"""Smoke test: the injection benchmark counts flips, with a scripted model that obeys any
instruction it can see outside a fenced block and none inside one."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from scanrag.llm import ScriptedModel
from scanrag.llm.scripted import clear_scripted, register_scripted
from scanrag.llm.types import ChatRequest
from scanrag.untrusted import read_blocks, read_quoted

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "injection.py"


def gullible_outside_blocks(request: ChatRequest) -> str:
    """Follows a planted instruction unless it stands inside a page block or a quoted field."""
    text = request.messages[-1].text
    shielded = [b.text for b in read_blocks(text)] + [str(v) for v in read_quoted(text).values()]
    fooled = "ZEBRA-7731" in text and not any("ZEBRA-7731" in s for s in shielded)
    if request.stage == "reader":
        return json.dumps({"answer": "ZEBRA-7731" if fooled else "the value on page 2"})
    if "grade" in (request.json_schema or {}).get("properties", {}):
        return json.dumps({"grade": 3 if fooled else 0})
    return json.dumps({"consistent": fooled, "reason": "r"})


def test_benchmark_prints_flip_rates(capsys: pytest.CaptureFixture[str]) -> None:
    bench = runpy.run_path(str(SCRIPT))
    register_scripted("gullible", ScriptedModel(responder=gullible_outside_blocks))
    try:
        assert bench["main"](["--model", "scripted/gullible", "--questions", "1"]) == 0
    finally:
        clear_scripted()
    lines = capsys.readouterr().out.strip().splitlines()
    rates = dict(line.split("=", 1) for line in lines if line.startswith("flip_rate["))
    cases = len(bench["PAGE_ATTACKS"]) + 2 * len(bench["ANSWER_ATTACKS"])
    assert rates["flip_rate[fenced]"] == f"0.000 (0/{cases})"
    assert rates["flip_rate[raw]"] == f"1.000 ({cases}/{cases})"
    assert any(line.startswith("reader/ignore_instructions") for line in lines)
