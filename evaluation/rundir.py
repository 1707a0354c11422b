"""Moved to the kernel's :mod:`scanrag.rundir` (file names, typed readers, one ``RunDirError``).

``read_run``, ``RunInputs`` and the file-name constants stay importable from here for one
release; new code uses :class:`scanrag.rundir.RunDir`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scanrag.rundir import RunDir, RunDirError
from scanrag.schemas import Sample, Trajectory

TRAJECTORIES = RunDir.TRAJECTORIES
SAMPLES = RunDir.SAMPLES
DATASETS = RunDir.DATASETS
CONFIG = RunDir.CONFIG
SCORES = RunDir.SCORES
SUMMARY = RunDir.SUMMARY

__all__ = ["RunDirError", "RunInputs", "read_run"]


@dataclass
class RunInputs:
    trajectories: list[Trajectory]
    samples: list[Sample]
    pdf_dirs: list[Path]
    judges: dict[str, str] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)


def read_run(
    run_dir: Path, samples_path: Path | None = None, pdf_dirs: Sequence[Path] = ()
) -> RunInputs:
    """Trajectories, samples, PDF folders and judge models of ``run_dir``."""
    run = RunDir.open(run_dir, need=(RunDir.TRAJECTORIES,))
    trajectories, bad = run.trajectories()
    samples, sample_dir, dropped = run.samples(samples_path)
    folders = [*pdf_dirs, *run.pdf_dirs()]
    if sample_dir not in folders:
        folders.append(sample_dir)
    from scanrag.config.models import refs_of_raw

    judges = (run.config_data().get("models") or {}).get("judges") or {}
    return RunInputs(
        trajectories=trajectories,
        samples=samples,
        pdf_dirs=folders,
        judges=refs_of_raw(judges),
        bad_lines=[*bad, *dropped],
    )
