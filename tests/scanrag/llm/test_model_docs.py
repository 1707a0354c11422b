"""The model-entry examples in README.md and docs/models.md validate as configs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.config import config_from_dict

REPO = Path(__file__).resolve().parents[3]
BASE = {
    "name": "docs",
    "datasets": [{"synthetic": {"docs": 1}}],
    "strategies": [{"name": "full_doc"}],
}


def _yaml_blocks(path: Path) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.DOTALL)


def _as_config(block: str) -> dict[str, Any]:
    data = yaml.safe_load(block)
    if "reader" in data:  # a role snippet
        data = {"models": {"agents": data}}
    return {**BASE, **data}


DOC_BLOCKS = _yaml_blocks(REPO / "docs" / "models.md")
README_BLOCKS = [b for b in _yaml_blocks(REPO / "README.md") if "api_base" in b]


@pytest.mark.parametrize("block", DOC_BLOCKS + README_BLOCKS)
def test_examples_validate(block: str) -> None:
    config = config_from_dict(_as_config(block))
    entries = config.model_entries()
    assert entries, "an example without a model entry"
    for entry in entries.values():
        assert entry.api_key_env is None or entry.api_key_env.isupper()


def test_the_docs_cover_every_server_named_in_the_issue() -> None:
    text = (REPO / "docs" / "models.md").read_text(encoding="utf-8")
    for server in ("vLLM", "SGLang", "Ollama", "llama.cpp's server", "llama-cpp-python's server"):
        assert f"**{server}" in text, server
    assert len(DOC_BLOCKS) >= 7 and README_BLOCKS


def test_grid_example_sweeps_two_servers() -> None:
    block = next(b for b in DOC_BLOCKS if "grid:" in b)
    config = config_from_dict(_as_config(block))
    keys = [cell.run_key for cell in config.cells()]
    assert keys == ["full_doc@reader=vllm-qwen", "full_doc@reader=sglang-qwen"]
    assert config.judge_models()["default"] == "judge-api"
