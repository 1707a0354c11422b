"""Fixtures shared by every test package. Package-specific fixtures live in tests/<pkg>/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def mmlb_dir(shared_dir: Path) -> Path:
    """The 12 real MMLongBench-Doc PDFs and 101 questions (read in place, never copied)."""
    path = shared_dir / "data" / "mmlb-dev"
    if not (path / "questions.jsonl").is_file():
        pytest.skip("mmlb-dev data missing")
    return path


@pytest.fixture(scope="session")
def formats_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "formats"
