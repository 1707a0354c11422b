"""Importing the gateway package must not load litellm or llama-cpp."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("litellm", "llama_cpp", "openai", "torch")


@pytest.mark.parametrize(
    "module", ["scanrag.llm", "scanrag.llm.gateway", "scanrag.llm.local", "scanrag.llm.providers"]
)
def test_import_is_light(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "from scanrag.llm import LLMClient, UsageLedger, local_model_names\n"
        "assert local_model_names()\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing {module} pulled in: {out.stdout.strip()}"
