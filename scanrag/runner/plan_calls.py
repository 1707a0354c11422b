"""The model client of ``scanrag plan``: it plans like the run's client and calls no model.

A :class:`PlanRecorder` wraps the gateway a run would build. Context windows and token counts
are the gateway's own (the model entry's ``context_window``, a server's ``/props``, an
embedded model's tokenizer, a server's tokenize endpoint ...), so every prompt is planned —
and cut, and recorded as a reduction — exactly as the run would plan it. A call is never sent:
each is recorded per grid cell (stage, model, prompt tokens counted by the run's counter, its
``max_tokens``) and then

* a reader's call (any agent role) is answered at once with :data:`FIXED_REPLY`, an answer
  and nothing else, so a strategy that decides as it goes (``agentic_rag``, ``scan``) takes
  the path such a reply leads it on;
* a judge's call fails (``not sent``): the score row is a judge error, and only the calls
  the scorers would make are counted.

:func:`model_price` gives the price per token of a model where it is known: litellm's model
table, an embedded model (free) or a scripted one's ``cost_per_token``.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from scanrag.llm.types import ChatRequest, ChatResponse, ContextWindow, ModelError, TokenCount
from scanrag.schemas import Usage

FIXED_REPLY = '{"answer": "x", "pages": [], "facts": []}'
NOT_SENT = "not sent: scanrag plan makes no model call"


@dataclass
class PlannedCalls:
    """The calls one grid cell would make, for readers (agent roles) or judges."""

    calls: int = 0
    prompt_tokens: int = 0
    max_output_tokens: int = 0
    by_stage: dict[str, int] = field(default_factory=dict)
    by_model: dict[str, list[int]] = field(default_factory=dict)  # model → [tokens, max out]

    def add(self, request: ChatRequest, tokens: int) -> None:
        self.calls += 1
        self.prompt_tokens += tokens
        self.max_output_tokens += request.max_tokens
        self.by_stage[request.stage] = self.by_stage.get(request.stage, 0) + 1
        spent = self.by_model.setdefault(request.model, [0, 0])
        spent[0] += tokens
        spent[1] += request.max_tokens


class PlanRecorder:
    """Records the calls of every grid cell; :meth:`view` is one cell's client."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.readers: dict[str, PlannedCalls] = defaultdict(PlannedCalls)
        self.judges: dict[str, PlannedCalls] = defaultdict(PlannedCalls)
        self.methods: dict[str, str] = {}  # model → how its tokens were counted
        self._lock = threading.Lock()

    def view(self, run_key: str, *, judge: bool = False) -> PlanView:
        return PlanView(self, run_key, judge)

    async def count(self, request: ChatRequest) -> TokenCount:
        counted: TokenCount = await self.client.count_prompt_tokens(request)
        with self._lock:
            self.methods.setdefault(request.model, counted.method)
        return counted

    def record(self, run_key: str, judge: bool, request: ChatRequest, tokens: int) -> None:
        """One call of ``run_key``'s cell, with the ``max_tokens`` the gateway would send (a
        model entry's sampling overrides what the agent or judge asks for)."""
        resolve = getattr(self.client, "resolve", None)
        sent = resolve(request) if callable(resolve) else request
        planned = request.model_copy(update={"max_tokens": sent.max_tokens})
        with self._lock:
            (self.judges if judge else self.readers)[run_key].add(planned, tokens)


@dataclass
class PlanView:
    """One grid cell's model client during planning (see the module docstring)."""

    recorder: PlanRecorder
    run_key: str
    judge: bool

    async def context_window_of(self, model: str) -> ContextWindow | None:
        window: ContextWindow | None = await self.recorder.client.context_window_of(model)
        return window

    async def count_prompt_tokens(self, request: ChatRequest) -> TokenCount:
        return await self.recorder.count(request)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        tokens = (await self.recorder.count(request)).tokens  # kept: not counted twice
        self.recorder.record(self.run_key, self.judge, request, tokens)
        if self.judge:
            raise ModelError(request.model, NOT_SENT)
        usage = Usage(calls=1, prompt_tokens=tokens)
        return ChatResponse(text=FIXED_REPLY, model=request.model, usage=usage)


def model_price(client: Any, model: str) -> tuple[float, float] | None:
    """USD per input and per output token of ``model`` (a model string or an entry's ref),
    ``None`` where unknown: litellm's model table; an embedded model costs nothing; a scripted
    one its ``cost_per_token``."""
    entry = client.entry_for(model) if hasattr(client, "entry_for") else None
    name = entry.model if entry is not None else model
    prefix, _, rest = name.partition("/")
    if prefix == "local":
        return 0.0, 0.0
    if prefix == "scripted":
        from scanrag.llm.scripted import get_scripted

        try:
            per_token = float(get_scripted(rest).cost_per_token)
        except Exception:  # not registered: preflight said so
            return None
        return per_token, per_token
    from scanrag.llm.providers import _setup_litellm

    try:
        info = _setup_litellm().get_model_info(name)
    except Exception:  # a model litellm's table does not list (a server of your own)
        return None
    price_in, price_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if price_in is None or price_out is None:
        return None
    return float(price_in), float(price_out)
