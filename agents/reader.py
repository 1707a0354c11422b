"""The reader node: pages in, a parsed reply out, planned against the model's context window.

``read_pages`` has the input planned (:func:`scanrag.agents.planning.plan_read`: rendered by
``scanrag.agents.context``, counted against the model's window before sending — the window
from ``context_tokens`` or the model client, the count from the model's tokenizer where the
client has it) and, when it does not fit, shrunk by the strategy's fallback mode:

* ``truncate`` — one character cap for every page (and fewer page images), the last pages
  left out once the cap would fall below ``MIN_CHARS_PER_PAGE``;
* ``drop`` — leave out the lowest-priority pages (top-k RAG: the worst-ranked hits).

A model that still refuses the prompt (``ContextOverflowError``: the window was unknown, or
the count an estimate) teaches the client its window when the refusal names it, and the
input is planned again. Every shrink is a ``fallback`` step; what it left out, and what the
caps (``max_chars_per_page``, ``max_images``) left out, are ``Trajectory.reductions``
(``scanrag.agents.reductions``). Under ``runner.on_degraded: fail`` a degraded input is not
sent. What happens to a failure is the caller's choice (:data:`OnFailure`): by default a
model failure marks the trajectory ``model_error`` and returns no parse.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scanrag.agents.citations import parse_citations
from scanrag.agents.common import add_step, build_request, send
from scanrag.agents.context import ContextOptions, PageRef, ReaderInput
from scanrag.agents.evidence import ParseContext, ParsedOutput
from scanrag.agents.fitting import Fit
from scanrag.agents.planning import ReaderSpec, ReadPlan, plan_read
from scanrag.agents.prompts.base import Prompt
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.reductions import (
    DegradedInputError,
    degraded_message,
    fails_on_degraded,
    stop_if_degraded,
)
from scanrag.agents.reply import note_finish
from scanrag.agents.structured import parse_structured, schema_for
from scanrag.llm.context import window_in_error
from scanrag.llm.fit import PlannedOverflowError, overflow_text
from scanrag.llm.types import (
    ChatRequest,
    ChatResponse,
    ContextOverflowError,
    ContextWindow,
    ModelError,
    TextPart,
)
from scanrag.protocols import StrategyContext
from scanrag.schemas import Status, Trajectory
from scanrag.tasks import TaskSpec

OnFailure = Literal["record", "raise", "raise_overflow", "raise_all"]
"""What ``read_pages`` does with a failure:

* ``record`` — a model error, or an input that cannot fit, ends the read recorded on the
  trajectory (status ``model_error``; ``degraded`` under ``on_degraded: fail``), no parse;
* ``raise`` — a model error (and a degraded input under ``on_degraded: fail``) raises, so a
  checkpointed graph does not commit the failed node; an input that does not fit is still cut;
* ``raise_overflow`` — an input that does not fit (planned, or refused by the model) raises
  ``ContextOverflowError`` to the caller, which falls back by splitting or trimming its own
  input rather than cutting pages; model errors are recorded;
* ``raise_all`` — both raise.
"""


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
    on_failure: OnFailure = "record",
) -> ReadResult:
    """Read ``refs`` and parse the reply; failures are recorded on ``trajectory`` or raised,
    as ``on_failure`` says."""
    prompt = prompt or reader_prompt(spec.output, task)
    question_text = prompt.render_user(extra=extra, task_input=task_input, question=question)
    schema = schema_for(task) if spec.output == "json" else None

    def request_for(inp: ReaderInput) -> ChatRequest:
        return build_request(
            ctx,
            prompt=prompt,
            user=[*inp.parts, TextPart(text=question_text)],
            role=spec.role,
            stage=spec.stage,
            max_tokens=spec.max_tokens,
            temperature=spec.temperature,
            json_schema=schema,
        )

    primary = parse_ctx.primary.id if parse_ctx is not None and parse_ctx.primary.id else None
    prio = list(priority) if priority is not None else list(range(len(refs)))
    promised = Fit(list(refs), options, prio)
    plan = await plan_read(ctx, request_for, promised, spec, primary)
    for reduction in plan.caps:
        trajectory.reduce(reduction)
    raise_errors = on_failure in ("raise", "raise_all")
    raise_overflow = on_failure in ("raise_overflow", "raise_all")
    for attempt in range(spec.max_retries + 1):
        if attempt > 0 and plan.window is not None:
            await plan.fit_to(ctx, plan.window, "overflow")
        _take_fallbacks(trajectory, plan)
        if plan.window is not None and (not plan.fits or (raise_overflow and plan.shrunk)):
            assert plan.count is not None
            text = overflow_text(plan.count, spec.max_tokens, plan.window)
            if raise_overflow:
                raise PlannedOverflowError(ctx.model_for(spec.role), text)
            _take_reductions(trajectory, plan, primary)
            return _failed(trajectory, plan, f"the input cannot fit: {text}")
        if fails_on_degraded(ctx) and (trajectory.degraded or plan.shrunk):
            _take_reductions(trajectory, plan, primary)
            stop_if_degraded(ctx, trajectory)
            if raise_errors:
                raise DegradedInputError(degraded_message(trajectory))
            return ReadResult(None, None, plan.input.pages, error=trajectory.errors[-1])
        started = time.perf_counter()
        request, planned = plan.request(plan.input), plan.window is not None
        try:
            response = await send(ctx, trajectory, request, spec.role, planned=planned)
        except ContextOverflowError as exc:
            if raise_overflow:
                raise
            if attempt >= spec.max_retries:
                _take_reductions(trajectory, plan, primary)
                message = f"context overflow after {attempt} fallbacks: {exc}"
                return _failed(trajectory, plan, message)
            named = window_in_error(str(exc))
            if named is not None:
                plan.window = ContextWindow(tokens=named, source="the model's overflow message")
                plan.causes.append(f"the model refused the prompt: {exc.message}")
            else:
                plan.halve(ctx, exc)
            continue
        except ModelError as exc:
            if raise_errors:
                raise
            _take_reductions(trajectory, plan, primary)
            add_step(trajectory, "model_error", {"stage": spec.stage, "error": str(exc)})
            return _failed(trajectory, plan, str(exc))
        _take_reductions(trajectory, plan, primary)
        return _finish_read(
            trajectory, plan, spec.output, response, parse_ctx, step_kind, step_data, started
        )
    raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover


def _take_fallbacks(trajectory: Trajectory, plan: ReadPlan) -> None:
    """Record the plan's new shrinking rounds as ``fallback`` steps."""
    for data in plan.fallbacks:
        add_step(trajectory, "fallback", data)
    plan.fallbacks.clear()


def _take_reductions(trajectory: Trajectory, plan: ReadPlan, primary: str | None) -> None:
    """Record what planning left out of the promised input."""
    for reduction in plan.reductions(primary):
        trajectory.reduce(reduction)


def _finish_read(
    trajectory: Trajectory,
    plan: ReadPlan,
    output: str,
    response: ChatResponse,
    parse_ctx: ParseContext | None,
    step_kind: str,
    step_data: dict[str, Any] | None,
    started: float,
) -> ReadResult:
    """Record the read step and parse the reply."""
    inp = plan.input
    _record_input(trajectory, inp)
    data = {
        "stage": plan.spec.stage,
        "pages": [p for _, p in inp.pages],
        "modality": plan.fit.options.modality,
        "est_tokens": inp.est_tokens,
        "finish_reason": response.finish_reason,
        **(step_data or {}),
    }
    if inp.truncated:
        data["truncated_pages"] = inp.truncated
    add_step(trajectory, step_kind, data, time.perf_counter() - started)
    parsed = parse_reply(response.text, output, parse_ctx, response.finish_reason)
    return ReadResult(parsed, response.text, inp.pages)


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


def _failed(trajectory: Trajectory, plan: ReadPlan, message: str) -> ReadResult:
    _record_input(trajectory, plan.input)
    trajectory.fail(Status.MODEL_ERROR, message)
    return ReadResult(None, None, plan.input.pages, error=message)
