"""Usage accounting for the runner: per-stage tallies, a metering model wrapper, the budget.

Every model call a strategy or a judge makes goes through :class:`MeteredModel`, which adds the
response's usage to one or more :class:`UsageTally` objects under the request's ``stage``.
Responses served from the gateway cache count as cached calls and cost nothing; only fresh
tokens and dollars count against the :class:`Budget`.

Time: :class:`MeteredModel` also times each call. Of a call's wall time, the part the model
client reports as the call's own (``ChatResponse.latency_s``) is *model* time and the rest is
*wait* time (queueing before the client starts the call, cache look-ups); a cache hit and a
failed call count whole as wait, a client that reports no latency counts whole as model. The
runner stamps both sums on each trajectory as ``timings["model"]`` and ``timings["wait"]``.
Counting a prompt's tokens before sending it (``count_prompt_tokens``: a server's tokenize
endpoint, an embedded model's tokenizer) is timed apart, as *count* time
(``timings["count"]``): it happens outside the call, and on a long document it can take
longer than the call itself.
The gateway measures ``latency_s`` on the attempt that succeeded, from the moment the call
holds its concurrency slots (a local model runs one call at a time: its slot is the model),
so queueing for a slot, failed attempts and retry back-off all land in wait time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from scanrag.llm.types import ChatModel, ChatRequest, ChatResponse
from scanrag.runner.outcome import Stop, StopKind
from scanrag.schemas import Usage


class UsageTally:
    """Thread-safe usage per model stage (``reader``, ``planner``, ``judge.answer`` ...)."""

    def __init__(self, by_stage: Mapping[str, Usage] | None = None) -> None:
        self._lock = threading.Lock()
        self.by_stage: dict[str, Usage] = dict(by_stage or {})
        self.model_s = 0.0
        self.wait_s = 0.0
        self.count_s = 0.0

    def add_time(self, model_s: float, wait_s: float) -> None:
        """Seconds of one call: model time and time spent waiting around it."""
        with self._lock:
            self.model_s += model_s
            self.wait_s += wait_s

    def add_count_time(self, seconds: float) -> None:
        """Seconds spent counting a prompt's tokens before a call."""
        with self._lock:
            self.count_s += seconds

    def timings(self) -> dict[str, float]:
        """``{"model": s, "wait": s, "count": s}`` summed over the calls tallied so far."""
        with self._lock:
            return {
                "model": round(self.model_s, 4),
                "wait": round(self.wait_s, 4),
                "count": round(self.count_s, 4),
            }

    def add(self, stage: str, usage: Usage) -> None:
        with self._lock:
            self.by_stage[stage] = self.by_stage.get(stage, Usage()).add(usage)

    def merge(self, by_stage: Mapping[str, Usage]) -> None:
        for stage, usage in by_stage.items():
            self.add(stage, usage)

    def total(self) -> Usage:
        with self._lock:
            return Usage.sum(self.by_stage.values())

    def snapshot(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self.by_stage)

    def to_json(self) -> dict[str, Any]:
        snap = self.snapshot()
        data: dict[str, Any] = {k: v.model_dump() for k, v in sorted(snap.items())}
        data["total"] = self.total().model_dump()
        return data


def billable(usage: Usage, cached: bool) -> Usage:
    """The usage a response adds to the budget: none of its tokens or cost when cached."""
    if not cached:
        return usage
    return Usage(calls=usage.calls or 1, cached_calls=max(usage.cached_calls, 1))


class MeteredModel:
    """A ``ChatModel`` that records every response's usage into the given tallies."""

    def __init__(self, inner: ChatModel, tallies: Iterable[UsageTally]) -> None:
        self.inner = inner
        self.tallies = list(tallies)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        try:
            response = await self.inner.chat(request)
        except BaseException:
            self._time(time.perf_counter() - started, 0.0)
            raise
        wall = time.perf_counter() - started
        # a cache hit took no model time; a client that reports no latency spent it all
        latency = 0.0 if response.cached else (response.latency_s or wall)
        self._time(wall, latency)
        usage = billable(response.usage, response.cached)
        for tally in self.tallies:
            tally.add(request.stage, usage)
        return response

    def _time(self, wall: float, latency: float) -> None:
        model = min(max(0.0, latency), wall)
        for tally in self.tallies:
            tally.add_time(model, wall - model)

    def __getattr__(self, name: str) -> Any:  # expose the gateway's extras (ledger, cache...)
        found = getattr(self.inner, name)
        return self._timed_count(found) if name == "count_prompt_tokens" else found

    def _timed_count(self, count: Callable[[ChatRequest], Awaitable[Any]]) -> Any:
        """``count_prompt_tokens`` of the inner client, its seconds added as count time."""

        async def timed(request: ChatRequest) -> Any:
            started = time.perf_counter()
            try:
                return await count(request)
            finally:
                for tally in self.tallies:
                    tally.add_count_time(time.perf_counter() - started)

        return timed


class Budget:
    """Optional limits in USD and tokens over the whole run (earlier sessions included)."""

    def __init__(self, usd: float | None = None, tokens: int | None = None) -> None:
        self.usd = usd
        self.tokens = tokens

    @property
    def enabled(self) -> bool:
        return self.usd is not None or self.tokens is not None

    def exceeded(self, spent: Usage) -> Stop | None:
        """The stop once the budget is used up, or ``None`` while there is room left."""
        if self.usd is not None and spent.cost_usd >= self.usd:
            message = f"budget reached: spent ${spent.cost_usd:.4f} of ${self.usd:.4f}"
        elif self.tokens is not None and spent.total_tokens >= self.tokens:
            message = f"budget reached: used {spent.total_tokens} of {self.tokens} tokens"
        else:
            return None
        return Stop(StopKind.BUDGET, message)

    def describe(self) -> dict[str, Any]:
        return {"usd": self.usd, "tokens": self.tokens}


def usage_from_json(data: Mapping[str, Any] | None) -> dict[str, Usage]:
    """Per-stage usage from a JSON mapping (a trajectory's ``usage`` field)."""
    return {k: Usage.model_validate(v) for k, v in (data or {}).items() if k != "total"}
