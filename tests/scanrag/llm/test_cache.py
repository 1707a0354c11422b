"""ResponseCache: round trip, persistence, concurrent writers in several processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scanrag.llm.cache import ResponseCache
from scanrag.llm.types import ChatResponse
from scanrag.schemas import Usage


def _resp(text: str) -> ChatResponse:
    return ChatResponse(text=text, model="m/x", usage=Usage(calls=1, prompt_tokens=3, cost_usd=0.5))


def test_round_trip_and_persistence(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    assert cache.get("k") is None and "k" not in cache
    cache.put("k", _resp("hello"))
    again = ResponseCache(tmp_path)
    hit = again.get("k")
    assert hit is not None and hit.text == "hello" and hit.usage.cost_usd == 0.5
    again.put("k", _resp("replaced"))
    assert cache.get("k").text == "replaced"  # type: ignore[union-attr]
    assert len(cache) == 1
    cache.clear()
    assert len(again) == 0


def test_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    import sqlite3

    cache = ResponseCache(tmp_path)
    with sqlite3.connect(cache.path) as conn:
        conn.execute(
            "INSERT INTO responses (key, model, response, created) VALUES ('bad', 'm', '{x', 0)"
        )
    assert cache.get("bad") is None


def test_replies_remember_the_run_that_stored_them(tmp_path: Path) -> None:
    import sqlite3

    from scanrag.llm.types import ChatResponse

    with sqlite3.connect(tmp_path / ResponseCache.FILENAME) as conn:  # a cache from before
        conn.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "response TEXT NOT NULL, created REAL NOT NULL)"
        )
        old = ChatResponse(text="old", model="m").model_dump_json()
        conn.execute("INSERT INTO responses VALUES ('old', 'm', ?, 0)", (old,))
    cache = ResponseCache(tmp_path, origin="20260101-000000_first")
    cache.put("new", ChatResponse(text="new", model="m"))
    assert cache.get("new").cached_from == "20260101-000000_first"  # type: ignore[union-attr]
    assert cache.get("old").cached_from is None  # type: ignore[union-attr]


def test_wal_mode(tmp_path: Path) -> None:
    import sqlite3

    cache = ResponseCache(tmp_path)
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


_WRITER = """
import sys
from pathlib import Path
from scanrag.llm.cache import ResponseCache
from scanrag.llm.types import ChatResponse
cache = ResponseCache(Path(sys.argv[1]))
worker = sys.argv[2]
for i in range(40):
    cache.put(f"{worker}-{i}", ChatResponse(text=f"w{worker} item {i}", model="m/x"))
    cache.put("shared", ChatResponse(text=f"w{worker}", model="m/x"))
"""


def test_concurrent_writers_across_processes(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(w)]) for w in range(4)
    ]
    assert [p.wait(120) for p in procs] == [0, 0, 0, 0]
    cache = ResponseCache(tmp_path)
    assert len(cache) == 4 * 40 + 1
    assert cache.get("3-39").text == "w3 item 39"  # type: ignore[union-attr]
    assert cache.get("shared").text in {"w0", "w1", "w2", "w3"}  # type: ignore[union-attr]


def test_stored_replies_are_scrubbed(tmp_path) -> None:
    from scanrag.llm.cache import ResponseCache
    from scanrag.llm.types import ChatResponse

    cache = ResponseCache(tmp_path)
    reply = "the key is sk-abcdefghijklmnopqrstuvwx and password: hunter22x"
    cache.put("k", ChatResponse(model="m", text=reply))
    stored = cache.get("k")
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())  # database and WAL
    assert b"the key is" in raw  # the reply is on disk ...
    assert b"sk-abcdefghijklmnopqrstuvwx" not in raw and b"hunter22x" not in raw  # ... masked
    assert stored is not None and "***" in stored.text
