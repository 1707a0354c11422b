"""Long documents read by the worker pool give exactly what reading them here gives."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import ingest as ingest_module
from scanrag.documents import ingest_many, ingest_pdf, parallel

REPO = Path(__file__).resolve().parents[3]


def long_pdf(path: Path, pages: int, tag: str) -> Path:
    pdf = pymupdf.open()
    for n in range(1, pages + 1):
        page = pdf.new_page()
        page.insert_text((72, 72), f"{tag} section {n}", fontsize=14)
        page.insert_textbox(pymupdf.Rect(72, 100, 540, 300), f"{tag} body text {n} " * 30)
        page.insert_text((300, 760), str(n))
    pdf.save(path)
    pdf.close()
    return path


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(parallel.ENV_WORKERS, "2")
    yield
    parallel.shutdown_pool()


def _dump(path: Path) -> dict:
    return ingest_pdf(path, ocr="never").model_dump()


def test_a_lone_document_never_waits_for_a_pool(tmp_path: Path, pool: None) -> None:
    path = long_pdf(tmp_path / "a.pdf", 40, "alpha")
    assert parallel.workers_for(40) == 1  # no pool started
    ingest_pdf(path, ocr="never")
    assert parallel._STATE.pool is None


def _spy_units(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """Record every page range handed to a worker (file name, start, stop)."""
    used: list[tuple[str, int, int]] = []
    real = parallel.submit_range

    def spy(path, password, start, stop, options, labels):  # type: ignore[no-untyped-def]
        used.append((Path(path).name, start, stop))
        return real(path, password, start, stop, options, labels)

    monkeypatch.setattr(ingest_module, "submit_range", spy)
    return used


def _started(paths: list[Path]) -> None:
    assert parallel.warm_pool_for(paths) is True
    assert parallel._STATE.ready.wait(60), "the worker pool did not start"


def test_batch_reads_long_documents_in_workers_with_identical_output(
    tmp_path: Path, pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [long_pdf(tmp_path / f"{t}.pdf", 40, t) for t in ("alpha", "beta", "gamma")]
    expected = [_dump(p) for p in paths]  # read here: no pool yet
    used = _spy_units(monkeypatch)
    _started(paths)
    batch = ingest_many(paths, ocr="never")
    assert [d.model_dump() for d in batch.documents] == expected
    # every long document went to both workers, one range each, covering every page once
    for name in ("alpha.pdf", "beta.pdf", "gamma.pdf"):
        ranges = [(start, stop) for n, start, stop in used if n == name]
        assert ranges == [(0, 20), (20, 40)]


def test_page_store_files_are_byte_identical_with_and_without_workers(
    tmp_path: Path, pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.documents import DocumentStore

    sizes = (("long", 40), ("short", 9), ("other", 20))
    paths = [long_pdf(tmp_path / f"{t}.pdf", n, t) for t, n in sizes]
    here = DocumentStore(tmp_path / "here")
    for path in paths:
        here.load_or_ingest(path, ocr="never")
    used = _spy_units(monkeypatch)
    _started(paths)
    there = DocumentStore(tmp_path / "there")
    docs = [doc for _, doc in there.ingest_many(paths, ocr="never")]
    assert {name for name, _, _ in used} == {"long.pdf", "short.pdf", "other.pdf"}
    assert [(s, e) for n, s, e in used if n == "short.pdf"] == [(0, 9)]  # a short one whole
    for doc in docs:
        assert not isinstance(doc, Exception)
        ours = there.path_for(doc.sha256, ocr="never")
        theirs = here.path_for(doc.sha256, ocr="never")
        assert _rows(ours) == _rows(theirs)
        assert doc.pages == here.load(doc.sha256, ocr="never").pages  # type: ignore[union-attr]


def _rows(path: Path) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        pages = conn.execute("SELECT * FROM pages ORDER BY number").fetchall()
        return pages + conn.execute("SELECT * FROM document").fetchall()


def test_a_broken_pool_falls_back_without_losing_pages(
    tmp_path: Path, pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures import Future

    from scanrag.documents.pages import read_document_page
    from scanrag.documents.records import encode_page

    path = long_pdf(tmp_path / "a.pdf", 40, "alpha")
    expected = _dump(path)

    def first_works_then_broken(path, password, start, stop, options, labels):  # type: ignore[no-untyped-def]
        future: Future = Future()
        if start == 0:
            with pymupdf.open(path) as fz_doc:
                pages = [
                    read_document_page(fz_doc, i, labels[i - start], options)
                    for i in range(start, stop)
                ]
            future.set_result(([encode_page(p) for p in pages], []))
        else:
            future.set_exception(BrokenProcessPool("a worker was killed"))
        return future

    monkeypatch.setattr(
        ingest_module, "plan_units", lambda count, whole_if_short=False: [(0, 20), (20, 40)]
    )
    monkeypatch.setattr(ingest_module, "submit_range", first_works_then_broken)
    assert ingest_pdf(path, ocr="never").model_dump() == expected


def test_small_batches_and_a_single_cpu_use_no_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = [long_pdf(tmp_path / f"{t}.pdf", 10, t) for t in ("a", "b", "c")]
    monkeypatch.setenv(parallel.ENV_WORKERS, "2")
    assert parallel.warm_pool_for(short) is False
    monkeypatch.setenv(parallel.ENV_WORKERS, "1")
    assert parallel.warm_pool() is False


# ------------------------------------------- issue 33: workers by the CPUs actually free


def test_usable_workers_follow_the_setting_else_the_free_cpus(monkeypatch) -> None:
    monkeypatch.setattr(parallel, "available_cpus", lambda: 4)
    monkeypatch.setenv(parallel.ENV_WORKERS, "3")
    assert parallel.usable_workers() == 3
    monkeypatch.delenv(parallel.ENV_WORKERS)
    for free, workers in ((0.2, 1), (1.4, 1), (1.6, 2), (3.9, 4), (None, 4)):
        monkeypatch.setattr(parallel, "free_cpus", lambda free=free: free)
        assert parallel.usable_workers() == workers


def test_free_cpus_count_idle_time_and_this_process_own(monkeypatch) -> None:
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1})
    # 0.1 s on two CPUs at 100 ticks a second: 20 ticks; 5 of them idle
    readings = iter([([100, 100], [40, 40]), ([110, 110], [45, 40])])
    monkeypatch.setattr(parallel, "_cpu_times", lambda cpus: next(readings))
    own = iter([1.0, 1.05])  # this process used half a CPU meanwhile (5 ticks)
    monkeypatch.setattr(parallel.time, "process_time", lambda: next(own))
    monkeypatch.setattr(parallel.time, "sleep", lambda s: None)
    assert parallel.free_cpus(0.1) == pytest.approx(1.0)


def test_free_cpus_count_the_pools_own_workers_as_free(monkeypatch) -> None:
    """A pool left up by an earlier batch reads the first document while the CPUs are
    counted: its workers' CPU time is this batch's to use, not another program's."""
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(parallel, "_TICKS", 100)
    readings = iter([([100, 100], [40, 40]), ([110, 110], [40, 40])])  # no idle tick
    monkeypatch.setattr(parallel, "_cpu_times", lambda cpus: next(readings))
    monkeypatch.setattr(parallel.time, "process_time", lambda: 1.0)  # this process waits
    monkeypatch.setattr(parallel, "_worker_pids", lambda: [101, 102])
    ticks = iter([500, 520])  # both workers busy the whole 0.1 s: 20 ticks
    monkeypatch.setattr(parallel, "_ticks_of", lambda pids: next(ticks))
    monkeypatch.setattr(parallel.time, "sleep", lambda s: None)
    assert parallel.free_cpus(0.1) == pytest.approx(2.0)


def test_ticks_of_read_another_process_cpu_time() -> None:
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    child = subprocess.Popen(
        [sys.executable, "-c", spin + "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while parallel._ticks_of([child.pid]) < 0.25 * parallel._TICKS:
            assert time.monotonic() < deadline, "no CPU time read"
            time.sleep(0.05)
    finally:
        child.communicate(b"")
    assert parallel._ticks_of([child.pid]) == 0  # gone: counted as none


def test_documents_ahead_go_to_the_workers_before_the_first_is_collected(
    tmp_path: Path, pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Short documents of a batch are handed out several ahead (both workers stay busy past
    a short one), in order, the output unchanged."""
    tags = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
    paths = [long_pdf(tmp_path / f"{t}.pdf", 12, t) for t in tags]  # 72 pages: a pool
    expected = [_dump(p) for p in paths]
    used = _spy_units(monkeypatch)
    handed_at: list[int] = []
    real = ingest_module.collect_document

    def collect(reader):  # type: ignore[no-untyped-def]
        handed_at.append(len(used))
        return real(reader)

    monkeypatch.setattr(ingest_module, "collect_document", collect)
    _started(paths)
    parallel._STATE.deciding = None
    batch = ingest_many(paths, ocr="never")
    assert [d.model_dump() for d in batch.documents] == expected
    assert [name for name, _, _ in used] == [p.name for p in paths]  # whole, in order
    assert handed_at[0] == 1 + ingest_module.LOOKAHEAD_DOCS  # the first and four ahead
    assert handed_at == sorted(handed_at)


def test_free_cpus_read_this_machine() -> None:
    free = parallel.free_cpus(0.05)
    assert free is None or 0 <= free <= parallel.available_cpus()


def test_a_busy_machine_reads_the_batch_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer than two CPUs free: no pool, every page read here, the same documents."""
    monkeypatch.delenv(parallel.ENV_WORKERS, raising=False)
    monkeypatch.setattr(parallel, "available_cpus", lambda: 2)
    monkeypatch.setattr(parallel, "free_cpus", lambda window_s=0.1: 0.9)
    paths = [long_pdf(tmp_path / f"{t}.pdf", 40, t) for t in ("alpha", "beta")]
    expected = [_dump(p) for p in paths]
    used = _spy_units(monkeypatch)
    try:
        assert parallel.warm_pool_for(paths) is True  # the CPUs are counted...
        assert parallel._STATE.deciding is not None
        parallel._STATE.deciding.join(10)
        assert parallel._STATE.pool is None  # ...and found busy
        batch = ingest_many(paths, ocr="never")
    finally:
        parallel.shutdown_pool()
    assert [d.model_dump() for d in batch.documents] == expected
    assert used == []


def test_ranges_cover_every_page_once() -> None:
    assert parallel._ranges(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert parallel._ranges(3, 3) == [(0, 1), (1, 2), (2, 3)]


def test_workers_started_from_a_script_on_stdin_do_not_import_it(tmp_path: Path) -> None:
    # multiprocessing would re-run (or, for "python -", fail to find) the caller's main module
    # in every worker; the pool hides it. This script has no __main__ guard on purpose.
    for tag in ("alpha", "beta"):
        long_pdf(tmp_path / f"{tag}.pdf", 40, tag)
    script = textwrap.dedent(
        f"""
        import os
        os.environ["{parallel.ENV_WORKERS}"] = "2"
        from pathlib import Path
        from scanrag.documents import ingest_many, parallel
        paths = sorted(Path({str(tmp_path)!r}).glob("*.pdf"))
        parallel.warm_pool_for(paths)
        assert parallel._STATE.ready.wait(60)
        print(sum(d.num_pages for d in ingest_many(paths, ocr="never").documents))
        print("RAN ONCE")
        """
    )
    out = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["80", "RAN", "ONCE"]
    assert "Traceback" not in out.stderr


def test_workers_exit_when_the_process_that_started_them_is_killed(tmp_path: Path) -> None:
    import os
    import signal
    import time

    script = textwrap.dedent(
        f"""
        import os, time
        os.environ["{parallel.ENV_WORKERS}"] = "2"
        from scanrag.documents import parallel
        parallel.warm_pool()
        assert parallel._STATE.ready.wait(60)
        print(" ".join(map(str, parallel._STATE.pool._processes)), flush=True)
        time.sleep(120)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        workers = [int(pid) for pid in child.stdout.readline().split()]  # type: ignore[union-attr]
        assert len(workers) == 2
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        deadline = time.monotonic() + 20
        alive = workers
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = [pid for pid in workers if _alive(pid)]
        assert alive == [], "pool workers outlived the killed process"
    finally:
        if child.poll() is None:
            child.kill()


def _alive(pid: int) -> bool:
    import os

    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    finally:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
