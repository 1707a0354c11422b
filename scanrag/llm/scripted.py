"""A deterministic chat model for tests: queued or computed replies, every request recorded.

``ScriptedModel`` implements ``ChatModel`` directly. Registered under a name with
``register_scripted``, it is also reachable through the gateway as ``scripted/<name>``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable

from scanrag.llm.types import (
    ChatRequest,
    ChatResponse,
    ContextOverflowError,
    ContextWindow,
    ModelError,
    TokenCount,
)
from scanrag.schemas import Usage

Reply = str | Exception | Callable[[ChatRequest], str]

_SCRIPTED: dict[str, ScriptedModel] = {}


def _count_tokens(text: str) -> int:
    """A rough, deterministic token count: whitespace-separated pieces."""
    return len(text.split())


class ScriptedModel:
    """Answers from a queue of replies, or from ``responder`` once the queue is empty.

    A reply may be a string, an exception instance (raised for that call) or a function of
    the request returning a string. With neither queue nor responder left, a call raises
    ``ModelError`` so a test never hangs or silently gets an empty answer.

    ``context_window`` (tokens, counted as whitespace-separated pieces like its usage) makes
    it refuse a longer prompt plus ``max_tokens`` as a server would (``ContextOverflowError``),
    and report that window to the gateway (:mod:`scanrag.llm.context`). ``cap_replies`` cuts a
    reply longer than the request's ``max_tokens`` (counted the same way) there and answers
    ``finish_reason: length``, as a server does with a model that rambles.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Callable[[ChatRequest], str] | None = None,
        name: str = "scripted/test",
        delay_s: float = 0.0,
        cost_per_token: float = 0.0,
        context_window: int | None = None,
        cap_replies: bool = False,
    ) -> None:
        self.name = name
        self.cap_replies = cap_replies
        self.context_window = context_window
        self.replies: deque[Reply] = deque(replies)
        self.responder = responder
        self.delay_s = delay_s
        self.cost_per_token = cost_per_token
        self.requests: list[ChatRequest] = []

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _next_reply(self, request: ChatRequest) -> str:
        if self.replies:
            reply = self.replies.popleft()
        elif self.responder is not None:
            reply = self.responder
        else:
            raise ModelError(request.model, "scripted model has no reply left")
        if isinstance(reply, Exception):
            raise reply
        return reply(request) if callable(reply) else reply

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        prompt_tokens = self.prompt_tokens(request)
        window = self.context_window
        if window is not None and prompt_tokens + request.max_tokens > window:
            raise ContextOverflowError(
                request.model,
                f"prompt of {prompt_tokens} tokens plus max_tokens={request.max_tokens} "
                f"exceeds the context window of {window} tokens",
            )
        text = self._next_reply(request)
        finish = "stop"
        if self.cap_replies and _count_tokens(text) > request.max_tokens:
            text, finish = " ".join(text.split()[: request.max_tokens]), "length"
        completion_tokens = _count_tokens(text)
        usage = Usage(
            calls=1,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=(prompt_tokens + completion_tokens) * self.cost_per_token,
        )
        return ChatResponse(
            text=text,
            model=request.model,
            usage=usage,
            prompt_hash=request.prompt_hash,
            finish_reason=finish,
        )

    @staticmethod
    def prompt_tokens(request: ChatRequest) -> int:
        """The scripted token count of a request's messages (whitespace-separated pieces)."""
        return sum(_count_tokens(m.text) for m in request.messages)

    async def context_window_of(self, model: str) -> ContextWindow | None:
        """The window set at construction (the same for every model name)."""
        window = self.context_window
        return None if window is None else ContextWindow(tokens=window, source="scripted model")

    async def count_prompt_tokens(self, request: ChatRequest) -> TokenCount:
        """The count :meth:`chat` checks against the window (exact for this model)."""
        return TokenCount(tokens=self.prompt_tokens(request), method="scripted", exact=True)


def register_scripted(name: str, model: ScriptedModel) -> ScriptedModel:
    """Make ``model`` reachable through the gateway as ``scripted/<name>``."""
    _SCRIPTED[name] = model
    return model


def get_scripted(name: str) -> ScriptedModel:
    try:
        return _SCRIPTED[name]
    except KeyError:
        known = ", ".join(sorted(_SCRIPTED)) or "(none)"
        msg = f"no scripted model registered; known: {known}"
        raise ModelError(f"scripted/{name}", msg) from None


def scripted_names() -> list[str]:
    """The names registered with :func:`register_scripted`."""
    return sorted(_SCRIPTED)


def clear_scripted() -> None:
    _SCRIPTED.clear()
