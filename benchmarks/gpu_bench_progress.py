"""Progress, budgets and watchdogs for ``benchmarks/gpu_bench.py``'s sections.

A section runs inside ``Section``: it prints a line when it starts and when it ends, and a
progress line every ``tick_s`` seconds in between (the stage and done/total) from a
background thread, so a slow or stuck stage is visible from outside. The section reports
``stage(label, total)`` and ``advance()``; past its budget ``advance`` (and ``check``) raise
``BudgetSpentError``, which the runner turns into a section marked ``incomplete`` that keeps every
figure measured so far (``figures``). Two watchdogs cover a stage that never returns to the
section's code: ``faulthandler.dump_traceback_later`` prints every thread's stack
``STACK_GRACE_S`` after the budget, and past ``HARD_FACTOR`` × budget + ``STACK_GRACE_S``
the ticker prints the stacks again, hands the runner's ``on_hang`` callback the chance to
write what finished, and ends the process (exit status ``HUNG_EXIT``).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

STACK_GRACE_S = 15.0
HARD_FACTOR = 2.0
HUNG_EXIT = 124


class BudgetSpentError(Exception):
    """A section ran past its budget; it stops at the next ``advance``/``check``."""


class Section:
    """One section's progress lines, budget and watchdogs (module docstring)."""

    def __init__(
        self,
        name: str,
        budget_s: float,
        tick_s: float = 10.0,
        out: TextIO | None = None,
        on_hang: Callable[[Section], None] | None = None,
    ) -> None:
        self.name, self.budget_s, self.tick_s = name, budget_s, tick_s
        self.out = out or sys.stdout
        self.on_hang = on_hang
        self.figures: dict[str, Any] = {}
        self.label, self.done, self.total = "starting", 0, 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # -- for the section's code --------------------------------------------------------------
    def stage(self, label: str, total: int = 0) -> None:
        """A new stage of ``total`` steps (0: unknown); printed at once."""
        self.label, self.done, self.total = label, 0, total
        self.say(f"stage {label} ({self.count()})")
        self.check()

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        self.check()

    def check(self) -> None:
        if self.elapsed() > self.budget_s:
            raise BudgetSpentError(f"budget of {self.budget_s:g} s spent during stage {self.label}")

    # -- lines -------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def count(self) -> str:
        return f"{self.done}/{self.total}" if self.total else f"{self.done}/?"

    def say(self, text: str) -> None:
        print(f"[{self.name}] {self.elapsed():6.1f} s  {text}", file=self.out, flush=True)

    # -- lifetime ----------------------------------------------------------------------------
    def __enter__(self) -> Section:
        self.started = time.monotonic()
        self.say(f"start (budget {self.budget_s:g} s)")
        faulthandler.dump_traceback_later(self.budget_s + STACK_GRACE_S, file=_stacks())
        self._ticker = threading.Thread(target=self._tick, name=f"bench-{self.name}", daemon=True)
        self._ticker.start()
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        faulthandler.cancel_dump_traceback_later()
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        if kind is None:
            state = "complete"
        elif issubclass(kind, BudgetSpentError):
            state = f"incomplete ({error})"
        else:
            state = f"failed ({kind.__name__}: {error})"
        self.say(f"end: {state}")

    def _tick(self) -> None:
        hard = HARD_FACTOR * self.budget_s + STACK_GRACE_S
        while not self._stop.wait(self.tick_s):
            self.say(f"stage {self.label} ({self.count()})")
            if self.elapsed() > hard:
                self.say(f"hung: no return from stage {self.label} in {self.elapsed():.0f} s")
                faulthandler.dump_traceback(file=_stacks(), all_threads=True)
                if self.on_hang is not None:
                    self.on_hang(self)
                os._exit(HUNG_EXIT)


def _stacks() -> TextIO:
    """Where stacks go: standard error, or the process's own when it was swapped for an
    object without a file descriptor (faulthandler writes to descriptors)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stdout
    return sys.stderr
