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
