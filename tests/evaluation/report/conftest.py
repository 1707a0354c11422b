"""Report test fixtures: finished runs (real runner, scripted models) and their reports: one
where every item runs, one whose reader fails in three ways.

Both are session-scoped: the run takes a few seconds and every test only reads it (tests that
change a run work on a copy).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import report_fixtures  # noqa: E402


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixtures.make_run(tmp_path_factory.mktemp("report-run"))


@pytest.fixture(scope="session")
def report_dir(finished_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scanrag.evaluation.report import ReportOptions, build_report

    out = tmp_path_factory.mktemp("report-out")
    build_report([finished_run], out, options=ReportOptions(n_resamples=300))
    return out


@pytest.fixture(scope="session")
def error_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose reader fails on three questions: a model error, an unreadable reply and a
    reply without an answer (:func:`report_fixtures.flaky_reader`)."""
    return report_fixtures.make_run(tmp_path_factory.mktemp("error-run"), flaky=True)


@pytest.fixture(scope="session")
def error_report(error_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scanrag.evaluation.report import ReportOptions, build_report

    out = tmp_path_factory.mktemp("error-report")
    build_report([error_run], out, options=ReportOptions(n_resamples=200))
    return out


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    """A writable copy of the finished run."""
    target = tmp_path / finished_run.name
    shutil.copytree(finished_run, target)
    return target
