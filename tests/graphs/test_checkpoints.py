"""Checkpointers shared by the items of one event loop: one connection per file, set up
once, closed by the last item, and a setup that waits out another process's lock."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import aiosqlite
import pytest

from graphs import checkpoints
from graphs.checkpoints import shared_checkpointer
from scanrag.registry import STRATEGIES
from scanrag.schemas import Status


async def test_items_of_one_loop_share_one_saver(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    seen: list[object] = []

    async def item() -> None:
        async with shared_checkpointer(path) as saver:
            seen.append(saver)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(item() for _ in range(10)))
    assert len({id(s) for s in seen}) == 1
    assert checkpoints._OPEN == {}  # the last item closed it


async def test_a_later_item_opens_a_fresh_connection(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    async with shared_checkpointer(path) as first:
        conn = first.conn
    async with shared_checkpointer(path) as second:
        assert second.conn is not conn
        assert await second.aget_tuple({"configurable": {"thread_id": "t"}}) is None


async def test_no_path_means_no_checkpointer() -> None:
    async with shared_checkpointer(None) as saver:
        assert saver is None


async def test_setup_waits_for_another_process_lock(tmp_path: Path) -> None:
    """Another connection (standing in for another process) holds an exclusive lock on a
    fresh file; the setup retries and succeeds once it is released."""
    path = tmp_path / "c.sqlite"
    holder = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    released = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    released.start()
    started = time.perf_counter()
    try:
        async with shared_checkpointer(path) as saver:
            assert saver.is_setup
    finally:
        released.join()
        holder.close()
    assert time.perf_counter() - started >= 0.25


async def test_setup_gives_up_on_errors_that_are_not_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    async def broken(self: object) -> None:
        calls.append(1)
        raise aiosqlite.OperationalError("disk I/O error")

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    monkeypatch.setattr(AsyncSqliteSaver, "setup", broken)
    with pytest.raises(aiosqlite.OperationalError, match="disk I/O"):
        async with shared_checkpointer(tmp_path / "c.sqlite"):
            pass
    assert calls == [1]
    assert checkpoints._OPEN == {}


async def test_setup_gives_up_after_its_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    async def locked(self: object) -> None:
        calls.append(1)
        raise aiosqlite.OperationalError("database is locked")

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    monkeypatch.setattr(AsyncSqliteSaver, "setup", locked)
    monkeypatch.setattr(checkpoints, "SETUP_BACKOFF_S", 0.0)
    with pytest.raises(aiosqlite.OperationalError, match="locked"):
        async with shared_checkpointer(tmp_path / "c.sqlite"):
            pass
    assert len(calls) == checkpoints.SETUP_ATTEMPTS


async def test_many_concurrent_agentic_items_on_a_fresh_file(
    kit: SimpleNamespace, tmp_path: Path
) -> None:
    """The race CI once hit: a dozen items set up one new checkpoint file together."""
    strategy = STRATEGIES.create("agentic_rag")
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel(
        responder=lambda r: (
            '{"decision": "answer"}'
            if r.stage == "assessor"
            else ('{"query": "q"}' if r.stage == "planner" else "<answer>3</answer>")
        ),
        delay_s=0.001,
    )
    for round_ in range(10):
        ckpt = tmp_path / f"r{round_}"
        samples = [kit.make_sample(id=f"q{i}", gold_regions=[]) for i in range(12)]
        ctxs = [
            kit.make_context(model, [doc], retriever=kit.FakeRetriever([3]), checkpoint_dir=ckpt)
            for _ in samples
        ]
        done = await asyncio.gather(
            *(strategy.run(s, c) for s, c in zip(samples, ctxs, strict=True))
        )
        assert [t.status for t in done] == [Status.OK] * 12, [t.errors for t in done]
