"""Row indexes of the append-only logs: what a resume needs, without reading the logs.

Beside ``trajectories.jsonl`` and ``scores.jsonl`` the run folder keeps ``*.index.jsonl``: one
short line per row appended (its key, status and total usage, and ``end``, the byte offset in
the log where the row ends), after a header line naming the log file it indexes (device and
inode, so a log replaced by a rewrite is noticed). A resume reads the index and parses only
the rows written after its last entry (a kill can land between the row and its index line).
The last indexed row is read back from the log and must match its entry, so an index that
does not describe this log is noticed too. An index that is missing, torn, damaged or does
not match its log is rebuilt from the log, once. The index is never needed for correctness:
the log stays the record, and every fallback is a plain scan of it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from scanrag.schemas import Usage

Digest = dict[str, Any]


def row_digest(row: BaseModel | Mapping[str, Any]) -> Digest:
    """``key`` (run key, sample id), ``status`` and the row's total ``usage`` (summed over
    stages for a trajectory; a score row's own usage)."""
    if isinstance(row, BaseModel):
        data = row.model_dump(
            mode="json", include={"run_key", "strategy", "sample_id", "status", "usage"}
        )
    else:
        data = dict(row)
    digest: Digest = {"status": data.get("status")}
    if "sample_id" in data:
        key = [str(data.get("run_key") or data.get("strategy") or ""), str(data["sample_id"])]
        digest["key"] = key
    usage = _total_usage(data.get("usage"))
    if usage is not None:
        digest["usage"] = usage.model_dump(exclude_defaults=True)
    return digest


def _total_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, Mapping) or not usage:
        return None
    if "calls" in usage and not isinstance(usage.get("calls"), Mapping):
        return Usage.model_validate(usage)
    return _sum([Usage.model_validate(u) for u in usage.values() if isinstance(u, Mapping)])


def _sum(stages: list[Usage]) -> Usage:
    total = Usage()
    for stage in stages:
        total = total.add(stage)
    return total


def digest_usage(digests: list[Digest]) -> Usage:
    """The total usage of the digested rows."""
    return _sum([Usage.model_validate(d["usage"]) for d in digests if d.get("usage")])


class RowIndex:
    """The index file of one log (see the module docstring)."""

    def __init__(self, path: str | Path, log_path: str | Path) -> None:
        self.path = Path(path)
        self.log_path = Path(log_path)

    def _identity(self) -> list[int]:
        st = os.stat(self.log_path)
        return [st.st_dev, st.st_ino]

    def append(self, fd: int, start: int, end: int, row: Callable[[], Digest]) -> None:
        """Record the row at bytes ``start..end`` of the log; ``row()`` gives its digest.
        Best effort and never raises (the row is written already): a failure removes the
        index, which only costs a later resume a scan. ``fd`` is the open log, for its
        identity. A log with rows but no index gets none here: the next :meth:`read` falls
        back and the index is rebuilt then."""
        try:
            if not self.path.is_file():
                if start != 0:
                    return
                st = os.fstat(fd)
                self._write([{"log": [st.st_dev, st.st_ino]}], truncate=True)
            self._write([{**row(), "end": end}])
        except Exception:  # the index is optional; the row is written already
            with contextlib.suppress(OSError):
                self.path.unlink()

    def _write(self, entries: list[dict[str, Any]], truncate: bool = False) -> None:
        data = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries)
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else os.O_APPEND)
        fd = os.open(self.path, flags, 0o644)
        try:
            os.write(fd, data.encode("utf-8"))
        finally:
            os.close(fd)

    def read(self) -> tuple[list[tuple[int, Digest]], int, bool]:
        """``(end, digest)`` of the rows the index holds for the log as it is now, the offset
        where the unindexed rows start (0 when the index is missing or does not match), and
        whether the whole index file was usable (else it should be rewritten)."""
        if not self.log_path.is_file() or not self.path.is_file():
            return [], 0, False
        size = self.log_path.stat().st_size
        digests: list[tuple[int, Digest]] = []
        end, clean = 0, True
        try:
            with open(self.path, "rb") as fh:
                header = json.loads(fh.readline() or b"{}")
                if header.get("log") != self._identity():
                    return [], 0, False
                for line in fh:
                    entry = json.loads(line) if line.endswith(b"\n") else None
                    if not isinstance(entry, dict) or not end < entry["end"] <= size:
                        clean = False  # torn, or past the log's end (cut by a repair)
                        break
                    end = entry.pop("end")
                    digests.append((end, entry))
        except (OSError, ValueError, KeyError, TypeError):
            return [], 0, False
        if digests and not _matches(self.log_path, digests):
            return [], 0, False
        return digests, end, clean

    def rebuild(self, digests: list[tuple[int, Digest]]) -> None:
        """Write the index afresh for ``(end, digest)`` of every row."""
        try:
            header = {"log": self._identity()}
            self._write([header, *({**d, "end": end} for end, d in digests)], truncate=True)
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()

    def extend(self, digests: list[tuple[int, Digest]]) -> None:
        if digests:
            try:
                self._write([{**d, "end": end} for end, d in digests])
            except OSError:
                with contextlib.suppress(OSError):
                    self.path.unlink()

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _matches(path: Path, digests: list[tuple[int, Digest]]) -> bool:
    """Whether the log's bytes up to the last indexed ``end`` end with a complete row whose
    digest is the last entry's (the previous entry's ``end`` is where that row starts)."""
    start = digests[-2][0] if len(digests) > 1 else 0
    end, digest = digests[-1]
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            line = fh.read(end - start)
        if not line.endswith(b"\n") or (start and not _ends_a_line(path, start)):
            return False
        rows = [json.loads(part) for part in line.splitlines() if part.strip()]
    except (OSError, ValueError):
        return False
    return len(rows) == 1 and isinstance(rows[0], dict) and row_digest(rows[0]) == digest


def _ends_a_line(path: Path, offset: int) -> bool:
    with open(path, "rb") as fh:
        fh.seek(offset - 1)
        return fh.read(1) == b"\n"
