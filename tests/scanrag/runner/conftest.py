"""Runner test fixtures: the fake components module is importable as ``runner_fakes``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
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


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local 2-CPU Ray for one test module. Workers inherit the environment: they import
    the fake components from this folder."""
    ray = pytest.importorskip("ray")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), old) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
