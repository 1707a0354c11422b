"""CLI test fixtures: a finished run (real runner, scripted models) made by the report tests'
``report_fixtures`` (``tests/evaluation/report``), for the commands that read one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPORT_TESTS = Path(__file__).resolve().parents[1] / "report"
if str(REPORT_TESTS) not in sys.path:
    sys.path.insert(0, str(REPORT_TESTS))

import report_fixtures  # noqa: E402


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixtures.make_run(tmp_path_factory.mktemp("report-run"))
