"""Planning a read against the model's context window before it is sent: one :class:`ReadPlan`.

The window comes from the strategy's ``context_tokens`` (or the runner's setting of that
name), else from the model client (:meth:`scanrag.llm.gateway.LLMClient.context_window_of`:
the model entry, the model's server, litellm's table, an earlier refusal). The request is
counted by the client (the model's tokenizer where it can, an estimate where not); when it
does not fit, :func:`scanrag.agents.fitting.fit` shrinks the pages by the strategy's fallback
mode and the result is counted again until it fits (at most :data:`PLAN_ROUNDS` rounds). No
model call is spent finding out.

:func:`plan_read` returns the plan the reader (:mod:`scanrag.agents.reader`) sends: the pages
as promised and as planned, the input rendered from them (:mod:`scanrag.agents.context` only
renders), the window they were fitted to and the last count, every shrinking round (recorded
by the reader as a ``fallback`` step) and every cut (the configured caps' and the window's,
as :class:`~scanrag.schemas.Reduction` records).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from scanrag.agents.context import ReaderInput, build_input
from scanrag.agents.fitting import Fallback, Fit, estimate_units, fit, page_budget
from scanrag.agents.reductions import input_caps, plan_reductions
from scanrag.llm.fit import SAFETY, check_request_fits, client_count, client_window
from scanrag.llm.types import ChatRequest, ContextOverflowError, ContextWindow, TokenCount
from scanrag.protocols import StrategyContext
from scanrag.schemas import Reduction

PLAN_ROUNDS = 6


def same_fit(a: Fit, b: Fit) -> bool:
    """Whether two fits show the same pages the same way (a planning round changed nothing)."""
    return [r.key for r in a.refs] == [r.key for r in b.refs] and a.options == b.options


async def window_for(
    ctx: StrategyContext, role: str, explicit: int | None = None, source: str = ""
) -> ContextWindow | None:
    """The window a call of ``role`` must fit: ``explicit`` tokens when given, else what the
    model client knows about the role's model (``None``: unknown)."""
    if explicit is not None:
        return ContextWindow(tokens=explicit, source=source or "context_tokens")
    return await client_window(ctx.llm, ctx.model_for(role))


async def check_fits(
    ctx: StrategyContext, request: ChatRequest, role: str, window: ContextWindow | None = None
) -> None:
    """Raise :class:`~scanrag.llm.fit.PlannedOverflowError` when ``request`` plus its
    ``max_tokens`` cannot fit the role's window (nothing happens when the window is unknown)."""
    window = window or await window_for(ctx, role)
    await check_request_fits(ctx.llm, request, window)


def describe_plan(
    window: ContextWindow, count: TokenCount, max_tokens: int, trigger: str
) -> dict[str, Any]:
    """The facts a ``fallback`` step records about a plan."""
    return {
        "trigger": trigger,
        "window_tokens": window.tokens,
        "window_source": window.source,
        "counted_tokens": count.tokens,
        "count_method": count.method,
        "max_tokens": max_tokens,
    }


# --------------------------------------------------------------------------- the plan

Request = Callable[[ReaderInput], ChatRequest]
"""The request a read would send for an input (the prompt around its pages)."""


Output = Literal["citations", "json"]


@dataclass(frozen=True)
class ReaderSpec:
    """How a strategy calls its reader, and what its reads are planned against: the output
    path, the reader's role (whose model's window) and stage (named in the records), the
    reply's ``max_tokens`` and temperature, the fallback mode, the retries after a refusal,
    and a window set by the strategy or the runner (``context_tokens``, named by
    ``context_source``; ``None``: ask the model client)."""

    output: Output = "citations"
    role: str = "reader"
    stage: str = "reader"
    max_tokens: int = 1024
    temperature: float = 0.0
    context_tokens: int | None = None
    fallback: Fallback = "truncate"
    max_retries: int = 3
    context_source: str = "context_tokens"


@dataclass
class ReadPlan:
    """One read's input as planned: what the reader sends and everything planning cut.

    ``promised`` is the input as the strategy asked for it (pages in reading order with their
    priorities, and how they are shown) and ``shown`` its rendering, ``fit`` the input as
    planned (the same, or fewer or shorter pages) and ``input`` the content rendered from it.
    ``window`` is the budget it was fitted to (``None``: unknown, nothing was planned) and
    ``count`` its last count.
    ``caps`` are the cuts the configured caps made to the promised input (characters per
    page, stacked or missing images); ``fallbacks`` the shrinking rounds not yet recorded
    (the reader takes them as ``fallback`` steps); ``causes`` why the input shrank.
    """

    request: Request
    spec: ReaderSpec
    promised: Fit
    shown: ReaderInput
    fit: Fit
    input: ReaderInput
    window: ContextWindow | None
    caps: list[Reduction]
    count: TokenCount | None = None
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        """Whether the last count plus the reply's ``max_tokens`` fits the window (an inexact
        count keeps :data:`~scanrag.llm.fit.SAFETY` headroom; nothing to fit to: it does)."""
        if self.window is None or self.count is None:
            return True
        room = self.window.tokens * (1.0 if self.count.exact else SAFETY)
        return self.count.tokens + self.spec.max_tokens <= room

    @property
    def shrunk(self) -> bool:
        """Whether the planned input is less than the promised one."""
        return not same_fit(self.fit, self.promised)

    async def fit_to(self, ctx: StrategyContext, window: ContextWindow, trigger: str) -> None:
        """Shrink the input until its counted request fits ``window`` (at most
        :data:`PLAN_ROUNDS` rounds; :attr:`fits` tells whether it got there)."""
        self.window = window
        spec = self.spec
        self.count = await client_count(ctx.llm, self.request(self.input))
        for _ in range(PLAN_ROUNDS):
            if self.fits:
                return
            request = self.request(self.input)
            room = page_budget(
                self.count,
                estimate_units(request, self.promised.options.image_tokens),
                self.input.est_tokens,
                spec.max_tokens,
                window.tokens,
            )
            new = fit(self.fit, room, spec.fallback)
            if same_fit(new, self.fit):
                new = fit(self.fit, int(room * 0.8), spec.fallback)
                if same_fit(new, self.fit):
                    return
            facts = describe_plan(window, self.count, spec.max_tokens, trigger)
            self._adopt(ctx, new, trigger, room, facts)
            cause = (
                f"context window of {window.tokens} tokens ({window.source}); the prompt "
                f"counted {self.count.tokens} tokens ({self.count.method}) with max_tokens="
                f"{spec.max_tokens}"
            )
            if cause not in self.causes:
                self.causes.append(cause)
            self.count = await client_count(ctx.llm, self.request(self.input))

    def halve(self, ctx: StrategyContext, exc: ContextOverflowError) -> None:
        """The model refused without naming its window: halve the page content."""
        room = max(1, self.input.est_tokens // 2 + len(self.fit.refs))  # + rounding
        new = fit(self.fit, room, self.spec.fallback)
        self.causes.append(f"the model refused the prompt as too long: {exc.message}")
        self._adopt(ctx, new, "overflow", room, {})

    def _adopt(
        self, ctx: StrategyContext, new: Fit, trigger: str, room: int, facts: dict[str, Any]
    ) -> None:
        """Take ``new`` as the planned input (a round for :attr:`fallbacks`) and render it."""
        data: dict[str, Any] = {
            "stage": self.spec.stage,
            "mode": self.spec.fallback,
            "budget_tokens": room,
            "pages": [r.number for r in self.fit.refs],
            **facts,
            "trigger": trigger,
        }
        kept = {r.key for r in new.refs}
        dropped = [r.number for r in self.fit.refs if r.key not in kept]
        if dropped:
            data["dropped_pages"] = dropped
        before, after = self.fit.options, new.options
        if after.max_chars_per_page != before.max_chars_per_page:
            data["max_chars_per_page"] = after.max_chars_per_page
        if after.max_images != before.max_images:
            data["max_images"] = after.max_images
        self.fallbacks.append(data)
        self.fit = new
        self.input = build_input(new.refs, new.options, ctx.renderer)

    def reductions(self, primary: str | None) -> list[Reduction]:
        """What planning left out of the promised input, one reduction per document
        (``primary``: the id whose reductions name no document)."""
        if not self.shrunk:
            return []
        merged = sum(len(c["pages"]) for c in self.input.composites)
        merged_before = sum(len(c["pages"]) for c in self.shown.composites)
        return plan_reductions(
            (self.promised.refs, self.promised.options),
            (self.fit.refs, self.fit.options),
            cause="; then ".join(self.causes) or "context window",
            stage=self.spec.stage,
            primary=primary,
            limit=self.window.tokens if self.window is not None else None,
            images_merged=max(0, merged - merged_before),
        )


async def plan_read(
    ctx: StrategyContext,
    request: Request,
    promised: Fit,
    spec: ReaderSpec,
    primary: str | None,
) -> ReadPlan:
    """The plan of one read: the promised input rendered, the caps' cuts, the window looked
    up (``spec.context_tokens``, else the model client's) and, when one is known, the input
    fitted to it (``trigger: planned``)."""
    rendered = build_input(promised.refs, promised.options, ctx.renderer)
    caps = input_caps(promised.refs, promised.options, rendered, spec.stage, primary)
    window = await window_for(ctx, spec.role, spec.context_tokens, spec.context_source)
    plan = ReadPlan(request, spec, promised, rendered, promised, rendered, window, caps)
    if window is not None:
        await plan.fit_to(ctx, window, "planned")
    return plan


__all__ = [
    "Output",
    "ReadPlan",
    "ReaderSpec",
    "check_fits",
    "describe_plan",
    "plan_read",
    "window_for",
]
