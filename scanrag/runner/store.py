"""The run directory on disk: atomic JSONL appends, torn-line repair, and a run lock.

Each row is written with a single ``os.write`` of one complete line on a file opened with
``O_APPEND``, under a lock, and flushed to disk with ``fsync`` (per row, or grouped: see
:meth:`JsonlLog.append`). A process killed mid-write can
leave at most one torn line at the end of a file; :meth:`JsonlLog.repair` cuts it off before a
resume. A write that fails (a full disk) is rolled back to the previous end of the file and
raised as :class:`DiskFullError` (or the original ``OSError``), so finished rows stay intact.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

RowKey = tuple[str, str]
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class RunDirError(RuntimeError):
    """The run directory is missing, malformed, or in use by another process."""


class DiskFullError(OSError):
    """No space left while writing a row; the run stops cleanly and can be resumed."""


def disk_full_reason(exc: OSError) -> str:
    """The stop reason recorded when a write runs out of space."""
    detail = exc.strerror or str(exc)
    return f"disk full: {detail}; finished rows are intact: free some space, then resume"


class JsonlLog:
    """An append-only JSONL file whose every line is one complete JSON object."""

    def __init__(
        self,
        path: str | Path,
        scrub: Callable[[str], str] | None = None,
        fsync_interval_s: float = 0.0,
    ) -> None:
        self.path = Path(path)
        self.fsync_interval_s = fsync_interval_s
        self._scrub = scrub
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        self._synced_at = float("-inf")
        self._dirty = False

    # -- reading ---------------------------------------------------------------------------

    def repair(self) -> int:
        """Cut a torn (newline-less) last line off the file; returns the bytes removed."""
        if not self.path.is_file():
            return 0
        size = self.path.stat().st_size
        if size == 0:
            return 0
        with open(self.path, "rb+") as fh:
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return 0
            keep = _last_newline_end(fh, size)
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
        return size - keep

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every complete row. A torn last line is skipped; a corrupt middle line is an error."""
        if not self.path.is_file():
            return
        with open(self.path, "rb") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.endswith(b"\n"):
                    return  # torn tail: repair() removes it before appending
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise RunDirError(f"{self.path}:{number}: corrupt row ({exc.msg})") from None

    def count(self) -> int:
        return sum(1 for _ in self.rows())

    # -- writing ---------------------------------------------------------------------------

    def append(self, row: BaseModel | dict[str, Any]) -> None:
        """Write one row as a single ``write`` of a whole line, or roll back and raise.

        The line reaches the kernel before ``append`` returns, so it survives a kill -9 of this
        process. It reaches the disk through ``fsync``: after every row when
        ``fsync_interval_s`` is 0, otherwise at most that many seconds later (group commit:
        one ``fsync`` covers every row written since the last), and always on ``flush`` and
        ``close``.
        """
        text = row.model_dump_json() if isinstance(row, BaseModel) else _dumps(row)
        if "\n" in text:  # model_dump_json never emits raw newlines; guard custom dicts
            text = text.replace("\n", "\\n")
        if self._scrub is not None:
            text = self._scrub(text)
        data = (text + "\n").encode("utf-8")
        with self._lock:
            fd = self._open()
            start = self._size
            try:
                _write_all(fd, data)
                self._size += len(data)
                now = time.monotonic()
                if now - self._synced_at >= self.fsync_interval_s:
                    os.fsync(fd)
                    self._synced_at = now
                    self._dirty = False
                else:
                    self._dirty = True
            except OSError as exc:
                _rollback(fd, start)
                self._size = start
                if exc.errno in _FULL:
                    raise DiskFullError(
                        errno.ENOSPC, f"no space left on device while writing {self.path}"
                    ) from exc
                raise

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        return self._fd

    def flush(self) -> None:
        """``fsync`` the rows written since the last one."""
        with self._lock:
            if self._fd is not None and self._dirty:
                os.fsync(self._fd)
                self._synced_at = time.monotonic()
                self._dirty = False

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def rewrite(self, keep: Callable[[dict[str, Any]], bool]) -> int:
        """Atomically replace the file with the rows ``keep`` accepts; returns rows removed."""
        self.close()
        rows = list(self.rows())
        kept = [r for r in rows if keep(r)]
        write_atomic(self.path, "".join(_dumps(r) + "\n" for r in kept))
        return len(rows) - len(kept)


def _dumps(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"), default=str)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _rollback(fd: int, start: int) -> None:
    with contextlib.suppress(OSError):
        os.ftruncate(fd, start)  # shrinking a file needs no free space


def _last_newline_end(fh: Any, size: int) -> int:
    """Offset just after the last newline in the file (0 if there is none)."""
    block = 1 << 16
    end = size
    while end > 0:
        start = max(0, end - block)
        fh.seek(start)
        chunk = fh.read(end - start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        end = start
    return 0


def write_atomic(path: str | Path, text: str) -> None:
    """Write a whole file via a temporary file and rename, so readers never see half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in _FULL:
            raise DiskFullError(errno.ENOSPC, f"no space left on device writing {path}") from exc
        raise


def write_json(path: str | Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def row_key(row: dict[str, Any]) -> RowKey:
    return (str(row.get("run_key") or row.get("strategy") or ""), str(row["sample_id"]))


class RunDir:
    """Paths of one run and its exclusive lock."""

    CONFIG = "config.resolved.yaml"
    MANIFEST = "manifest.json"
    SAMPLES = "samples.jsonl"
    TRAJECTORIES = "trajectories.jsonl"
    SCORES = "scores.jsonl"
    SUMMARY = "summary.json"
    LOCK = ".lock"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock_fd: int | None = None

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
    def open(cls, path: str | Path) -> RunDir:
        run = cls(path)
        if not (run.path / cls.CONFIG).is_file():
            raise RunDirError(f"{run.path} is not a run directory (no {cls.CONFIG})")
        return run

    def file(self, name: str) -> Path:
        return self.path / name

    def acquire(self) -> None:
        """Take the run's lock; a second process resuming the same run gets a clear error."""
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


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "run"
