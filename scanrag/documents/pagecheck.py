"""Integrity of page files: their content checksum and the temporary files of dead writers.

:class:`~scanrag.documents.pagewriter.PageWriter` keeps a running CRC-32 of the pages it writes
(:func:`row_crc`: each page's number, source, text and record, in page order) and records it
in the document row; :func:`checksum_problem` recomputes it from the file (once per process
and file identity) when the document cache opens the file. A writer's temporary file is named
after its process and host (:func:`writer_tag`), so :func:`remove_stale_tmp` can tell the
leftovers of a killed ingestion from a file another process is still writing.

Why one check of the whole file when it is opened, not a check of each page when it is read
(``benchmarks/integrity.py``): a per-page check costs less CPU (a CRC of a row already
fetched, about 2% of decoding it) until a process reads each page of a file about four times,
while the whole-file check reads the file once more (about 1-3 ms per MB, once per process
and file). But only a check at opening finds the damage where the PDF is at hand to rebuild
from, before any item reads a wrong page (a per-page check would fail items mid-run), and it
covers the text-only reads of index builders without a second checksum per page.
"""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

STALE_AFTER_S = 600.0  # a dead writer's file untouched this long is removed
ABANDONED_AFTER_S = 86400.0  # any writer's file untouched this long is removed
_TMP = re.compile(
    r"^\..+\.pages\.sqlite\.(?P<pid>\d+)(?:@(?P<host>[A-Za-z0-9-]+))?(?:\.\d+)?\.tmp$"
)
_CHUNK = 256  # pages per query while hashing


def row_crc(crc: int, number: int, source: str, text: str, record: bytes) -> int:
    """The running content checksum after one page row."""
    crc = zlib.crc32(b"%d\x00%s\x00" % (number, source.encode("utf-8")), crc)
    crc = zlib.crc32(text.encode("utf-8"), crc)
    return zlib.crc32(b"\x00" + bytes(record), crc)


def file_crc(path: str | Path) -> str:
    """The content checksum of a page file's pages, as the writer records it."""
    uri = f"file:{quote(str(path))}?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True)
    try:
        crc, first = 0, 1
        sql = (
            "SELECT number, source, text, record FROM pages WHERE number >= ? AND number < ? "
            "ORDER BY number"
        )
        while rows := conn.execute(sql, (first, first + _CHUNK)).fetchall():
            for number, source, text, record in rows:
                crc = row_crc(crc, number, source, text, record)
            first += _CHUNK
        return f"{crc:08x}"
    finally:
        conn.close()


# Files whose checksum this process verified, with the identity they had then.
_VERIFIED: dict[str, tuple[int, int, int]] = {}


def checksum_problem(path: str, recorded: Any) -> str | None:
    """Why the pages of ``path`` do not match ``recorded`` (the checksum of its document
    row), or ``None`` when they do."""
    st = os.stat(path)
    identity = (st.st_ino, st.st_size, st.st_mtime_ns)
    if _VERIFIED.get(path) == identity:
        return None
    if not isinstance(recorded, str):
        return "no content checksum (written by an older version)"
    try:
        found = file_crc(path)
    except sqlite3.Error as exc:
        return f"its pages cannot be read ({exc})"
    if found != recorded:
        return (
            f"its pages do not match the checksum recorded when it was written ({found} != "
            f"{recorded}): edited or damaged since"
        )
    _VERIFIED[path] = identity
    return None


def writer_tag() -> str:
    """``<pid>@<host>``: who writes a temporary page file (see :func:`remove_stale_tmp`)."""
    host = re.sub(r"[^A-Za-z0-9-]+", "-", socket.gethostname()) or "host"
    return f"{os.getpid()}@{host}"


def remove_stale_tmp(folder: str | Path, now: float | None = None) -> list[Path]:
    """Remove the temporary page files of writers that died (a killed ingestion): one of
    this host whose process is gone and that nobody touched for ``STALE_AFTER_S``, or any
    untouched for ``ABANDONED_AFTER_S`` (a writer on another host of a shared cache).
    Returns the files removed."""
    now = time.time() if now is None else now
    here = writer_tag().partition("@")[2]
    removed = []
    for path in Path(folder).glob(".*.pages.sqlite.*.tmp"):
        match = _TMP.match(path.name)
        try:
            idle = now - path.stat().st_mtime
        except OSError:
            continue
        if match is None or idle < STALE_AFTER_S:
            continue
        local = match.group("host") in (None, here)
        if idle >= ABANDONED_AFTER_S or (local and not _alive(int(match.group("pid")))):
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                continue
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
