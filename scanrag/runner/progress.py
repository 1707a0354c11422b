"""Per-stage progress: bars (rich) with ETA and running token/cost totals on a terminal; a
plain line at a fixed interval otherwise.

Bars show only on a terminal (or when forced). When stderr is not a terminal (a log file, a
pipe, a batch job), a stage that is still running after ``interval_s`` seconds prints

    progress run      120/400 (30%)  0.80/s  ETA 5m50s  errors 2  12,345 tok

(with what the stage is doing while its count does not move: ``progress retrieve 0/28 (0%)
· building index dense 1,200/4,000 pages ...``, ``· loading retriever dense``) every
``interval_s`` seconds (``runner.progress_interval_s``, 30 by default) from a
background thread, so a long stage is never silent, and each stage prints one line when it
ends. ``scanrag run``, ``scanrag score``, ``scanrag retrieve eval`` and ``scanrag ingest``
all report this way.

Libraries draw progress bars of their own (tqdm: transformers' ``Loading weights``,
sentence-transformers, huggingface_hub). Off a terminal they would land in the log as
carriage-return noise, so :func:`quiet_library_progress` (called by the CLI before any
command) turns them off there; on a terminal they stay.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from scanrag.schemas import Usage
from scanrag.scrub import scrub_text

Log = Callable[[str], None]


def stderr_log(message: str) -> None:
    """Print a run message to stderr with secrets masked (an error text may quote a key)."""
    print(scrub_text(message), file=sys.stderr, flush=True)


# Read by tqdm (``TQDM_DISABLE``, when it is imported) and huggingface_hub (transformers'
# bars follow it): a value the user set is kept.
LIBRARY_PROGRESS_OFF = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def quiet_library_progress(stream: TextIO | None = None) -> bool:
    """When ``stream`` (stderr) is not a terminal, turn off the progress bars libraries
    draw: through the environment for those imported later, and directly in transformers and
    huggingface_hub when they are already imported. Returns whether it did."""
    stream = stream or sys.stderr
    try:
        if stream.isatty():
            return False
    except (AttributeError, ValueError):  # a closed or odd stream: not a terminal
        pass
    for name, value in LIBRARY_PROGRESS_OFF.items():
        os.environ.setdefault(name, value)
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    return True


def format_usage(usage: Usage) -> str:
    text = f"{usage.total_tokens:,} tok"
    if usage.cost_usd:
        text += f" ${usage.cost_usd:.4f}"
    if usage.cached_calls:
        text += f" ({usage.cached_calls} cached)"
    return text


def format_duration(seconds: float) -> str:
    """``42s``, ``5m50s``, ``2h05m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class StageHandle:
    """Advances one stage's bar and keeps its usage total and error count."""

    def __init__(self, name: str, total: int, bar: Any = None, task: Any = None) -> None:
        self.name = name
        self.total = total
        self.done = 0
        self.errors = 0
        self.usage = Usage()
        self.started = time.perf_counter()
        self.doing: str | None = None
        self._bar = bar
        self._task = task

    def set_doing(self, doing: str | None) -> None:
        """Name what the stage is doing now (``loading retriever dense``, ``building index
        dense 1,200/4,000 pages``); ``None`` when it is back to its items."""
        self.doing = doing
        if self._bar is not None:
            label = self.name if doing is None else f"{self.name} · {doing}"
            self._bar.update(self._task, description=label)

    def advance(self, n: int = 1, usage: Usage | None = None, error: bool = False) -> None:
        self.done += n
        self.errors += int(error)
        if usage is not None:
            self.usage = self.usage.add(usage)
        if self._bar is not None:
            self._bar.update(self._task, advance=n, usage=format_usage(self.usage))

    def set_usage(self, usage: Usage) -> None:
        self.usage = usage
        if self._bar is not None:
            self._bar.update(self._task, usage=format_usage(self.usage))

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def line(self) -> str:
        """``progress run      120/400 (30%)  0.80/s  ETA 5m50s  errors 2  12,345 tok``."""
        elapsed = max(self.seconds, 1e-9)
        rate = self.done / elapsed
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        left = self.total - self.done
        eta = format_duration(left / rate) if rate > 0 and left > 0 else "—"
        text = f"progress {self.name:<8} {self.done}/{self.total}{share}"
        if self.doing:
            text += f" · {self.doing}"
        text += f"  {rate:.2f}/s"
        text += f"  ETA {eta}  errors {self.errors}  elapsed {format_duration(elapsed)}"
        if self.usage.total_tokens or self.usage.calls:
            text += f"  {format_usage(self.usage)}"
        return text


class _Ticker:
    """Logs a stage's progress line every ``interval_s`` seconds until stopped."""

    def __init__(self, handle: StageHandle, interval_s: float, log: Log) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(handle, interval_s, log), name="progress", daemon=True
        )
        self._thread.start()

    def _run(self, handle: StageHandle, interval_s: float, log: Log) -> None:
        while not self._stop.wait(interval_s):
            log(handle.line())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class RunProgress:
    """Creates one bar per stage; ``enabled=None`` means "only when stderr is a terminal".
    Without bars, a stage prints a plain progress line every ``interval_s`` seconds
    (``None``: never) and one line when it ends."""

    def __init__(
        self,
        enabled: bool | None = None,
        log: Log | None = stderr_log,
        interval_s: float | None = 30.0,
    ) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.log = log
        self.interval_s = interval_s
        self.stages: dict[str, dict[str, Any]] = {}

    @contextmanager
    def stage(self, name: str, total: int) -> Iterator[StageHandle]:
        if not self.enabled:
            handle = StageHandle(name, total)
            ticker = None
            if self.log is not None and self.interval_s and total:
                ticker = _Ticker(handle, self.interval_s, self.log)
            try:
                yield handle
            finally:
                if ticker is not None:
                    ticker.stop()
                self._finish(handle)
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = (
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[usage]}"),
        )
        from rich.console import Console

        # bars go where the "is a terminal" decision was made, never into redirected stdout
        with Progress(*columns, transient=False, console=Console(stderr=True)) as bar:
            task = bar.add_task(name, total=total, usage="")
            handle = StageHandle(name, total, bar, task)
            try:
                yield handle
            finally:
                self._finish(handle, quiet=True)

    def _finish(self, handle: StageHandle, quiet: bool = False) -> None:
        self.stages[handle.name] = {
            "items": handle.done,
            "total": handle.total,
            "errors": handle.errors,
            "seconds": round(handle.seconds, 3),
            "usage": handle.usage.model_dump(),
        }
        if self.log is not None and not quiet:
            errors = f"  errors {handle.errors}" if handle.errors else ""
            self.log(
                f"{handle.name:<8} {handle.done}/{handle.total} in {handle.seconds:.1f}s"
                f"  {format_usage(handle.usage)}{errors}"
            )
