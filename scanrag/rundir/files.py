"""Files of a run folder: atomic JSONL appends, torn-line repair, atomic whole-file writes.

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
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from scanrag.rundir.index import Digest, RowIndex, row_digest, write_all

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
        index: RowIndex | None = None,
    ) -> None:
        self.path = Path(path)
        self.fsync_interval_s = fsync_interval_s
        self.index = index
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
        # The row index stays: its entries end at complete rows, before the cut (a torn
        # row never got one), and ``RowIndex.read`` checks them against the log anyway.
        return size - keep

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every complete row. A torn last line is skipped; a corrupt middle line is an error."""
        for _, row in iter_jsonl(self.path):
            yield row

    def count(self) -> int:
        return sum(1 for _ in self.rows())

    def digests(self) -> list[Digest]:
        """A digest of every complete row (key, status, total usage: ``index.row_digest``),
        read from the row index where it covers the log, so a resume does not parse a large
        log again; only rows past the index are read (and indexed). Without an index, every
        row is read."""
        if self.index is None:
            return [row_digest(row) for row in self.rows()]
        with self._lock:
            self.index.flush()
        known, start, clean = self.index.read()
        fresh = [(end, row_digest(row)) for end, row in iter_jsonl_from(self.path, start)]
        if start == 0 or not clean:
            self.index.rebuild(known + fresh)
        else:
            self.index.extend(fresh, start)
        return [digest for _, digest in known + fresh]

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
        plain = text
        if self._scrub is not None:
            text = self._scrub(text)
        data = (text + "\n").encode("utf-8")
        with self._lock:
            fd = self._open()
            start = self._size
            try:
                write_all(fd, data)
                self._size += len(data)
                if self.index is not None:  # the digest of what a scan would read back
                    self.index.append(
                        fd,
                        start,
                        self._size,
                        lambda: row_digest(row if text == plain else json.loads(text)),
                        data,
                    )
                now = time.monotonic()
                if now - self._synced_at >= self.fsync_interval_s:
                    os.fsync(fd)
                    self._synced_at = now
                    self._dirty = False
                    if self.index is not None:  # the entries of the rows now on disk
                        self.index.flush()
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
        """``fsync`` the rows written since the last one (and write their index entries)."""
        with self._lock:
            if self._fd is not None and self._dirty:
                os.fsync(self._fd)
                self._synced_at = time.monotonic()
                self._dirty = False
            if self.index is not None:
                self.index.flush()

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self.index is not None:
                self.index.close()

    def rewrite(self, keep: Callable[[dict[str, Any]], bool]) -> int:
        """Atomically replace the file with the rows ``keep`` accepts; returns rows removed."""
        self.close()
        rows = list(self.rows())
        kept = [r for r in rows if keep(r)]
        write_atomic(self.path, "".join(_dumps(r) + "\n" for r in kept))
        if self.index is not None:
            self.index.remove()  # the rows moved: rebuilt by the next digests()
        return len(rows) - len(kept)


def iter_jsonl(
    path: str | Path, on_bad: Callable[[int, str], None] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, row)`` for every complete JSON-object line of ``path``.

    The one reader of append-only logs: a missing file has no rows, blank lines are skipped
    and a torn (newline-less) last line, which a kill -9 mid-write can leave and
    :meth:`JsonlLog.repair` cuts off, is ignored. A line in the middle that is not a JSON
    object is reported to ``on_bad(line number, message)``, or raised as
    :class:`RunDirError` when no callback is given.
    """
    path = Path(path)
    if not path.is_file():
        return
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.endswith(b"\n"):
                return
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError(f"a JSON {type(row).__name__}, not an object")
            except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError included
                message = getattr(exc, "msg", None) or str(exc)
                if on_bad is None:
                    raise RunDirError(f"{path}:{number}: corrupt row ({message})") from None
                on_bad(number, message)
                continue
            yield number, row


def iter_jsonl_from(path: str | Path, offset: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(end offset, row)`` for every complete row from byte ``offset`` (a row boundary) on;
    a corrupt line raises :class:`RunDirError`, a torn last line is ignored."""
    path = Path(path)
    if not path.is_file():
        return
    with open(path, "rb") as fh:
        fh.seek(offset)
        end = offset
        for line in fh:
            if not line.endswith(b"\n"):
                return
            end += len(line)
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise RunDirError(f"{path}: corrupt row ending at byte {end} ({exc})") from None
            if not isinstance(row, dict):
                raise RunDirError(f"{path}: a row ending at byte {end} is not a JSON object")
            yield end, row


def _dumps(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"), default=str)


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


def read_json(path: str | Path, default: Any = None) -> Any:
    """A whole JSON file; ``default`` when it is missing, :class:`RunDirError` when unreadable."""
    path = Path(path)
    if not path.is_file():
        return default
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path} is not readable JSON: {exc}") from exc


def row_key(row: Mapping[str, Any]) -> RowKey:
    return (str(row.get("run_key") or row.get("strategy") or ""), str(row["sample_id"]))
