"""Progress without a terminal: a plain line at a fixed interval, then one when a stage ends."""

from __future__ import annotations

import time

from scanrag.runner.progress import RunProgress, format_duration
from scanrag.schemas import Usage


def test_a_slow_stage_prints_progress_lines_at_its_interval() -> None:
    lines: list[str] = []
    progress = RunProgress(False, log=lines.append, interval_s=0.02)
    with progress.stage("run", 4) as stage:
        stage.advance(usage=Usage(calls=1, prompt_tokens=1000))
        stage.advance(error=True)
        time.sleep(0.15)
    ticks = [line for line in lines if line.startswith("progress run")]
    assert len(ticks) >= 2, lines
    assert "2/4 (50%)" in ticks[-1] and "/s  ETA " in ticks[-1]
    assert "errors 1" in ticks[-1] and "1,000 tok" in ticks[-1]
    assert lines[-1].startswith("run      2/4 in ") and lines[-1].endswith("errors 1")
    assert progress.stages["run"]["errors"] == 1


def test_no_interval_no_lines_but_the_last() -> None:
    lines: list[str] = []
    with RunProgress(False, log=lines.append, interval_s=None).stage("score", 3) as stage:
        time.sleep(0.05)
        stage.advance()
    assert len(lines) == 1 and lines[0].startswith("score    1/3 in")


def test_durations() -> None:
    assert [format_duration(s) for s in (4.4, 350, 7500)] == ["4s", "5m50s", "2h05m"]


def test_a_line_names_what_the_stage_is_doing_while_its_count_stands_still() -> None:
    lines: list[str] = []
    progress = RunProgress(False, log=lines.append, interval_s=0.02)
    with progress.stage("retrieve", 28) as stage:
        stage.set_doing("building index dense 1,024/4,000 pages")
        time.sleep(0.1)
        stage.set_doing(None)
        stage.advance()
        time.sleep(0.1)
    ticks = [line for line in lines if line.startswith("progress retrieve")]
    assert any(
        line.startswith("progress retrieve 0/28 (0%) · building index dense 1,024/4,000 pages")
        for line in ticks
    ), ticks
    assert "·" not in ticks[-1] and "1/28" in ticks[-1]


def test_the_index_pool_says_what_it_loads_and_builds() -> None:
    from scanrag.index_pool import IndexPool
    from scanrag.schemas import Document, Page

    class Reporting:
        page_progress = None

        def add(self, documents: list[Document]) -> None:
            for document in documents:
                assert self.page_progress is not None
                self.page_progress(len(document.pages))

    pages = [Page(number=n, text="t", width=1, height=1) for n in (1, 2)]
    docs = [
        Document(
            id=f"d{i}", name=f"d{i}.pdf", path=f"d{i}.pdf", sha256=str(i), num_pages=2, pages=pages
        )
        for i in (1, 2)
    ]
    phases: list[str | None] = []
    pool = IndexPool(docs, phase=phases.append)
    retriever = pool.leaf("fake", "fake-1", Reporting)  # type: ignore[arg-type]
    assert phases == [
        "loading retriever fake",
        "building index fake (4 pages)",
        "building index fake 2/4 pages",
        "building index fake 4/4 pages",
        None,
    ]
    assert retriever.page_progress is None  # the hook does not outlive the build


def test_library_progress_bars_are_off_without_a_terminal(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """transformers' ``Loading weights`` bar (tqdm) stays out of a log file or a pipe."""
    import subprocess
    import sys

    script = (
        "from scanrag.cli import main\n"
        f"main(['export', {str(tmp_path / 'missing')!r}])\n"
        "from transformers.utils.logging import tqdm\n"
        "for _ in tqdm(range(3), desc='Loading weights'): pass\n"
        "import tqdm as plain\n"
        "for _ in plain.tqdm(range(3), desc='Plain bar'): pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "not a directory" in done.stderr  # the command ran and said why it failed
    assert "Loading weights" not in done.stderr and "Plain bar" not in done.stderr


def test_library_progress_bars_stay_on_a_terminal(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io

    from scanrag.runner.progress import LIBRARY_PROGRESS_OFF, quiet_library_progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for name in LIBRARY_PROGRESS_OFF:
        monkeypatch.delenv(name, raising=False)
    assert quiet_library_progress(Terminal()) is False
    import os

    assert not any(name in os.environ for name in LIBRARY_PROGRESS_OFF)
