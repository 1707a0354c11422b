"""Reading a run directory for scoring: trajectories, samples, PDF folders and judge models.

Layout (written by ``scanrag run``): ``trajectories.jsonl``, ``samples.jsonl`` (generic
dataset format), ``datasets.json`` (each dataset's ``pdf_dir``), ``config.resolved.yaml``
(``models.judges``), and the files scoring writes: ``scores.jsonl`` and ``summary.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scanrag.schemas import Sample, Trajectory

TRAJECTORIES = "trajectories.jsonl"
SAMPLES = "samples.jsonl"
DATASETS = "datasets.json"
CONFIG = "config.resolved.yaml"
SCORES = "scores.jsonl"
SUMMARY = "summary.json"


class RunDirError(ValueError):
    """The run directory lacks what scoring needs."""


@dataclass
class RunInputs:
    trajectories: list[Trajectory]
    samples: list[Sample]
    pdf_dirs: list[Path]
    judges: dict[str, str] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)


def read_trajectories(path: Path) -> tuple[list[Trajectory], list[str]]:
    """Valid trajectories and a message per unreadable line (a torn last line is ignored)."""
    if not path.is_file():
        raise RunDirError(f"{path} not found: nothing to score")
    out: list[Trajectory] = []
    bad: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.endswith("\n"):
                break
            if not line.strip():
                continue
            try:
                out.append(Trajectory.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValidationError) as exc:
                bad.append(f"{path.name}:{number}: {str(exc).splitlines()[0]}")
    return out, bad


def _datasets_pdf_dirs(run_dir: Path) -> list[Path]:
    path = run_dir / DATASETS
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunDirError(f"{path} is not readable JSON: {exc}") from exc
    return [Path(e["pdf_dir"]) for e in entries if isinstance(e, dict) and e.get("pdf_dir")]


def _judges_from_config(run_dir: Path) -> dict[str, str]:
    path = run_dir / CONFIG
    if not path.is_file():
        return {}
    import yaml

    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    from scanrag.config.models import refs_of_raw

    return refs_of_raw(((data or {}).get("models") or {}).get("judges"))


def read_run(
    run_dir: Path, samples_path: Path | None = None, pdf_dirs: Sequence[Path] = ()
) -> RunInputs:
    """Everything scoring needs from ``run_dir`` (explicit paths take precedence)."""
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir} is not a directory")
    from scanrag.datasets import DatasetError, load_generic

    trajectories, bad = read_trajectories(run_dir / TRAJECTORIES)
    source = samples_path or run_dir / SAMPLES
    try:
        dataset = load_generic(source, validate=False)
    except DatasetError as exc:
        raise RunDirError(f"cannot read the samples: {exc}") from exc
    bad += [f"{source.name} row {d.row}: {d.reason}" for d in dataset.report.dropped]
    folders = [*pdf_dirs, *_datasets_pdf_dirs(run_dir)]
    if dataset.pdf_dir not in folders:
        folders.append(dataset.pdf_dir)
    return RunInputs(
        trajectories=trajectories,
        samples=dataset.samples,
        pdf_dirs=folders,
        judges=_judges_from_config(run_dir),
        bad_lines=bad,
    )
