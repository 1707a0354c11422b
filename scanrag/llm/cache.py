"""The gateway's persistent response cache: one SQLite file in WAL mode.

Keys are ``ChatRequest.cache_key()`` values; values are the ``ChatResponse`` JSON of the
original (paid) call, with the run that stored it (``origin``: the run folder's name, when
the client was given one), so a replayed reply can say where it came from. SQLite's locking
makes the cache safe for several writers in different threads and processes; each operation
opens its own short-lived connection, so a cache object can be shared across threads, event
loops and forks.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing, suppress
from pathlib import Path

from scanrag.llm.types import ChatResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL,
    origin TEXT
)
"""


class ResponseCache:
    """``get``/``put`` of ``ChatResponse`` objects under string keys."""

    FILENAME = "responses.sqlite"

    def __init__(self, directory: Path, timeout_s: float = 60.0, origin: str | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / self.FILENAME
        self.timeout_s = timeout_s
        self.origin = origin
        with closing(self._connect()) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
            if "origin" not in columns:  # a cache written before origins were kept
                with suppress(sqlite3.OperationalError):  # another process added it meanwhile
                    conn.execute("ALTER TABLE responses ADD COLUMN origin TEXT")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def get(self, key: str) -> ChatResponse | None:
        """The stored response (``cached_from``: the run that stored it, if known)."""
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT response, origin FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        try:
            response = ChatResponse.model_validate_json(row[0])
        except ValueError:  # written by an incompatible version: treat as a miss
            return None
        return response.model_copy(update={"cached_from": row[1]})

    def put(self, key: str, response: ChatResponse) -> None:
        """Store ``response`` with secrets masked (:mod:`scanrag.scrub`): a reply that quotes
        a key, or a provider's echo of a header, never lands on disk in clear."""
        from scanrag.scrub import scrub_text

        data = scrub_text(response.model_dump_json())
        with closing(self._connect()) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO responses (key, model, response, created, origin) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, scrub_text(response.model), data, time.time(), self.origin),
            )

    def __contains__(self, key: str) -> bool:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with closing(self._connect()) as conn:
            (count,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def clear(self) -> None:
        with closing(self._connect()) as conn:
            conn.execute("DELETE FROM responses")
