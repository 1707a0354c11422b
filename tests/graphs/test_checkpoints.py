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

from scanrag.graphs import checkpoints
from scanrag.graphs.checkpoints import shared_checkpointer
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


# --------------------------------------------------------------------------- damaged files


def _answering_model(kit: SimpleNamespace) -> object:
    return kit.ScriptedModel(
        responder=lambda r: (
            '{"decision": "answer"}'
            if r.stage == "assessor"
            else ('{"query": "q"}' if r.stage == "planner" else "<answer>3</answer>")
        )
    )


async def _run_item(kit: SimpleNamespace, ckpt: Path, sample_id: str):  # type: ignore[no-untyped-def]
    strategy = STRATEGIES.create("agentic_rag")
    doc = kit.make_document(num_pages=4)
    ctx = kit.make_context(
        _answering_model(kit), [doc], retriever=kit.FakeRetriever([3]), checkpoint_dir=ckpt
    )
    return await strategy.run(kit.make_sample(id=sample_id, gold_regions=[]), ctx)


async def test_a_file_that_is_not_a_database_is_moved_aside_at_open(
    kit: SimpleNamespace, tmp_path: Path, caplog
) -> None:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "agentic_rag.sqlite").write_bytes(b"not a database, whatever it once was " * 200)
    trajectory = await _run_item(kit, ckpt, "q1")
    assert trajectory.status == Status.OK, trajectory.errors
    (aside,) = ckpt.glob("agentic_rag.sqlite.damaged-*")
    assert aside.read_bytes().startswith(b"not a database")
    assert "agentic_rag.sqlite is damaged" in caplog.text and aside.name in caplog.text


async def test_damage_found_while_items_run_names_the_file_and_a_retry_recovers(
    kit: SimpleNamespace, tmp_path: Path
) -> None:
    """Issue 20: ``DatabaseError: database disk image is malformed`` named no file, and
    ``--retry-errors`` could not recover until the file was deleted by hand."""
    ckpt = tmp_path / "ckpt"
    assert (await _run_item(kit, ckpt, "q1")).status == Status.OK
    path = ckpt / "agentic_rag.sqlite"
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xab" * (len(data) - 4096)  # the header page intact, the rest garbage
    path.write_bytes(bytes(data))
    failed = await _run_item(kit, ckpt, "q2")
    assert failed.status == Status.INTERNAL_ERROR
    (message,) = failed.errors
    assert f"checkpoint database {path.resolve()} is damaged" in message
    assert "--retry-errors" in message and "Traceback" not in message
    assert list(ckpt.glob("agentic_rag.sqlite.damaged-*"))  # kept for inspection
    retried = await _run_item(kit, ckpt, "q2")  # what --retry-errors does: run it again
    assert retried.status == Status.OK, retried.errors
    assert retried.answer == "3"


def test_damage_is_told_apart_from_locks_and_full_disks() -> None:
    assert checkpoints.is_damage(sqlite3.DatabaseError("database disk image is malformed"))
    assert not checkpoints.is_damage(sqlite3.OperationalError("database is locked"))
    assert not checkpoints.is_damage(sqlite3.OperationalError("database or disk is full"))
    assert not checkpoints.is_damage(ValueError("x"))
