"""SQLite checkpointers shared by the items of one process.

Every item of a run writes its checkpoints to the same file. Opening one connection per item
lets two items set the database up at the same moment, and SQLite answers one of them
"database is locked" at once (a schema change does not wait on the busy timeout). So the
items of one event loop share one connection and one saver (the saver serialises its own
statements), opened by the first item that needs it and closed when the last one leaves.
Processes that share the file (Ray workers) each hold their own connection; the setup is
retried with a short back-off when another process holds the lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

SETUP_ATTEMPTS = 8
SETUP_BACKOFF_S = 0.05
BUSY_TIMEOUT_S = 60.0


class _Shared:
    """One connection and saver for one (event loop, file), counted by its users."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.users = 0
        self.lock = asyncio.Lock()
        self.conn: Any = None
        self.saver: Any = None

    async def open(self) -> Any:
        async with self.lock:
            if self.saver is None:
                self.saver = await _connect(self)
            return self.saver

    async def close(self) -> None:
        async with self.lock:
            if self.conn is not None:
                await self.conn.close()
            self.conn = self.saver = None


_OPEN: dict[tuple[int, Path], _Shared] = {}


async def _connect(shared: _Shared) -> Any:
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
    path: the graph then runs without checkpoints)."""
    if path is None:
        yield None
        return
    key = (id(asyncio.get_running_loop()), path.resolve())
    shared = _OPEN.get(key)
    if shared is None:
        shared = _OPEN[key] = _Shared(key[1])
    shared.users += 1
    try:
        yield await shared.open()
    finally:
        shared.users -= 1
        if shared.users == 0:
            if _OPEN.get(key) is shared:
                del _OPEN[key]
            await shared.close()
