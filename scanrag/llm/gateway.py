"""``LLMClient``: the one async entry point for every model call in ScanRAG.

Per call it (1) answers from the on-disk cache when it can, (2) otherwise waits for a slot
under the per-provider and the global concurrency bounds, (3) calls the provider, retrying
rate limits, 5xx, timeouts and connection errors with exponential backoff, (4) stores the
answer in the cache and (5) records model, stage, prompt hash and usage in the ledger.

Cache hits: ``cached=True``; usage has ``calls=1, cached_calls=1``, the original token counts
(so token statistics match a fresh run) and ``cost_usd=0`` (nothing was paid). The original
cost is kept in the ledger as ``saved_usd``. Scripted models are not cached unless
``CacheOptions.scripted``, since tests expect a fresh answer per call.

Model entries (:class:`~scanrag.llm.endpoints.ModelEntry`, given as ``endpoints``): a request
whose ``model`` is an entry's ``ref`` is sent to that entry's model and server, with its sampling
and output mode; the entry's ``timeout_s`` and ``max_concurrency`` bound its calls. The cache
key covers the resolved call (server host and path, model, every sampling parameter), so the
same prompt to another server or with other sampling is a miss.

Context: :meth:`LLMClient.context_window_of` and :meth:`LLMClient.count_prompt_tokens` tell a
strategy, before it calls, how large the model's window is and how many tokens a request
takes (:mod:`scanrag.llm.context`); a window named by a refused call is remembered for the
model. Cache hits carry ``cached_from``: the run that stored them (``origin``).

Errors: an unknown model or a provider failure (after the retries) raises ``ModelError`` with
one line naming the model (and server), what went wrong and the limit that ended it (the
timeout, the retries); a prompt that does not fit raises ``ContextOverflowError``. A server's
``Retry-After`` sets the wait before the next try, capped at ``RetryPolicy.retry_after_max_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping

from scanrag.hashing import stable_hash
from scanrag.llm.cache import ResponseCache
from scanrag.llm.context import ContextProbe
from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.ledger import CallRecord, UsageLedger
from scanrag.llm.options import CacheOptions, CallLimits, RetryPolicy
from scanrag.llm.providers import Provider, provider_for
from scanrag.llm.retry import ErrorKind, classify, retry_after_s
from scanrag.llm.retry import describe as describe_error
from scanrag.llm.types import (
    ChatRequest,
    ChatResponse,
    ContextOverflowError,
    ContextWindow,
    ModelError,
    TokenCount,
)
from scanrag.schemas import Usage

Sleep = Callable[[float], Awaitable[None]]

UNKNOWN_MODEL_HINT = (
    "use a litellm model string (e.g. 'openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest'),"
    " 'local/<name>' for an embedded model ({local}) or 'scripted/<name>' in tests"
)


class _LoopSlots:
    """The semaphores of one event loop (asyncio primitives are bound to their loop)."""

    def __init__(
        self, total: int, per_provider: Mapping[str, int], per_entry: Mapping[str, int]
    ) -> None:
        self.total = asyncio.Semaphore(total)
        self.per_provider = {k: asyncio.Semaphore(v) for k, v in per_provider.items()}
        self.per_entry = {k: asyncio.Semaphore(v) for k, v in per_entry.items()}


def prompt_hash_of(request: ChatRequest) -> str:
    """The request's prompt hash, or a hash of its messages when the caller gave none."""
    if request.prompt_hash:
        return request.prompt_hash
    return stable_hash([m.model_dump(mode="json") for m in request.messages])


def _unknown_model_message(model: str, detail: str) -> str:
    from scanrag.llm.local_models import local_model_names

    local = ", ".join(f"local/{n}" for n in local_model_names())
    if model.startswith("local/"):
        return f"unknown local model; known local models: {local}"
    return f"unknown model ({detail}); " + UNKNOWN_MODEL_HINT.format(local=local)


def model_label(request: ChatRequest) -> str:
    """How errors name a resolved call: the model, and the server when it has one."""
    entry = request.endpoint
    where = entry.endpoint() if entry is not None else None
    return f"{request.model} at {where}" if where else request.model


def _final_error(
    exc: Exception, kind: ErrorKind, request: ChatRequest, attempts: int, limits: str
) -> ModelError:
    """The error a failed call ends with (``exc`` itself when it already is the right one)."""
    label = model_label(request)
    detail = describe_error(exc, request.model, _timeout_of(exc))
    if kind is ErrorKind.OVERFLOW:
        return exc if isinstance(exc, ContextOverflowError) else ContextOverflowError(label, detail)
    if kind is ErrorKind.UNKNOWN_MODEL:
        return ModelError(label, _unknown_model_message(request.model, detail))
    if kind is ErrorKind.FATAL:
        return exc if isinstance(exc, ModelError) else ModelError(label, detail)
    tries = f"gave up after {attempts} attempt(s)"
    return ModelError(label, f"{detail}; {tries} ({limits})", retryable=True)


class CallTimeoutError(TimeoutError):
    """The gateway's own per-call timeout, with its limit."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        super().__init__(f"timed out after {limit:g} s")


def _timeout_of(exc: BaseException) -> float | None:
    return exc.limit if isinstance(exc, CallTimeoutError) else None


class LLMClient:
    """Async chat client over litellm, the embedded local models and scripted test models."""

    def __init__(
        self,
        endpoints: Mapping[str, ModelEntry] | None = None,
        *,
        cache: CacheOptions | None = None,
        limits: CallLimits | None = None,
        retries: RetryPolicy | None = None,
        ledger: UsageLedger | None = None,
        rng: random.Random | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        """``endpoints``: the config's model entries by ref; ``cache``, ``limits`` and
        ``retries``: the option objects of :mod:`scanrag.llm.options` (defaults: no cache, 4
        calls in flight, 4 retries); ``ledger``, ``rng`` (the backoff's jitter) and ``sleep``
        (the waits between tries) are for tests."""
        self.endpoints: dict[str, ModelEntry] = dict(endpoints or {})
        self.cache_options = cache or CacheOptions()
        folder, origin = self.cache_options.folder, self.cache_options.origin
        self.cache = ResponseCache(folder, origin=origin) if folder is not None else None
        self.limits = limits or CallLimits()
        self.retries = retries or RetryPolicy()
        self.backoff = self.retries.backoff(rng)
        self.probe = ContextProbe()
        self.ledger = ledger if ledger is not None else UsageLedger()
        self._sleep: Sleep = sleep or asyncio.sleep
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSlots] = (
            weakref.WeakKeyDictionary()
        )
        self._slots_lock = threading.Lock()

    # ------------------------------------------------------------------ public

    def resolve(self, request: ChatRequest) -> ChatRequest:
        """``request`` as it will be sent: an entry's ``ref`` becomes the entry's model, its
        set sampling fields override the request's, and the entry rides along as ``endpoint``."""
        entry = self.endpoints.get(request.model)
        if entry is None or request.endpoint is not None:
            return request
        return request.model_copy(
            update={"model": entry.model, **entry.sampling(), "endpoint": entry}
        )

    def entry_for(self, model: str) -> ModelEntry:
        """The model entry a role's model string names (a plain entry for a bare string)."""
        return self.endpoints.get(model) or ModelEntry(model=model)

    async def context_window_of(self, model: str) -> ContextWindow | None:
        """The context window of ``model`` (a model string or an entry's ref), or ``None``
        when neither its entry, its server, litellm nor an earlier refusal tells."""
        if not model.strip():
            return None
        return await self.probe.window(self.entry_for(model))

    async def count_prompt_tokens(self, request: ChatRequest) -> TokenCount:
        """Tokens ``request``'s messages take for its model, counted before any call."""
        return await self.probe.count(self.entry_for(request.model), request)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        if not request.model.strip():
            raise ModelError(request.model, _unknown_model_message(request.model, "empty name"))
        call = self.resolve(request)
        provider = provider_for(call.model)
        phash = prompt_hash_of(request)
        key = call.cache_key()
        use_cache = self.cache is not None and (provider.cacheable or self.cache_options.scripted)
        if use_cache:
            hit = await self._cache_get(key)
            if hit is not None:
                return self._served_from_cache(request, hit, key, phash)
        started = time.perf_counter()
        try:
            response, attempts = await self._call_with_retries(provider, call, request.model)
        except ModelError as exc:
            if isinstance(exc, ContextOverflowError):
                self.probe.learn(self.entry_for(request.model), str(exc))
            self._record(request, key, phash, Usage(calls=1), started, error=str(exc))
            raise
        response = response.model_copy(update={"prompt_hash": phash})
        if use_cache:
            await self._cache_put(key, response)
        self._record(request, key, phash, response.usage, started, attempts=attempts)
        return response

    # ------------------------------------------------------------------ cache

    async def _cache_get(self, key: str) -> ChatResponse | None:
        assert self.cache is not None
        return await asyncio.to_thread(self.cache.get, key)

    async def _cache_put(self, key: str, response: ChatResponse) -> None:
        assert self.cache is not None
        await asyncio.to_thread(self.cache.put, key, response)

    def _served_from_cache(
        self, request: ChatRequest, hit: ChatResponse, key: str, phash: str
    ) -> ChatResponse:
        usage = hit.usage.model_copy(update={"calls": 1, "cached_calls": 1, "cost_usd": 0.0})
        response = hit.model_copy(
            update={"usage": usage, "cached": True, "latency_s": 0.0, "prompt_hash": phash}
        )
        self.ledger.record(
            CallRecord(
                model=request.model,
                stage=request.stage,
                prompt_hash=phash,
                cache_key=key,
                usage=usage,
                cached=True,
                saved_usd=hit.usage.cost_usd,
                attempts=0,
            )
        )
        return response

    # ------------------------------------------------------------------ calling

    def _loop_slots(self) -> _LoopSlots:
        loop = asyncio.get_running_loop()
        with self._slots_lock:
            slots = self._slots.get(loop)
            if slots is None:
                per_entry = {
                    ref: e.max_concurrency
                    for ref, e in self.endpoints.items()
                    if e.max_concurrency is not None
                }
                limits = self.limits
                slots = _LoopSlots(limits.max_concurrency, limits.providers(), per_entry)
                self._slots[loop] = slots
            return slots

    def timeout_for(self, call: ChatRequest) -> float:
        entry = call.endpoint
        return entry.timeout_s if entry is not None and entry.timeout_s else self.retries.timeout_s

    async def _attempt(self, provider: Provider, call: ChatRequest, ref: str) -> ChatResponse:
        """One provider call under the entry's, the provider's and the global bounds."""
        slots = self._loop_slots()
        entry = call.endpoint
        group_key = provider.concurrency_key(call.model)
        if entry is not None and entry.api_base is not None:
            group_key = entry.endpoint() or group_key  # a server of its own: its own bound
        group = slots.per_provider.get(group_key)
        own = slots.per_entry.get(ref)
        limit = self.timeout_for(call)
        async with own or contextlib.nullcontext(), group or contextlib.nullcontext(), slots.total:
            timeout = provider.call_timeout(call.model, limit)
            started = time.perf_counter()  # model time starts once the call holds its slots
            coro = provider.complete(call, limit)
            try:
                response = await (coro if timeout is None else asyncio.wait_for(coro, timeout))
            except TimeoutError as exc:
                if timeout is None:  # the provider's own timeout: keep its message
                    raise
                raise CallTimeoutError(timeout) from exc
        return response.model_copy(update={"latency_s": time.perf_counter() - started})

    async def _call_with_retries(
        self, provider: Provider, call: ChatRequest, ref: str
    ) -> tuple[ChatResponse, int]:
        asked = 0.0  # the longest Retry-After a server gave
        for attempt in range(self.retries.max_retries + 1):
            try:
                return await self._attempt(provider, call, ref), attempt + 1
            except Exception as exc:
                kind = classify(exc)
                wait_hint = retry_after_s(exc)
                asked = max(asked, wait_hint or 0.0)
                if kind is not ErrorKind.RETRY or attempt >= self.retries.max_retries:
                    limits = self._limits(call, asked)
                    error = _final_error(exc, kind, call, attempt + 1, limits)
                    if error is exc:
                        raise
                    raise error from exc
                await self._sleep(self.backoff.delay(attempt, wait_hint))
        raise AssertionError("unreachable")  # pragma: no cover

    def _limits(self, call: ChatRequest, retry_after_asked: float) -> str:
        parts = [
            f"max_retries={self.retries.max_retries}",
            f"timeout_s={self.timeout_for(call):g}",
        ]
        cap = self.backoff.retry_after_max_s
        if retry_after_asked > cap:
            parts.append(f"server asked to wait {retry_after_asked:g} s, capped at {cap:g} s")
        return ", ".join(parts)

    # ------------------------------------------------------------------ accounting

    def _record(
        self,
        request: ChatRequest,
        key: str,
        phash: str,
        usage: Usage,
        started: float,
        *,
        attempts: int = 1,
        error: str | None = None,
    ) -> None:
        self.ledger.record(
            CallRecord(
                model=request.model,
                stage=request.stage,
                prompt_hash=phash,
                cache_key=key,
                usage=usage,
                latency_s=time.perf_counter() - started,
                attempts=attempts,
                error=error,
            )
        )

    def describe(self) -> dict[str, object]:
        """Settings for run manifests."""
        return {
            "cache": str(self.cache.path) if self.cache else None,
            "max_concurrency": self.limits.max_concurrency,
            "per_provider_concurrency": self.limits.providers(),
            "max_retries": self.retries.max_retries,
            "timeout_s": self.retries.timeout_s,
            "retry_after_max_s": self.retries.retry_after_max_s,
        }


__all__ = ["LLMClient", "model_label", "prompt_hash_of"]
