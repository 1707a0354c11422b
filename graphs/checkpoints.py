"""SQLite checkpointers shared by the items of one process.

Every item of a run writes its checkpoints to the same file. Opening one connection per item
lets two items set the database up at the same moment, and SQLite answers one of them
"database is locked" at once (a schema change does not wait on the busy timeout). So the
items of one event loop share one connection and one saver (the saver serializes its own
statements), opened by the first item that needs it and closed when the last one leaves.
Processes that share the file (Ray workers) each hold their own connection; the setup is
retried with a short back-off when another process holds the lock.

A damaged file (``database disk image is malformed``, ``file is not a database``: a disk
fault, a copy cut short, an edit) is never left in the way. Found when the file is opened, it
is moved aside (``<name>.damaged-<time>``, kept for inspection) with a warning and a fresh
file is started: its items run from the beginning. Found while items use it, it is moved
aside and each of those items fails with :class:`CheckpointDamagedError`, which names the
file; ``scanrag run --resume RUN --retry-errors`` runs them again on the fresh file.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SETUP_ATTEMPTS = 8
SETUP_BACKOFF_S = 0.05
BUSY_TIMEOUT_S = 60.0


class CheckpointDamagedError(RuntimeError):
    """The checkpoint file of an item is damaged; the message names it and the way out."""


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` says a SQLite file is damaged (not locked, not a full disk)."""
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


class _Shared:
    """One connection and saver for one (event loop, file), counted by its users."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.users = 0
        self.lock = asyncio.Lock()
        self.conn: Any = None
        self.saver: Any = None
        self.retired: list[Any] = []  # connections to a file moved aside, closed at the end
        self.aside: Path | None = None  # where the damaged file went

    async def open(self) -> Any:
        async with self.lock:
            if self.saver is None:
                self.saver = await _connect(self)
            return self.saver

    def damaged(self, exc: BaseException, saver: Any) -> CheckpointDamagedError:
        """Move the damaged file ``saver`` works on aside (unless an item already did:
        then ``saver`` is retired); items that start later open a fresh one."""
        if saver is not None and saver is self.saver:
            self.aside = _move_aside(self.path)
            self.retired.append(self.conn)
            self.conn = self.saver = None
        aside = self.aside.name if self.aside is not None else "a file beside it"
        return CheckpointDamagedError(
            f"checkpoint database {self.path} is damaged ({exc}); it was moved to {aside}: "
            "run again with --resume RUN_DIR --retry-errors to redo its items from the start"
        )

    async def close(self) -> None:
        async with self.lock:
            for conn in [*self.retired, self.conn]:
                if conn is not None:
                    await conn.close()
            self.conn = self.saver = None
            self.retired.clear()


_OPEN: dict[tuple[int, Path], _Shared] = {}


async def _connect(shared: _Shared) -> Any:
    """Open and set up the file; a damaged one is moved aside (with a warning) and a fresh
    one started in its place."""
    try:
        return await _connect_once(shared)
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        aside = _move_aside(shared.path)
        log.warning(
            "checkpoint database %s is damaged (%s): moved to %s; its items start again",
            shared.path,
            exc,
            aside.name,
        )
        return await _connect_once(shared)


async def _connect_once(shared: _Shared) -> Any:
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    shared.path.parent.mkdir(parents=True, exist_ok=True)
    shared.conn = await aiosqlite.connect(str(shared.path), timeout=BUSY_TIMEOUT_S)
    saver = AsyncSqliteSaver(shared.conn)
    try:
        await _setup(saver, aiosqlite.OperationalError)
    except BaseException:
        await shared.conn.close()
        shared.conn = None
        raise
    return saver


def _move_aside(path: Path) -> Path:
    """Rename a damaged file (and its journal files) to ``<name>.damaged-<time>``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    for suffix in ("", "-wal", "-shm", "-journal"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.replace(aside.with_name(aside.name + suffix))
    return aside


async def _setup(saver: Any, locked_error: type[Exception]) -> None:
    """Create the tables, waiting out another process's lock for a few attempts."""
    for attempt in range(SETUP_ATTEMPTS):
        try:
            await saver.setup()
            return
        except locked_error as exc:
            if "locked" not in str(exc) or attempt == SETUP_ATTEMPTS - 1:
                raise
            await asyncio.sleep(SETUP_BACKOFF_S * 2**attempt)


@asynccontextmanager
async def shared_checkpointer(path: Path | None) -> AsyncIterator[Any]:
    """The saver for ``path`` shared by every item of this event loop (``None`` without a
    path: the graph then runs without checkpoints). A damaged-file error raised inside the
    block is turned into :class:`CheckpointDamagedError` naming the file, which is moved
    aside."""
    if path is None:
        yield None
        return
    key = (id(asyncio.get_running_loop()), path.resolve())
    shared = _OPEN.get(key)
    if shared is None:
        shared = _OPEN[key] = _Shared(key[1])
    shared.users += 1
    saver = None
    try:
        try:
            saver = await shared.open()
            yield saver
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            raise shared.damaged(exc, saver) from exc
    finally:
        shared.users -= 1
        if shared.users == 0:
            if _OPEN.get(key) is shared:
                del _OPEN[key]
            await shared.close()
