"""Run directory storage: atomic appends, torn-line repair, full-disk rollback, the run lock."""

from __future__ import annotations

import errno
import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from scanrag.rundir import DiskFullError, JsonlLog, RunDir, RunDirError
from scanrag.rundir import files as store


def test_append_and_read_rows(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "rows.jsonl")
    for i in range(3):
        log.append({"run_key": "a", "sample_id": str(i), "text": "line\nbreak"})
    log.close()
    rows = list(log.rows())
    assert [r["sample_id"] for r in rows] == ["0", "1", "2"]
    assert rows[0]["text"] == "line\nbreak"
    assert (tmp_path / "rows.jsonl").read_text().count("\n") == 3


def test_torn_last_line_is_skipped_then_repaired(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    log = JsonlLog(path)
    log.append({"sample_id": "1"})
    log.append({"sample_id": "2"})
    log.close()
    with open(path, "ab") as fh:
        fh.write(b'{"sample_id": "3", "ans')  # a kill -9 in the middle of a write
    assert [r["sample_id"] for r in log.rows()] == ["1", "2"]
    assert log.repair() == len(b'{"sample_id": "3", "ans')
    assert log.repair() == 0
    log.append({"sample_id": "3"})
    log.close()
    assert [json.loads(line)["sample_id"] for line in path.read_text().splitlines()] == [
        "1",
        "2",
        "3",
    ]


def test_repair_of_a_file_with_only_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"partial": ')
    assert JsonlLog(path).repair() == 12
    assert path.read_bytes() == b""


def test_corrupt_middle_row_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(RunDirError, match=r"rows.jsonl:2: corrupt row"):
        list(JsonlLog(path).rows())


def test_full_disk_rolls_back_the_partial_line(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "rows.jsonl"
    log = JsonlLog(path)
    log.append({"sample_id": "kept"})
    real_write = os.write

    def half_then_enospc(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "write", half_then_enospc)
    with pytest.raises(DiskFullError, match="no space left"):
        log.append({"sample_id": "lost", "payload": "x" * 100})
    monkeypatch.setattr(store.os, "write", real_write)
    log.close()
    assert path.read_text() == '{"sample_id":"kept"}\n'


def test_scrub_hook_runs_on_every_row(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "rows.jsonl", scrub=lambda text: text.replace("SECRET", "***"))
    log.append({"error": "auth failed for key SECRET"})
    log.close()
    assert "SECRET" not in (tmp_path / "rows.jsonl").read_text()


def test_rewrite_keeps_selected_rows(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "rows.jsonl")
    for i in range(4):
        log.append({"sample_id": str(i), "status": "ok" if i % 2 else "model_error"})
    assert log.rewrite(lambda r: r["status"] == "ok") == 2
    assert [r["sample_id"] for r in log.rows()] == ["1", "3"]


def test_run_dir_names_and_lock(tmp_path: Path) -> None:
    now = datetime(2025, 1, 2, 3, 4, 5)
    first = RunDir.create(tmp_path, "my exp", now=now)
    second = RunDir.create(tmp_path, "my exp", now=now)
    assert first.path.name == "20250102-030405_my-exp"
    assert second.path.name == "20250102-030405_my-exp-2"
    first.acquire()
    other = RunDir(first.path)
    with pytest.raises(RunDirError, match="in use by another scanrag process"):
        other.acquire()
    first.release()
    other.acquire()
    other.release()
    with pytest.raises(RunDirError, match="is not a run folder"):
        RunDir.open(first.path)
    (first.path / RunDir.TRAJECTORIES).write_text("", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"not a run directory \(no config.resolved.yaml\)"):
        RunDir.open(first.path)
