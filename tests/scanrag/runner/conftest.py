"""Runner test fixtures: the fake components module is importable as ``runner_fakes``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def _fake_models_registered() -> None:
    """Other test packages clear the scripted registry; the fake models are reached by name."""
    import runner_fakes

    runner_fakes.register_models()
