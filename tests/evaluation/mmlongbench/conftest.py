"""Evaluation test fixtures: this folder is importable, for ``mmlb_pipeline`` (the mixed
MMLongBench-Doc set shared with its harness in benchmarks/) and ``golden/``."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
