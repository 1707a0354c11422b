"""The graphs tests use the same builders as the agents tests (loaded from that conftest)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_agents_test_builders", Path(__file__).parents[1] / "agents" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_builders)

kit = _builders.kit
doc = _builders.doc
renderer = _builders.renderer
