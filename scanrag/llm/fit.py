"""Does a request fit its model's context window? Asked of the model client, before sending.

Used by every caller that must not learn the window from a refused call: the strategies'
readers (``scanrag.agents.planning``) and the judges (``scanrag.evaluation.judging``). The client is
any :class:`~scanrag.llm.types.ChatModel`; one that also offers ``context_window_of(model)`` and
``count_prompt_tokens(request)`` (the gateway, :class:`~scanrag.llm.gateway.LLMClient`) is
asked, anything else plans nothing and the call decides.
"""

from __future__ import annotations

from typing import Any

from scanrag.llm.context import CHARS_PER_TOKEN, estimate_request
from scanrag.llm.types import ChatRequest, ContextOverflowError, ContextWindow, TokenCount

SAFETY = 0.97  # headroom left when a count is not exact


class PlannedOverflowError(ContextOverflowError):
    """A request that does not fit the model's window, found before sending it."""


async def client_window(llm: Any, model: str) -> ContextWindow | None:
    """The window ``llm`` knows for ``model``; ``None`` when it cannot tell."""
    probe = getattr(llm, "context_window_of", None)
    if probe is None:
        return None
    try:
        found = await probe(model)
    except Exception:  # a client that cannot tell: plan nothing, the call decides
        return None
    return found if isinstance(found, ContextWindow) else None


async def client_count(llm: Any, request: ChatRequest) -> TokenCount:
    """Tokens of ``request`` as ``llm`` counts them (else the character estimate)."""
    counter = getattr(llm, "count_prompt_tokens", None)
    if counter is not None:
        try:
            counted = await counter(request)
            if isinstance(counted, TokenCount):
                return counted
        except Exception:  # fall back on the estimate
            pass
    method = f"estimate (characters / {CHARS_PER_TOKEN})"
    return TokenCount(tokens=estimate_request(request), method=method)


def overflow_text(count: TokenCount, max_tokens: int, window: ContextWindow) -> str:
    """``prompt of 3100 tokens (counted by ...) plus max_tokens=256 exceeds the context
    window of 2048 tokens (...)``: how a planned overflow reads."""
    return (
        f"prompt of {count.tokens} tokens ({count.method}) plus max_tokens={max_tokens} exceeds "
        f"the context window of {window.tokens} tokens ({window.source})"
    )


async def check_request_fits(
    llm: Any, request: ChatRequest, window: ContextWindow | None = None
) -> None:
    """Raise :class:`PlannedOverflowError` when ``request`` plus its ``max_tokens`` cannot fit
    ``window`` (by default the one ``llm`` knows for the request's model; nothing happens
    when no window is known). An inexact count keeps :data:`SAFETY` headroom."""
    window = window or await client_window(llm, request.model)
    if window is None:
        return
    count = await client_count(llm, request)
    need = count.tokens + request.max_tokens
    if need > window.tokens * (1.0 if count.exact else SAFETY):
        raise PlannedOverflowError(
            request.model, overflow_text(count, request.max_tokens, window), retryable=False
        )
