"""Reading finished runs for the report: samples, trajectories, score rows and summaries.

A run directory (``runs/<timestamp>_<name>/``, written by ``scanrag run``) holds
``config.resolved.yaml``, ``manifest.json``, ``samples.jsonl``, ``datasets.json``,
``trajectories.jsonl``, ``scores.jsonl`` and ``summary.json``. Each grid cell of each run
becomes a :class:`Group`; when several runs are reported together and their cells share a
run key, the labels are prefixed with the run's name so every row of the report is distinct.

The evaluation package is imported inside the functions that need it (its schemas and
summaries), never when ``scanrag.evaluation.report`` is imported.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanrag.schemas import Sample, Trajectory

if TYPE_CHECKING:
    from scanrag.evaluation.schemas import GroupSummary, ScoreRow


class ReportError(RuntimeError):
    """A run directory cannot be reported (missing or unreadable files)."""


@dataclass
class Group:
    """One grid cell of one run: its trajectories, score rows and aggregates."""

    label: str
    key: str
    strategy: str
    run: RunData
    trajectories: dict[str, Trajectory] = field(default_factory=dict)
    rows: dict[str, dict[str, ScoreRow]] = field(default_factory=dict)
    summary: GroupSummary | None = None

    def row(self, scorer: str, sample_id: str) -> ScoreRow | None:
        return self.rows.get(scorer, {}).get(sample_id)

    def metric(self, name: str) -> Any:
        """The aggregate ``<scorer>.<metric>`` (a ``MetricSummary``) or ``None``."""
        return None if self.summary is None else self.summary.metrics.get(name)

    def table(self, name: str) -> Any:
        return None if self.summary is None else self.summary.tables.get(name)


@dataclass
class RunData:
    """Everything the report reads from one run directory."""

    path: Path
    name: str
    config: dict[str, Any]
    manifest: dict[str, Any]
    summary: dict[str, Any]
    samples: dict[str, Sample]
    pdf_dirs: list[Path]
    groups: list[Group] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def cache_dir(self) -> Path | None:
        value = (self.config.get("runner") or {}).get("cache_dir")
        return Path(value) if value else None

    @property
    def scorer_params(self) -> dict[str, dict[str, Any]]:
        params = (self.config.get("scoring") or {}).get("params") or {}
        return {k: dict(v) for k, v in params.items() if isinstance(v, dict)}


def _read(what: str, read: Any, warnings: list[str]) -> dict[str, Any]:
    """One file of the run through its typed reader; an unreadable one is a warning."""
    from scanrag.rundir import RunDirError

    try:
        data = read()
    except RunDirError as exc:
        warnings.append(f"{what} is not readable ({exc}); ignored")
        return {}
    return data if isinstance(data, dict) else {}


def _summaries(run: RunData, rows: list[ScoreRow], groups: set[str]) -> dict[str, GroupSummary]:
    """The run's stored evaluation summary when it covers every scored cell, else a fresh one."""
    from scanrag.evaluation.schemas import Summary
    from scanrag.evaluation.stage import summarize

    stored = run.summary.get("scoring")
    if isinstance(stored, dict):
        try:
            summary = Summary.model_validate(stored)
        except ValueError:
            run.warnings.append("summary.json holds an unreadable scoring summary; recomputed")
        else:
            if groups <= set(summary.groups):
                return dict(summary.groups)
    if not rows:
        return {}
    return dict(summarize(rows, run.samples, scorer_params=run.scorer_params).groups)


def load_run(path: str | Path) -> RunData:
    """Read one run directory; raises :class:`ReportError` when it has no trajectories."""
    from scanrag.evaluation.stage import latest_rows, latest_trajectories
    from scanrag.rundir import RunDir, RunDirError

    run_dir = Path(path)
    try:
        folder = RunDir.open(run_dir, need=(RunDir.TRAJECTORIES,))
        rows_read, warnings = folder.trajectories()
        samples, sample_dir, dropped = folder.samples()
        pdf_dirs = [*folder.pdf_dirs()]
    except RunDirError as exc:
        raise ReportError(f"{run_dir}: {exc}") from exc
    warnings += dropped
    if sample_dir not in pdf_dirs:
        pdf_dirs.append(sample_dir)
    config = _read(RunDir.CONFIG, folder.config_data, warnings)
    run = RunData(
        path=run_dir,
        name=str(config.get("name") or run_dir.name),
        config=config,
        manifest=_read(RunDir.MANIFEST, folder.manifest, warnings),
        summary=_read(RunDir.SUMMARY, folder.summary, warnings),
        samples={s.id: s for s in samples},
        pdf_dirs=pdf_dirs,
        warnings=warnings,
    )
    try:
        rows = list(latest_rows(folder.score_rows()).values())
    except (RunDirError, ValueError) as exc:
        raise ReportError(f"{run_dir}: {exc}") from exc
    by_group: dict[str, dict[str, dict[str, ScoreRow]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        by_group[row.group][row.scorer][row.sample_id] = row
    trajectories: dict[str, dict[str, Trajectory]] = defaultdict(dict)
    strategies: dict[str, str] = {}
    for traj in latest_trajectories(rows_read):
        key = traj.run_key or traj.strategy
        trajectories[key][traj.sample_id] = traj
        strategies.setdefault(key, traj.strategy)
    for row in rows:
        strategies.setdefault(row.group, row.strategy)
    summaries = _summaries(run, rows, set(by_group))
    for key in sorted(strategies):
        run.groups.append(
            Group(
                label=key,
                key=key,
                strategy=strategies[key],
                run=run,
                trajectories=trajectories.get(key, {}),
                rows={k: dict(v) for k, v in by_group.get(key, {}).items()},
                summary=summaries.get(key),
            )
        )
    if not run.groups:
        raise ReportError(f"{run_dir}: no trajectories or score rows to report")
    return run


def check_distinct(paths: list[Path]) -> None:
    """Refuse one run folder given twice (its rows would count twice), however spelled."""
    seen: dict[Path, Path] = {}
    for path in paths:
        key = path.resolve()
        if key in seen:
            spelled = "" if seen[key] == path else f" (as {seen[key]} and {path})"
            raise ReportError(
                f"run folder {key} is given twice{spelled}; give each run folder once"
            )
        seen[key] = path


def check_out_folder(path: Path, option: str = "--out") -> Path:
    """``path`` when it can be the output folder: missing (it is created) or a folder."""
    if path.exists() and not path.is_dir():
        raise ReportError(f"{option} {path} is a file; give a folder to write into")
    return path


def load_runs(paths: list[Path]) -> list[RunData]:
    """Read several runs (each folder once); labels get a ``<run name>/`` prefix where run
    keys collide."""
    check_distinct(paths)
    runs = [load_run(p) for p in paths]
    names = [r.name for r in runs]
    for run in runs:
        if names.count(run.name) > 1:  # same config run twice: the folder name tells them apart
            run.name = run.path.name
    counts: dict[str, int] = defaultdict(int)
    for run in runs:
        for group in run.groups:
            counts[group.key] += 1
    for run in runs:
        for group in run.groups:
            if counts[group.key] > 1:
                group.label = f"{run.name}/{group.key}"
    return runs


def all_groups(runs: list[RunData]) -> list[Group]:
    return [g for run in runs for g in run.groups]


def samples_of(runs: list[RunData]) -> dict[str, Sample]:
    """Every sample of every run (the first run wins on an id clash)."""
    out: dict[str, Sample] = {}
    for run in runs:
        for sample_id, sample in run.samples.items():
            out.setdefault(sample_id, sample)
    return out


def find_group(groups: list[Group], name: str) -> Group:
    """The group whose label, run key or strategy is ``name`` (first match, in that order)."""
    for attr in ("label", "key", "strategy"):
        for group in groups:
            if getattr(group, attr) == name:
                return group
    known = ", ".join(g.label for g in groups)
    raise ReportError(f"no grid cell named {name!r} to use as baseline; known: {known}")


def default_baseline(groups: list[Group]) -> Group:
    """The baseline when none is named: the config's first grid cell (the first run's
    manifest lists its cells in the config's order), else the first group."""
    for group in groups:
        for cell in group.run.manifest.get("cells") or []:
            if isinstance(cell, dict) and cell.get("run_key"):
                found = [g for g in groups if g.run is group.run and g.key == cell["run_key"]]
                return found[0] if found else groups[0]
        break
    return groups[0]
