"""The run folders under a folder, one line each: what ``scanrag runs [DIR]`` lists.

Each entry is read from the folder's ``summary.json`` and ``manifest.json`` (never its logs, so
a listing of many large runs is quick): the experiment's name and the folder, when it started,
its grid cells and items, the headline metric per cell, whether it is complete, still running
(another process holds its lock) or interrupted (and why), and its degraded items, errored
items and replayed model calls. Newest first.

The headline metric is the accuracy of the run's decider (``<scorer>.accuracy`` of the first
scorer of ``decider.order`` that has one), else the first ``*.accuracy`` of the summary's
headline metrics, else its first headline metric.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from scanrag.rundir.folder import RunDir, RunDirError

COMPLETE, RUNNING, INTERRUPTED, UNFINISHED = "complete", "running", "interrupted", "no summary"


class RunEntry(BaseModel):
    """One run folder as ``scanrag runs`` lists it."""

    name: str = Field(description="The experiment's name (several folders may share it).")
    folder: str = Field(description="The run folder's name (runs/<stamp>_<name>).")
    path: str
    created: str | None = Field(default=None, description="When the run started (ISO 8601).")
    cells: int = 0
    items: int = Field(default=0, description="Trajectories written (of planned).")
    planned: int = 0
    state: str = Field(description="complete | running | interrupted | no summary")
    stop_reason: str | None = None
    metric: str | None = Field(default=None, description="The headline metric listed.")
    values: dict[str, float | None] = Field(
        default_factory=dict, description="The headline metric per grid cell."
    )
    degraded: int = 0
    errors: int = Field(default=0, description="Items whose status is not ok.")
    replays: int = Field(default=0, description="Model calls answered from the cache.")

    @property
    def best(self) -> tuple[str, float] | None:
        """The cell with the highest headline value."""
        known = [(cell, v) for cell, v in self.values.items() if v is not None]
        return max(known, key=lambda kv: kv[1]) if known else None


def is_running(run: RunDir) -> bool:
    """Whether another process holds the run's lock (a run or score in progress)."""
    path = run.file(RunDir.LOCK)
    if not path.is_file():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def headline_metric(summary: Mapping[str, Any]) -> str | None:
    """The metric a listing shows (see the module docstring)."""
    cells = list((summary.get("headline") or {}).values())
    names = list(dict.fromkeys(m for cell in cells for m in cell))
    valued = {n for cell in cells for n, v in cell.items() if v is not None}
    order = (summary.get("decider") or {}).get("order") or []
    preferred = [f"{scorer}.accuracy" for scorer in order]
    preferred += [n for n in names if n.endswith(".accuracy")] + names
    return next((n for n in preferred if n in valued), None)


def read_entry(path: Path) -> RunEntry:
    """The listing entry of the run folder ``path`` (raises :class:`RunDirError` when it is
    not one)."""
    run = RunDir.open(path, need=())
    manifest, summary = run.manifest(), run.summary()
    cells: Mapping[str, Any] = summary.get("cells") or {}
    counts: Mapping[str, Any] = summary.get("counts") or {}
    if is_running(run):
        state = RUNNING
    elif not summary:
        state = UNFINISHED
    else:
        state = COMPLETE if summary.get("complete") else INTERRUPTED
    metric = headline_metric(summary)
    headline = summary.get("headline") or {}
    return RunEntry(
        name=str(summary.get("name") or manifest.get("name") or path.name),
        folder=path.name,
        path=str(path),
        created=manifest.get("created"),
        cells=int(counts.get("cells") or len(cells) or len(manifest.get("cells") or [])),
        items=int(counts.get("trajectories") or 0),
        planned=int(counts.get("planned") or 0),
        state=state,
        stop_reason=summary.get("stop_reason"),
        metric=metric,
        values={key: (headline.get(key) or {}).get(metric) for key in cells} if metric else {},
        degraded=sum(int(c.get("degraded") or 0) for c in cells.values()),
        errors=sum(
            int(n) for c in cells.values() for s, n in (c.get("status") or {}).items() if s != "ok"
        ),
        replays=sum(int((c.get("replays") or {}).get("calls") or 0) for c in cells.values()),
    )


def list_runs(folder: str | Path) -> tuple[list[RunEntry], list[str]]:
    """Every run folder directly under ``folder``, newest first, and a note for each
    sub-folder that looks like a run but cannot be read."""
    root = Path(folder)
    if not root.is_dir():
        raise RunDirError(f"{root} is not a directory")
    entries: list[RunEntry] = []
    problems: list[str] = []
    for path in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            entries.append(read_entry(path))
        except RunDirError as exc:
            if any(path.glob("*.json*")):  # a run folder it cannot read; other folders: skip
                problems.append(str(exc))
    entries.sort(key=lambda e: (e.created or "", e.folder), reverse=True)
    return entries, problems
