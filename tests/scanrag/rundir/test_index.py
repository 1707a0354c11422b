"""Row indexes of the run logs: a resume reads them, and every doubtful case falls back to a scan.

Each test damages the index or the log the way a crash, an older version or a hand edit can,
then checks that ``digests()`` returns exactly the rows a full scan of the log returns (none
lost, none twice) and that the index is whole again afterwards.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from scanrag.rundir import JsonlLog, RowIndex, RunDir, digest_usage, row_digest
from scanrag.rundir import files as store
from scanrag.rundir import index as index_module
from scanrag.schemas import Trajectory, Usage


def _row(i: int, status: str = "ok") -> dict[str, Any]:
    return {
        "run_key": "rag",
        "sample_id": f"q{i}",
        "status": status,
        "answer": "x" * (i % 7),
        "usage": {"reader": {"calls": 1, "prompt_tokens": 10 + i, "cost_usd": 0.001 * i}},
    }


def _log(folder: Path, index: bool = True) -> JsonlLog:
    path = folder / "trajectories.jsonl"
    return JsonlLog(path, index=RowIndex(folder / "t.index.jsonl", path) if index else None)


def _write(folder: Path, rows: range, index: bool = True) -> None:
    log = _log(folder, index)
    for i in rows:
        log.append(_row(i))
    log.close()


def _scan(folder: Path) -> list[dict[str, Any]]:
    return [row_digest(r) for r in _log(folder, index=False).rows()]


def _keys(digests: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return [tuple(d["key"]) for d in digests]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets from which ``digests()`` parsed the log (0 = a full scan)."""
    starts: list[int] = []
    real = store.iter_jsonl_from

    def spy(path: Any, offset: int = 0) -> Any:
        starts.append(offset)
        return real(path, offset)

    monkeypatch.setattr(store, "iter_jsonl_from", spy)
    return starts


def _index_is_whole(folder: Path, reads: list[int]) -> None:
    """A second ``digests()`` reads nothing of the log but its end."""
    reads.clear()
    again = _log(folder).digests()
    assert _keys(again) == _keys(_scan(folder))
    assert reads == [(folder / "trajectories.jsonl").stat().st_size]


def test_digests_match_a_scan_and_skip_the_indexed_rows(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(50))
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path)
    assert _keys(digests)[:2] == [("rag", "q0"), ("rag", "q1")]
    assert reads == [(tmp_path / "trajectories.jsonl").stat().st_size]  # no row parsed
    assert digest_usage(digests).calls == 50


def test_pydantic_rows_index_like_their_json(tmp_path: Path) -> None:
    log = _log(tmp_path)
    for i in range(3):
        log.append(
            Trajectory(strategy="s", run_key="s+k", sample_id=f"q{i}", dataset="d", question="?")
        )
    log.close()
    digests = log.digests()
    assert digests == _scan(tmp_path) and _keys(digests)[0] == ("s+k", "q0")


def test_missing_index_is_rebuilt_from_the_log(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(20), index=False)  # an older run folder: no index at all
    _write(tmp_path, range(20, 25))  # appends to a log with rows: no partial index is started
    assert not (tmp_path / "t.index.jsonl").exists()
    digests = _log(tmp_path).digests()
    assert _keys(digests) == [("rag", f"q{i}") for i in range(25)]
    assert reads == [0]
    _index_is_whole(tmp_path, reads)
    (tmp_path / "t.index.jsonl").unlink()
    assert _log(tmp_path).digests() == digests


def test_index_older_than_the_log_reads_only_the_newer_rows(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(30))
    indexed = (tmp_path / "trajectories.jsonl").stat().st_size
    # rows that reached the log without index lines (a kill between the two writes)
    _write(tmp_path, range(30, 34), index=False)
    digests = _log(tmp_path).digests()
    assert _keys(digests) == [("rag", f"q{i}") for i in range(34)]
    assert digests == _scan(tmp_path)
    assert reads == [indexed]
    _index_is_whole(tmp_path, reads)


def test_torn_last_line_of_the_log(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(10))
    path = tmp_path / "trajectories.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"run_key":"rag","sample_id":"q10","sta')  # killed mid-write
    digests = _log(tmp_path).digests()
    assert _keys(digests) == [("rag", f"q{i}") for i in range(10)]
    log = _log(tmp_path)
    assert log.repair() > 0
    log.append(_row(10))
    log.close()
    reads.clear()
    digests = _log(tmp_path).digests()
    assert _keys(digests) == [("rag", f"q{i}") for i in range(11)]
    assert digests == _scan(tmp_path)
    assert reads == [path.stat().st_size]  # the repair kept the index


def test_torn_last_line_of_the_index(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(10))
    index = tmp_path / "t.index.jsonl"
    lines = index.read_bytes().splitlines(keepends=True)
    index.write_bytes(b"".join(lines[:-1]) + lines[-1][:9])  # the last entry cut short
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path) and len(digests) == 10
    _index_is_whole(tmp_path, reads)


def test_torn_index_line_followed_by_more_entries(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(5))
    index = tmp_path / "t.index.jsonl"
    index.write_bytes(index.read_bytes()[:-20])  # torn, and later sessions append after it
    _write(tmp_path, range(5, 8))
    digests = _log(tmp_path).digests()
    assert _keys(digests) == [("rag", f"q{i}") for i in range(8)]
    assert reads == [0]
    _index_is_whole(tmp_path, reads)


def test_index_past_the_end_of_a_cut_log(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(10))
    path = tmp_path / "trajectories.jsonl"
    data = path.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) // 2) + 1  # a restored shorter copy, same inode
    with open(path, "r+b") as fh:
        fh.truncate(cut)
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path) and 0 < len(digests) < 10
    _index_is_whole(tmp_path, reads)


def test_log_rewritten_in_place_is_not_trusted_to_the_index(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(10))
    path = tmp_path / "trajectories.jsonl"
    data = path.read_bytes()
    old = b'"sample_id":"q9","status":"ok"'
    assert data.count(old) == 1
    with open(path, "r+b") as fh:  # same inode, same length, the last row changed
        fh.write(data.replace(old, b'"sample_id":"qX","status":"no"'))
    assert path.stat().st_size == len(data)
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path)
    assert digests[-1]["status"] == "no" and digests[-1]["key"] == ["rag", "qX"]
    _index_is_whole(tmp_path, reads)


def test_replaced_log_is_noticed_by_its_identity(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(10))
    log = _log(tmp_path)
    assert log.rewrite(lambda r: r["sample_id"] != "q3") == 1
    assert not (tmp_path / "t.index.jsonl").exists()  # the rewrite dropped it
    _write(tmp_path, range(10, 12))
    path = tmp_path / "trajectories.jsonl"
    # an index from elsewhere (another log's), copied in: the header names another file
    other = tmp_path / "other"
    other.mkdir()
    _write(other, range(40))
    os.replace(other / "t.index.jsonl", tmp_path / "t.index.jsonl")
    digests = _log(tmp_path).digests()
    assert [k[1] for k in _keys(digests)] == [f"q{i}" for i in range(12) if i != 3]
    assert digests == _scan(tmp_path) and reads == [0]
    assert path.stat().st_size > 0
    _index_is_whole(tmp_path, reads)


def test_garbage_index_falls_back(tmp_path: Path) -> None:
    _write(tmp_path, range(4))
    (tmp_path / "t.index.jsonl").write_bytes(b"\x00not json\n{}\n")
    assert _log(tmp_path).digests() == _scan(tmp_path)


def test_an_index_write_failure_never_fails_the_row(tmp_path: Path, monkeypatch) -> None:
    log = _log(tmp_path)
    log.append(_row(0))

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "no space left")

    monkeypatch.setattr(index_module, "write_all", broken)
    log.append(_row(1))  # the row is written; the index is dropped
    monkeypatch.undo()
    log.append(_row(2))
    log.close()
    assert not (tmp_path / "t.index.jsonl").exists()
    assert _keys(_log(tmp_path).digests()) == [("rag", f"q{i}") for i in range(3)]


def test_scrubbed_rows_are_indexed_as_written(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    log = JsonlLog(
        path,
        scrub=lambda text: text.replace("SECRET", "***"),
        index=RowIndex(tmp_path / "t.index.jsonl", path),
    )
    log.append({**_row(0), "sample_id": "SECRET-1"})
    log.close()
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path) and digests[0]["key"] == ["rag", "***-1"]


def test_run_folder_logs_keep_indexes(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    run.path.mkdir(parents=True)
    log = run.log(RunDir.TRAJECTORIES)
    log.append(_row(1, status="error"))
    log.close()
    assert (run.path / RunDir.TRAJECTORY_INDEX).is_file()
    digests = run.log(RunDir.TRAJECTORIES).digests()
    assert digests[0]["status"] == "error"
    assert Usage.model_validate(digests[0]["usage"]).prompt_tokens == 11


# ------------------------------------------------------- issue 20: every entry is checked


def _entries(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "t.index.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]


def _write_entries(folder: Path, entries: list[dict[str, Any]]) -> None:
    index = folder / "t.index.jsonl"
    header = index.read_text().splitlines()[0]
    body = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries)
    index.write_text(header + "\n" + body)


def test_a_middle_key_edited_in_the_index_falls_back_to_a_scan(tmp_path: Path, reads) -> None:
    """Issue 20: an edited middle key made a resume run an item again (19 rows for 18)."""
    _write(tmp_path, range(18))
    entries = _entries(tmp_path)
    entries[7]["key"] = ["rag", "q-not-there"]  # offsets and checksum left as they were
    _write_entries(tmp_path, entries)
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path)
    assert ("rag", "q7") in _keys(digests) and ("rag", "q-not-there") not in _keys(digests)
    assert reads == [0]
    _index_is_whole(tmp_path, reads)


def test_an_entry_naming_an_item_missing_from_the_log_is_not_believed(
    tmp_path: Path, reads
) -> None:
    """Issue 20: such an index made every --resume stop with unscored pairs, forever."""
    _write(tmp_path, range(6))
    entries = _entries(tmp_path)
    ghost = {**entries[2], "key": ["rag", "ghost"]}
    _write_entries(tmp_path, [*entries[:3], ghost, *entries[3:]])
    assert _keys(_log(tmp_path).digests()) == [("rag", f"q{i}") for i in range(6)]
    _index_is_whole(tmp_path, reads)
    # the same ghost with offsets of its own: its checksum cannot match the log's bytes
    entries = _entries(tmp_path)
    _write_entries(tmp_path, [*entries[:5], {**entries[5], "key": ["rag", "ghost"]}])
    reads.clear()
    assert _keys(_log(tmp_path).digests()) == [("rag", f"q{i}") for i in range(6)]
    assert reads == [0]


def test_a_middle_row_of_the_log_edited_in_place_is_noticed(tmp_path: Path, reads) -> None:
    _write(tmp_path, range(10))
    path = tmp_path / "trajectories.jsonl"
    data = path.read_bytes()
    old = b'"sample_id":"q4","status":"ok"'
    with open(path, "r+b") as fh:  # same length, same inode, not the last row
        fh.write(data.replace(old, b'"sample_id":"q4","status":"no"'))
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path) and digests[4]["status"] == "no"
    assert reads == [0]
    _index_is_whole(tmp_path, reads)


def test_an_index_without_checksums_is_rebuilt(tmp_path: Path, reads) -> None:
    """An index of an older version (entries without ``sum``) is never believed."""
    _write(tmp_path, range(5))
    _write_entries(
        tmp_path, [{k: v for k, v in e.items() if k != "sum"} for e in _entries(tmp_path)]
    )
    assert _log(tmp_path).digests() == _scan(tmp_path)
    assert reads == [0]
    assert all("sum" in e for e in _entries(tmp_path))
    _index_is_whole(tmp_path, reads)


# ------------------------------------------------- issue 33: the index stays open, writes per sync


def test_the_index_file_is_opened_once_per_session(tmp_path: Path, monkeypatch) -> None:
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(Path(path).name)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(index_module.os, "open", spy)
    _write(tmp_path, range(40))  # fsync (and an index write) after every row
    assert opened.count("t.index.jsonl") == 1
    assert _log(tmp_path).digests() == _scan(tmp_path)


def test_entries_wait_for_the_sync_and_a_kill_loses_only_those(tmp_path: Path, reads) -> None:
    path = tmp_path / "trajectories.jsonl"
    log = JsonlLog(path, fsync_interval_s=3600, index=RowIndex(tmp_path / "t.index.jsonl", path))
    log.append(_row(0))  # the first row syncs at once: its entry is written
    first_end = path.stat().st_size
    for i in range(1, 6):
        log.append(_row(i))  # held: no sync within the hour
    assert len((tmp_path / "t.index.jsonl").read_text().splitlines()) == 2  # header, row 0
    # killed here (never closed): the rows are in the log, their entries are not
    digests = _log(tmp_path).digests()
    assert digests == _scan(tmp_path)
    assert reads == [first_end]  # only the rows after the last entry were parsed
    _index_is_whole(tmp_path, reads)
    log.close()  # (the test's own descriptors)


def test_held_entries_are_written_by_flush_and_close(tmp_path: Path, reads) -> None:
    path = tmp_path / "trajectories.jsonl"
    log = JsonlLog(path, fsync_interval_s=3600, index=RowIndex(tmp_path / "t.index.jsonl", path))
    for i in range(4):
        log.append(_row(i))
    log.flush()
    assert len((tmp_path / "t.index.jsonl").read_text().splitlines()) == 5
    log.append(_row(4))
    log.close()
    assert _log(tmp_path).digests() == _scan(tmp_path)
    assert reads == [path.stat().st_size]


def test_a_rewritten_log_gets_no_index_until_a_resume_rebuilds_it(tmp_path: Path) -> None:
    log = _log(tmp_path)
    for i in range(6):
        log.append(_row(i))
    log.rewrite(lambda row: row["sample_id"] != "q2")
    log.append(_row(9))  # appended after the rewrite: the removed index is not restarted
    log.close()
    assert not (tmp_path / "t.index.jsonl").exists()
    assert _keys(_log(tmp_path).digests()) == [("rag", f"q{i}") for i in (0, 1, 3, 4, 5, 9)]
