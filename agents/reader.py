"""The reader node: pages in, a parsed reply out, planned against the model's context window.

``read_pages`` builds the input (``scanrag.agents.context``), counts it against the model's window
before sending (``scanrag.agents.planning``: the window from ``context_tokens`` or the model client,
the count from the model's tokenizer where the client has it) and, when it does not fit,
shrinks it by the strategy's fallback mode:

* ``truncate`` — one character cap for every page (and fewer page images), the last pages
  left out once the cap would fall below ``MIN_CHARS_PER_PAGE``;
* ``drop`` — leave out the lowest-priority pages (top-k RAG: the worst-ranked hits).

A model that still refuses the prompt (``ContextOverflowError``: the window was unknown, or
the count an estimate) teaches the client its window when the refusal names it, and the
input is planned again. Every shrink is a ``fallback`` step; what it left out, and what the
caps (``max_chars_per_page``, ``max_images``) left out, are ``Trajectory.reductions``
(``scanrag.agents.reductions``). Under ``runner.on_degraded: fail`` a degraded input is not sent. A
model failure marks the trajectory ``model_error`` and returns no parse; nothing here raises
for a per-item failure unless asked to (``raise_model_errors``, ``raise_overflow``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scanrag.agents.citations import parse_citations
from scanrag.agents.common import add_step, build_request, call_model
from scanrag.agents.context import ContextOptions, PageRef, ReaderInput, build_input
from scanrag.agents.evidence import ParseContext, ParsedOutput
from scanrag.agents.planning import (
    PLAN_ROUNDS,
    Fit,
    count_request,
    describe_plan,
    estimate_units,
    fit,
    page_budget,
    same_fit,
    window_for,
)
from scanrag.agents.prompts.base import Prompt
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.reductions import (
    DegradedInputError,
    degraded_message,
    fails_on_degraded,
    plan_reductions,
    record_input_caps,
    stop_if_degraded,
)
from scanrag.agents.reply import note_finish
from scanrag.agents.structured import parse_structured, schema_for
from scanrag.llm.context import window_in_error
from scanrag.llm.fit import SAFETY, PlannedOverflowError, overflow_text
from scanrag.llm.types import (
    ChatRequest,
    ContentPart,
    ContextOverflowError,
    ContextWindow,
    ModelError,
    TextPart,
    TokenCount,
)
from scanrag.protocols import StrategyContext
from scanrag.schemas import Status, Trajectory
from scanrag.tasks import TaskSpec

Output = Literal["citations", "json"]
Fallback = Literal["truncate", "drop"]


@dataclass(frozen=True)
class ReaderSpec:
    """How a strategy calls its reader (``context_tokens``: a window set by the strategy or
    the runner, named by ``context_source``; ``None``: ask the model client)."""

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
class ReadResult:
    """A read's parsed reply (``None`` when it failed), raw text, pages shown and error."""

    parsed: ParsedOutput | None
    raw: str | None
    pages: list[tuple[str, int]]
    error: str | None = None


def parse_reply(
    text: str, output: str, context: ParseContext | None, finish_reason: str | None = None
) -> ParsedOutput:
    """Parse a reader reply on its output path (``json`` or the citation grammar) and note a
    reply cut by the token limit (``finish_reason == "length"``)."""
    parsed = parse_structured(text, context) if output == "json" else parse_citations(text, context)
    return note_finish(parsed, finish_reason)


class _Reading:
    """One ``read_pages`` call's working state: the input as promised, the input as planned
    and every cause that shrank it."""

    def __init__(
        self,
        ctx: StrategyContext,
        trajectory: Trajectory,
        spec: ReaderSpec,
        request: Callable[[ReaderInput], ChatRequest],
        start: Fit,
        primary: str | None,
    ) -> None:
        self.ctx = ctx
        self.trajectory = trajectory
        self.spec = spec
        self.request = request
        self.base = start
        self.current = start
        self.primary = primary
        self.causes: list[str] = []
        self.inp = build_input(start.refs, start.options, ctx.renderer)
        self.base_merged = sum(len(c["pages"]) for c in self.inp.composites)
        self.image_tokens = start.options.image_tokens

    def rebuild(self, new: Fit, trigger: str, budget: int, facts: dict[str, Any]) -> None:
        """Adopt ``new`` (recorded as a ``fallback`` step) and build its input."""
        before = [r.number for r in self.current.refs]
        kept = {r.key for r in new.refs}
        data: dict[str, Any] = {
            "stage": self.spec.stage,
            "mode": self.spec.fallback,
            "budget_tokens": budget,
            "pages": before,
            **facts,
            "trigger": trigger,
        }
        dropped = [r.number for r in self.current.refs if r.key not in kept]
        if dropped:
            data["dropped_pages"] = dropped
        if new.options.max_chars_per_page != self.current.options.max_chars_per_page:
            data["max_chars_per_page"] = new.options.max_chars_per_page
        if new.options.max_images != self.current.options.max_images:
            data["max_images"] = new.options.max_images
        add_step(self.trajectory, "fallback", data)
        self.current = new
        self.inp = build_input(new.refs, new.options, self.ctx.renderer)

    async def plan(self, window: ContextWindow, trigger: str) -> tuple[bool, TokenCount]:
        """Shrink the input until its counted request fits ``window``; whether it fits."""
        count = await count_request(self.ctx, self.request(self.inp))
        for _ in range(PLAN_ROUNDS):
            if _fits(count, self.spec.max_tokens, window):
                return True, count
            request = self.request(self.inp)
            budget = page_budget(
                count,
                estimate_units(request, self.image_tokens),
                self.inp.est_tokens,
                self.spec.max_tokens,
                window.tokens,
            )
            new = fit(self.current, budget, self.spec.fallback)
            if same_fit(new, self.current):
                new = fit(self.current, int(budget * 0.8), self.spec.fallback)
                if same_fit(new, self.current):
                    return False, count
            facts = describe_plan(window, count, self.spec.max_tokens, trigger)
            self.rebuild(new, trigger, budget, facts)
            cause = (
                f"context window of {window.tokens} tokens ({window.source}); the prompt "
                f"counted {count.tokens} tokens ({count.method}) with max_tokens="
                f"{self.spec.max_tokens}"
            )
            if cause not in self.causes:
                self.causes.append(cause)
            count = await count_request(self.ctx, self.request(self.inp))
        return _fits(count, self.spec.max_tokens, window), count

    def halve(self, exc: ContextOverflowError) -> None:
        """The model refused without naming its window: halve the page content."""
        budget = max(1, self.inp.est_tokens // 2 + len(self.current.refs))  # + rounding
        new = fit(self.current, budget, self.spec.fallback)
        self.causes.append(f"the model refused the prompt as too long: {exc.message}")
        self.rebuild(new, "overflow", budget, {})

    @property
    def shrunk(self) -> bool:
        return not same_fit(self.current, self.base)

    def record(self, window: ContextWindow | None) -> None:
        """The reductions from the input as promised to the input as sent."""
        if not self.shrunk:
            return
        merged_after = sum(len(c["pages"]) for c in self.inp.composites)
        for reduction in plan_reductions(
            (self.base.refs, self.base.options),
            (self.current.refs, self.current.options),
            cause="; then ".join(self.causes) or "context window",
            stage=self.spec.stage,
            primary=self.primary,
            limit=window.tokens if window is not None else None,
            images_merged=max(0, merged_after - self.base_merged),
        ):
            self.trajectory.reduce(reduction)


def _fits(count: TokenCount, max_tokens: int, window: ContextWindow) -> bool:
    room = window.tokens * (1.0 if count.exact else SAFETY)
    return count.tokens + max_tokens <= room


async def read_pages(
    ctx: StrategyContext,
    trajectory: Trajectory,
    refs: Sequence[PageRef],
    *,
    question: str,
    task: TaskSpec,
    spec: ReaderSpec,
    options: ContextOptions,
    parse_ctx: ParseContext | None,
    extra: str = "",
    task_input: str = "",
    prompt: Prompt | None = None,
    priority: Sequence[int] | None = None,
    step_kind: str = "read",
    step_data: dict[str, Any] | None = None,
    raise_model_errors: bool = False,
    raise_overflow: bool = False,
) -> ReadResult:
    """Read ``refs`` and parse the reply; failures are recorded on ``trajectory``.

    ``raise_model_errors`` lets a ``ModelError`` propagate instead (a checkpointed graph must
    not commit a failed node); ``raise_overflow`` hands an input that does not fit (planned,
    or refused by the model) to the caller, for strategies that fall back by splitting their
    input rather than cutting it.
    """
    prompt = prompt or reader_prompt(spec.output, task)
    question_text = prompt.render_user(extra=extra, task_input=task_input, question=question)
    schema = schema_for(task) if spec.output == "json" else None

    def request(inp: ReaderInput) -> ChatRequest:
        return build_request(
            ctx,
            prompt=prompt,
            user=_user_parts(inp, question_text),
            role=spec.role,
            stage=spec.stage,
            max_tokens=spec.max_tokens,
            temperature=spec.temperature,
            json_schema=schema,
        )

    primary = parse_ctx.primary.id if parse_ctx is not None and parse_ctx.primary.id else None
    prio = list(priority) if priority is not None else list(range(len(refs)))
    reading = _Reading(ctx, trajectory, spec, request, Fit(list(refs), options, prio), primary)
    record_input_caps(trajectory, refs, options, reading.inp, stage=spec.stage, primary=primary)
    window = await window_for(ctx, spec.role, spec.context_tokens, spec.context_source)
    for attempt in range(spec.max_retries + 1):
        if window is not None:
            fits, count = await reading.plan(window, "planned" if attempt == 0 else "overflow")
            if not fits or (raise_overflow and reading.shrunk):
                text = overflow_text(count, spec.max_tokens, window)
                if raise_overflow:
                    raise PlannedOverflowError(ctx.model_for(spec.role), text)
                reading.record(window)
                return _failed(trajectory, reading.inp, f"the input cannot fit: {text}")
        if fails_on_degraded(ctx) and (trajectory.degraded or reading.shrunk):
            reading.record(window)
            stop_if_degraded(ctx, trajectory)
            if raise_model_errors:
                raise DegradedInputError(degraded_message(trajectory))
            return ReadResult(None, None, reading.inp.pages, error=trajectory.errors[-1])
        started = time.perf_counter()
        try:
            response = await call_model(
                ctx,
                trajectory,
                prompt=prompt,
                user=_user_parts(reading.inp, question_text),
                role=spec.role,
                stage=spec.stage,
                max_tokens=spec.max_tokens,
                temperature=spec.temperature,
                json_schema=schema,
                planned=window is not None,
            )
        except ContextOverflowError as exc:
            if raise_overflow:
                raise
            if attempt >= spec.max_retries:
                reading.record(window)
                message = f"context overflow after {attempt} fallbacks: {exc}"
                return _failed(trajectory, reading.inp, message)
            named = window_in_error(str(exc))
            if named is not None:
                window = ContextWindow(tokens=named, source="the model's overflow message")
                reading.causes.append(f"the model refused the prompt: {exc.message}")
            else:
                reading.halve(exc)
            continue
        except ModelError as exc:
            if raise_model_errors:
                raise
            reading.record(window)
            add_step(trajectory, "model_error", {"stage": spec.stage, "error": str(exc)})
            return _failed(trajectory, reading.inp, str(exc))
        reading.record(window)
        return _finish_read(reading, response, parse_ctx, step_kind, step_data, started)
    return _failed(trajectory, None, "context fallback gave up")  # pragma: no cover


def _finish_read(
    reading: _Reading,
    response: Any,
    parse_ctx: ParseContext | None,
    step_kind: str,
    step_data: dict[str, Any] | None,
    started: float,
) -> ReadResult:
    """Record the read step and parse the reply."""
    trajectory, spec, inp = reading.trajectory, reading.spec, reading.inp
    _record_input(trajectory, inp)
    data = {
        "stage": spec.stage,
        "pages": [p for _, p in inp.pages],
        "modality": reading.current.options.modality,
        "est_tokens": inp.est_tokens,
        "finish_reason": response.finish_reason,
        **(step_data or {}),
    }
    if inp.truncated:
        data["truncated_pages"] = inp.truncated
    add_step(trajectory, step_kind, data, time.perf_counter() - started)
    parsed = parse_reply(response.text, spec.output, parse_ctx, response.finish_reason)
    return ReadResult(parsed, response.text, inp.pages)


def _user_parts(inp: ReaderInput, question_text: str) -> list[ContentPart]:
    return [*inp.parts, TextPart(text=question_text)]


def _record_input(trajectory: Trajectory, inp: ReaderInput) -> None:
    if inp.composites:
        trajectory.metadata.setdefault("composites", []).extend(inp.composites)
    if inp.notes:
        notes = trajectory.metadata.setdefault("context_notes", {})
        for key, value in inp.notes.items():
            if isinstance(value, list):
                notes.setdefault(key, []).extend(value)
            else:
                notes[key] = value


def _failed(trajectory: Trajectory, inp: ReaderInput | None, message: str) -> ReadResult:
    if inp is not None:
        _record_input(trajectory, inp)
    trajectory.fail(Status.MODEL_ERROR, message)
    return ReadResult(None, None, inp.pages if inp else [], error=message)
