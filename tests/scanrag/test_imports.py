"""The kernel and the scorers import without the heavy libraries."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "faiss", "litellm", "langgraph", "transformers", "sentence_transformers")


@pytest.mark.parametrize("module", ["scanrag", "scanrag.llm", "scanrag.cli", "evaluation"])
def test_light_import(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"importing {module} pulled in: {out}"
