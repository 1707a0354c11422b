"""A run folder: the names of its files, its lock, scrubbed writes and typed readers.

``runs/<YYYYmmdd-HHMMSS>_<name>/`` holds

=====================  ==================================================================
``config.resolved.yaml``  the validated experiment config (secrets masked)
``manifest.json``         what produced the run: code, libraries, models, prompts, sessions
``samples.jsonl``         every sample of every dataset, in the generic dataset format
``datasets.json``         per dataset: loader, source, PDF folder, sample ids, load report
``trajectories.jsonl``    one row per (grid cell, sample), appended as items finish
``scores.jsonl``          one row per (grid cell, sample, scorer), appended as scored
``*.index.jsonl``         row indexes of those two logs (key, status, usage, end offset,
                          checksum): a resume checks them against the logs' bytes and
                          reads them instead of parsing the logs (``rundir.index``)
``summary.json``          counts, status, usage and metrics, rebuilt from the rows on disk
``retrieval.json``        optional ``scanrag retrieve eval --json`` output for the report
``indexes/<alias>/``      saved retriever indexes, reused on resume
``checkpoints/``          LangGraph checkpoints of strategies that keep them
``report/``               the HTML report
``exports/``              ``scanrag export``: ``items_long`` and ``comparison`` (.csv, .parquet)
=====================  ==================================================================

Every writer and reader of a run folder goes through this class, so the file names live
here only. Everything written is scrubbed of secrets (:mod:`scanrag.scrub`).
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from scanrag.rundir import trust
from scanrag.rundir.files import JsonlLog, RunDirError, iter_jsonl, read_json, write_atomic
from scanrag.rundir.files import write_json as _write_json
from scanrag.rundir.index import RowIndex
from scanrag.schemas import Sample, Trajectory
from scanrag.scrub import scrubber

if TYPE_CHECKING:
    from scanrag.config import ExperimentConfig


class RunDir:
    """Paths of one run, its exclusive lock, and typed access to its files."""

    CONFIG = "config.resolved.yaml"
    MANIFEST = "manifest.json"
    SAMPLES = "samples.jsonl"
    DATASETS = "datasets.json"
    TRAJECTORIES = "trajectories.jsonl"
    SCORES = "scores.jsonl"
    SUMMARY = "summary.json"
    RETRIEVAL = "retrieval.json"
    TRAJECTORY_INDEX = "trajectories.index.jsonl"
    SCORE_INDEX = "scores.index.jsonl"
    INDEXES_OF: ClassVar[dict[str, str]] = {TRAJECTORIES: TRAJECTORY_INDEX, SCORES: SCORE_INDEX}
    INDEXES = "indexes"
    CHECKPOINTS = "checkpoints"
    REPORT = "report"
    EXPORTS = "exports"
    EXPORT_LONG = "items_long"  # file stems in EXPORTS; the suffix is the format
    EXPORT_WIDE = "comparison"
    LOCK = ".lock"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock_fd: int | None = None

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    # ------------------------------------------------------------------ creating, opening

    @classmethod
    def create(cls, runs_dir: str | Path, name: str, now: datetime | None = None) -> RunDir:
        """A new folder ``<runs_dir>/<YYYYmmdd-HHMMSS>_<name>`` (suffixed if it exists)."""
        stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
        base = Path(runs_dir) / f"{stamp}_{_safe(name)}"
        path, n = base, 1
        while True:
            try:
                path.mkdir(parents=True, exist_ok=False)
                return cls(path)
            except FileExistsError:
                n += 1
                path = base.with_name(f"{base.name}-{n}")

    @classmethod
    def open(
        cls, path: str | Path, *, need: tuple[str, ...] = (CONFIG,), verify: bool = True
    ) -> RunDir:
        """An existing run folder holding the files in ``need`` (a run started by ``scanrag
        run`` has its config; scoring needs only trajectories). With ``verify`` (every
        command) the files the manifest records are checked first (:meth:`verify`)."""
        run = cls(path)
        if not run.path.is_dir():
            raise RunDirError(f"{run.path} is not a directory")
        marks = (cls.CONFIG, cls.MANIFEST, cls.TRAJECTORIES, cls.SCORES, cls.SUMMARY)
        if not any(run.file(name).is_file() for name in marks):
            raise RunDirError(
                f"{run.path} is not a run folder (none of {', '.join(marks)}); give a folder "
                "that scanrag run wrote, such as runs/<stamp>_<name>"
            )
        for name in need:
            if name == cls.CONFIG and not run.file(name).is_file():
                raise RunDirError(f"{run.path} is not a run directory (no {name})")
            if not run.file(name).is_file():
                raise RunDirError(f"{run.file(name)} not found in {run.path}")
        if verify:
            run.verify()
        return run

    def verify(self) -> None:
        """Check the config, ``samples.jsonl`` and ``datasets.json`` against what the manifest
        recorded when they were written (:mod:`scanrag.rundir.trust`); raises
        :class:`~scanrag.rundir.trust.RunFileError` naming the file and how to recover."""
        trust.verify(self.path, self.manifest(), self.CONFIG)

    def recorded_config_hash(self) -> str | None:
        """The ``config_hash`` of the config file as it stands (``None`` without one)."""
        path = self.file(self.CONFIG)
        if not path.is_file():
            return None
        return trust.config_digest(trust.parse_config(path.read_text(encoding="utf-8"), path))

    def file_digests(self) -> dict[str, str]:
        """SHA-256 of the run's sample files, for the manifest's ``files``."""
        return trust.file_digests(self.path, (self.SAMPLES, self.DATASETS))

    def file(self, name: str) -> Path:
        return self.path / name

    def index_dir(self, alias: str) -> Path:
        return self.path / self.INDEXES / alias

    # ------------------------------------------------------------------ the lock

    def acquire(self) -> None:
        """Take the run's lock; a second process working on the same run gets a clear error."""
        fd = os.open(self.path / self.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunDirError(f"{self.path} is in use by another scanrag process") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> RunDir:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # ------------------------------------------------------------------ writing (scrubbed)

    def log(self, name: str, fsync_interval_s: float = 0.0) -> JsonlLog:
        """The append-only log ``name`` (trajectories, scores); every row is scrubbed. The
        two logs of a run keep a row index (``INDEXES_OF``) that resumes read."""
        index_name = self.INDEXES_OF.get(name)
        index = RowIndex(self.file(index_name), self.file(name)) if index_name else None
        return JsonlLog(
            self.file(name), scrubber().text, fsync_interval_s=fsync_interval_s, index=index
        )

    def write_json(self, name: str, data: Any) -> None:
        _write_json(self.file(name), scrubber().data(data))

    def write_text(self, name: str, text: str) -> None:
        write_atomic(self.file(name), scrubber().text(text))

    def write_samples(self, samples: Iterable[Sample]) -> None:
        """``samples.jsonl``: every sample in the generic dataset format."""
        from scanrag.datasets import write_generic

        write_generic(samples, self.file(self.SAMPLES))

    def write_rows(self, name: str, rows: Iterable[BaseModel]) -> None:
        """Replace the log ``name`` with ``rows`` at once (an imported run; a running one
        appends through :meth:`log`). The row index is rebuilt when the log is next read."""
        text = "".join(row.model_dump_json() + "\n" for row in rows)
        self.write_text(name, text)
        if name in self.INDEXES_OF:
            self.file(self.INDEXES_OF[name]).unlink(missing_ok=True)

    def write_config(self, config: ExperimentConfig) -> None:
        """The resolved config as YAML; values under secret-named keys are masked. A run
        whose manifest records the config's hash gets the new one with it: announced as
        ``config_hash_next`` before the file is replaced, made ``config_hash`` after, so a
        process killed in between leaves a folder that still verifies."""
        import yaml

        data = scrubber().data(config.model_dump(mode="json"))
        text = scrubber().text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        path = self.file(self.CONFIG)
        digest = trust.config_digest(trust.parse_config(text, path))
        manifest = read_json(self.file(self.MANIFEST), {})
        recorded = manifest.get(trust.CONFIG_HASH) if isinstance(manifest, dict) else None
        if recorded is None or recorded == digest:
            write_atomic(path, text)
            return
        self.write_json(self.MANIFEST, {**manifest, trust.CONFIG_HASH_NEXT: digest})
        write_atomic(path, text)
        manifest[trust.CONFIG_HASH] = digest
        manifest.pop(trust.CONFIG_HASH_NEXT, None)
        self.write_json(self.MANIFEST, manifest)

    # ------------------------------------------------------------------ reading

    def config_data(self) -> dict[str, Any]:
        """The recorded config as plain data (``{}`` for a folder without one)."""
        path = self.file(self.CONFIG)
        if not path.is_file():
            return {}
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RunDirError(f"{path} is not readable: {exc}") from exc
        return trust.parse_config(text, path)

    def experiment(self, overrides: list[str] | tuple[str, ...] = ()) -> ExperimentConfig | None:
        """The recorded config, validated (``None`` for a folder without one)."""
        if not self.file(self.CONFIG).is_file():
            return None
        from scanrag.config import load_config

        return load_config(self.file(self.CONFIG), overrides)

    def manifest(self) -> dict[str, Any]:
        return _mapping(read_json(self.file(self.MANIFEST), {}), self.MANIFEST)

    def summary(self) -> dict[str, Any]:
        return _mapping(read_json(self.file(self.SUMMARY), {}), self.SUMMARY)

    def datasets(self) -> list[dict[str, Any]]:
        """Each dataset's entry of ``datasets.json`` (``[]`` when absent)."""
        data = read_json(self.file(self.DATASETS), [])
        if not isinstance(data, list):
            raise RunDirError(f"{self.file(self.DATASETS)} does not hold a list")
        return [entry for entry in data if isinstance(entry, dict)]

    def pdf_dirs(self) -> list[Path]:
        return [Path(e["pdf_dir"]) for e in self.datasets() if e.get("pdf_dir")]

    def samples(self, path: Path | None = None) -> tuple[list[Sample], Path, list[str]]:
        """The run's samples (or those of ``path``), their PDF folder and unreadable rows."""
        from scanrag.datasets import DatasetError, load_generic

        source = path or self.file(self.SAMPLES)
        try:
            dataset = load_generic(source, validate=False)
        except DatasetError as exc:
            raise RunDirError(f"cannot read the samples: {exc}") from exc
        bad = [f"{source.name} row {d.row}: {d.reason}" for d in dataset.report.dropped]
        return dataset.samples, Path(dataset.pdf_dir), bad

    def trajectories(self) -> tuple[list[Trajectory], list[str]]:
        """Valid trajectories and one message per unreadable line."""
        path = self.file(self.TRAJECTORIES)
        bad: list[str] = []
        out: list[Trajectory] = []

        def note(number: int, message: str) -> None:
            bad.append(f"{path.name}:{number}: {message}")

        for number, row in iter_jsonl(path, note):
            try:
                out.append(Trajectory.model_validate(row))
            except ValueError as exc:
                note(number, str(exc).splitlines()[0])
        return out, bad

    def trajectory_rows(self) -> list[dict[str, Any]]:
        return [row for _, row in iter_jsonl(self.file(self.TRAJECTORIES))]

    def score_rows(self) -> list[dict[str, Any]]:
        """Score rows as written (a later row for a key supersedes an earlier one)."""
        return [row for _, row in iter_jsonl(self.file(self.SCORES))]


def _mapping(data: Any, name: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise RunDirError(f"{name} does not hold a JSON object")
    return data


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "run"
