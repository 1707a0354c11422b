"""Row indexes of the append-only logs: what a resume needs, without parsing the logs.

Beside ``trajectories.jsonl`` and ``scores.jsonl`` the run folder keeps ``*.index.jsonl``: one
short line per row appended (its key, status and total usage; ``end``, the byte offset in the
log where the row ends; ``sum``, a CRC-32 of the row's bytes in the log together with the
entry's own fields), after a header line naming the log file it indexes (device and inode, so
a log replaced by a rewrite is noticed). A resume reads the index, checks every entry against
the log (one pass over the indexed bytes: each row must sit at its offsets and match its
checksum, which costs a CRC over the bytes, not a JSON parse) and parses only the rows written
after its last entry (a kill can land between the row and its index line). So a log edited in
place (a row changed, removed or added), an index edited by hand (a key changed, an entry
naming an item the log does not hold) or an index of an older version (no checksums) is never
believed: any mismatch falls back to a plain scan of the log and the index is rebuilt from it,
once. The index is never needed for correctness: the log stays the record.

Appending keeps the index file open for the log's session and holds each row's entry until the
log syncs its rows to disk (``flush``, at each group commit, ``digests`` and ``close``), then
writes the held entries with one ``write``: no open, close or check per row. A kill loses at
most the entries since the last sync, which a resume parses from the log (as for a kill between
a row and its entry).
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
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
        self._fd: int | None = None  # the index file, open while rows are appended
        self._held: list[bytes] = []  # entries (and a header) not written yet
        self._off = False  # no index this session (a log without one, or a failed write)

    def _identity(self) -> list[int]:
        st = os.stat(self.log_path)
        return [st.st_dev, st.st_ino]

    def append(self, fd: int, start: int, end: int, row: Callable[[], Digest], data: bytes) -> None:
        """Record the row ``data`` written at bytes ``start..end`` of the log; ``row()``
        gives its digest. The entry is held until ``flush``. Best effort and never raises
        (the row is written already): a failure removes the index, which only costs a later
        resume a scan. ``fd`` is the open log, for its identity. A log with rows but no index
        gets none here: the next :meth:`read` falls back and the index is rebuilt then."""
        if self._off:
            return
        try:
            if self._fd is None:
                if not self.path.is_file():
                    if start != 0:
                        self._off = True
                        return
                    st = os.fstat(fd)
                    self._fd = self._open(truncate=True)
                    self._held.append(_header(st.st_dev, st.st_ino))
                else:
                    self._fd = self._open()
            self._held.append(_entry(row(), end, data))
        except Exception:  # the index is optional; the row is written already
            self._drop()

    def flush(self) -> None:
        """Write the held entries (one ``write``); never raises (a failure removes the
        index)."""
        if not self._held or self._fd is None:
            return
        try:
            write_all(self._fd, b"".join(self._held))
            self._held.clear()
        except Exception:
            self._drop()

    def close(self) -> None:
        """Write the held entries and close the index file."""
        self.flush()
        self._close()

    def _open(self, truncate: bool = False) -> int:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else os.O_APPEND)
        return os.open(self.path, flags, 0o644)

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _drop(self) -> None:
        """Give the index up for this session: a later resume rebuilds it from the log."""
        self._held.clear()
        self._close()
        self._off = True
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _write(self, lines: list[bytes], truncate: bool = False) -> None:
        """Write ``lines`` through a file opened for it (rebuilds and extensions)."""
        fd = self._open(truncate)
        try:
            write_all(fd, b"".join(lines))
        finally:
            os.close(fd)

    def read(self) -> tuple[list[tuple[int, Digest]], int, bool]:
        """``(end, digest)`` of the rows the index holds for the log as it is now, the offset
        where the unindexed rows start (0 when the index is missing or does not match), and
        whether the whole index file was usable (else it should be rewritten). Every entry
        is checked against the log's bytes (offsets and checksum)."""
        if not self.log_path.is_file() or not self.path.is_file():
            return [], 0, False
        size = self.log_path.stat().st_size
        entries: list[tuple[int, Digest, bytes, int]] = []
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
                    if not line.startswith(_SUM_OPEN) or line[16:18] != b'",':
                        return [], 0, False  # no checksum: an index of an older version
                    end = entry.pop("end")
                    del entry["sum"]
                    entries.append((end, entry, line[_SUM_LEN:], int(line[8:16], 16)))
        except (OSError, ValueError, KeyError, TypeError):
            return [], 0, False
        if not _verified(self.log_path, entries):
            return [], 0, False
        return [(end, digest) for end, digest, _, _ in entries], end, clean

    def rebuild(self, digests: list[tuple[int, Digest]]) -> None:
        """Write the index afresh for ``(end, digest)`` of every row of the log (in order,
        from its start)."""
        self._held.clear()
        self._close()
        self._off = False
        try:
            st = os.stat(self.log_path)
            self._write([_header(st.st_dev, st.st_ino), *self._entries(digests, 0)], True)
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()

    def extend(self, digests: list[tuple[int, Digest]], start: int) -> None:
        """Add ``(end, digest)`` of the rows after byte ``start`` (the index's last end)."""
        self.flush()
        if digests:
            try:
                self._write(self._entries(digests, start))
            except OSError:
                with contextlib.suppress(OSError):
                    self.path.unlink()

    def _entries(self, digests: list[tuple[int, Digest]], start: int) -> list[bytes]:
        """Index lines for rows read from the log from ``start`` (their bytes re-read for
        the checksums)."""
        out = []
        with open(self.log_path, "rb") as fh:
            fh.seek(start)
            for end, digest in digests:
                out.append(_entry(digest, end, fh.read(end - start)))
                start = end
        return out

    def remove(self) -> None:
        """Delete the index (its log was rewritten); appends after it record none."""
        self._held.clear()
        self._close()
        self._off = True
        self.path.unlink(missing_ok=True)


# An entry line is ``{"sum":"<crc32 hex>",<the digest's fields>,"end":<offset>}``: the
# checksum covers the row's bytes in the log and the rest of the entry's own line, so a
# check needs no JSON encoding, only a CRC over bytes already read.
_SUM_OPEN = b'{"sum":"'
_SUM_LEN = len(_SUM_OPEN) + 10  # 8 hex digits, then '",'


def _header(device: int, inode: int) -> bytes:
    return json.dumps({"log": [device, inode]}).encode("utf-8") + b"\n"


def _entry(digest: Digest, end: int, data: bytes) -> bytes:
    body = json.dumps({**digest, "end": end}, separators=(",", ":")).encode("utf-8")
    rest = body[1:] + b"\n"  # the fields after the opening brace, and the line's end
    return b'%s%08x",%s' % (_SUM_OPEN, zlib.crc32(rest, zlib.crc32(data)), rest)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _verified(path: Path, entries: list[tuple[int, Digest, bytes, int]]) -> bool:
    """Whether the log's bytes from 0 to the last entry's ``end`` split at the entries'
    offsets into rows that each end a line and match their entry's checksum."""
    start = 0
    try:
        with open(path, "rb") as fh:
            for end, _, rest, expected in entries:
                data = fh.read(end - start)
                if data[-1:] != b"\n" or zlib.crc32(rest, zlib.crc32(data)) != expected:
                    return False
                start = end
    except OSError:
        return False
    return True
