"""Per-stage progress bars (rich) with ETA and running token/cost totals.

Bars show only on a terminal (or when forced); otherwise each stage prints one line when it
ends, so logs and tests stay clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from scanrag.schemas import Usage
from scanrag.scrub import scrub_text

Log = Callable[[str], None]


def stderr_log(message: str) -> None:
    """Print a run message to stderr with secrets masked (an error text may quote a key)."""
    print(scrub_text(message), file=sys.stderr, flush=True)


def format_usage(usage: Usage) -> str:
    text = f"{usage.total_tokens:,} tok"
    if usage.cost_usd:
        text += f" ${usage.cost_usd:.4f}"
    if usage.cached_calls:
        text += f" ({usage.cached_calls} cached)"
    return text


class StageHandle:
    """Advances one stage's bar and keeps its usage total."""

    def __init__(self, name: str, total: int, bar: Any = None, task: Any = None) -> None:
        self.name = name
        self.total = total
        self.done = 0
        self.usage = Usage()
        self.started = time.perf_counter()
        self._bar = bar
        self._task = task

    def advance(self, n: int = 1, usage: Usage | None = None) -> None:
        self.done += n
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


class RunProgress:
    """Creates one bar per stage; ``enabled=None`` means "only when stderr is a terminal"."""

    def __init__(self, enabled: bool | None = None, log: Log | None = stderr_log) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.log = log
        self.stages: dict[str, dict[str, Any]] = {}

    @contextmanager
    def stage(self, name: str, total: int) -> Iterator[StageHandle]:
        if not self.enabled:
            handle = StageHandle(name, total)
            try:
                yield handle
            finally:
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
            "seconds": round(handle.seconds, 3),
            "usage": handle.usage.model_dump(),
        }
        if self.log is not None and not quiet:
            self.log(
                f"{handle.name:<8} {handle.done}/{handle.total} in {handle.seconds:.1f}s"
                f"  {format_usage(handle.usage)}"
            )
