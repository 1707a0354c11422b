"""Nothing raises out of a run once its folder exists without saying what became of it.

:func:`guarded` wraps a session of :class:`~scanrag.runner.engine.Runner` (per-item failures
are rows with a status already; this is for what escapes the stages: a bug, a refusal found
late). A fresh run that stops before any item is recorded leaves no half-made folder: it is
removed and the error says so. Otherwise the folder stays, holding every finished row, and
the error says how to resume it. Errors that are refusals keep their type (the CLI exits 2 on
them); anything else becomes :class:`RunAbortedError` (exit 1), its traceback logged at
debug level (``--verbose``).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from typing import TypeVar

from scanrag.config import ConfigError
from scanrag.rundir import RunDir, RunDirError
from scanrag.runner.components import SetupError

log = logging.getLogger(__name__)
T = TypeVar("T")


class RunAbortedError(RuntimeError):
    """A run stopped on an unexpected error after its folder existed; the message says
    whether the folder was removed or how to resume it."""


def _has_rows(run_dir: RunDir) -> bool:
    path = run_dir.file(RunDir.TRAJECTORIES)
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def guarded(run_dir: RunDir, work: Callable[[], T], *, fresh: bool) -> T:
    """``work()``; an exception that escapes it is told about the run folder (see the
    module docstring). ``fresh``: the folder was created by this session."""
    try:
        return work()
    except (ConfigError, SetupError, RunDirError) as exc:
        if fresh:  # a resume's refusal leaves its folder as it was, nothing to say
            exc.args = (f"{exc}\n{_settle(run_dir, fresh)}",)
        raise
    except Exception as exc:
        log.debug("the run stopped", exc_info=True)
        note = _settle(run_dir, fresh)
        raise RunAbortedError(f"the run stopped: {type(exc).__name__}: {exc}\n{note}") from exc


def _settle(run_dir: RunDir, fresh: bool) -> str:
    """Remove a fresh folder that holds no row; say what became of the folder."""
    if fresh and not _has_rows(run_dir):
        try:
            shutil.rmtree(run_dir.path)
        except OSError as exc:
            return (
                f"no item had run; its folder {run_dir.path} could not be removed "
                f"({exc.strerror or exc}): delete it, or resume it with scanrag run --resume "
                f"{run_dir.path}"
            )
        return f"no item had run; its folder {run_dir.path} was removed"
    return f"the rows written are kept: resume with scanrag run --resume {run_dir.path}"
