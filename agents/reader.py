"""The reader node: pages in, a parsed reply out, with the context-window fallback.

``read_pages`` builds the input (``agents.context``), calls the reader model and parses the
reply with the citation parser or the JSON path. When the estimated prompt exceeds the
configured window, or the model raises ``ContextOverflowError``, it shrinks the input and tries
again; how it shrinks is the strategy's choice:

* ``truncate`` — cap the characters of every page (and stack more page images per image);
* ``drop`` — leave out the lowest-priority pages (top-k RAG: the worst-ranked hits).

Every fallback is a ``fallback`` step on the trajectory. A model failure marks the trajectory
``model_error`` and returns no parse; nothing here raises for a per-item failure.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from agents.citations import parse_citations
from agents.common import add_step, call_model
from agents.context import (
    CHARS_PER_TOKEN,
    ContextOptions,
    PageRef,
    ReaderInput,
    build_input,
    estimate_text_tokens,
)
from agents.evidence import ParseContext, ParsedOutput
from agents.prompts.base import Prompt
from agents.prompts.reader import reader_prompt
from agents.reply import note_finish
from agents.structured import parse_structured, schema_for
from scanrag.llm.types import ContentPart, ContextOverflowError, ModelError, TextPart
from scanrag.protocols import StrategyContext
from scanrag.schemas import Status, Trajectory

Output = Literal["citations", "json"]
Fallback = Literal["truncate", "drop"]
MIN_CHARS_PER_PAGE = 200


@dataclass(frozen=True)
class ReaderSpec:
    """How a strategy calls its reader."""

    output: Output = "citations"
    role: str = "reader"
    stage: str = "reader"
    max_tokens: int = 1024
    temperature: float = 0.0
    context_tokens: int | None = None
    fallback: Fallback = "truncate"
    max_retries: int = 3


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


def _shrink(
    refs: list[PageRef],
    options: ContextOptions,
    budget: int,
    mode: Fallback,
    priority: list[int],
) -> tuple[list[PageRef], ContextOptions, dict[str, Any]]:
    """Fit ``refs`` into ``budget`` tokens of page content by the strategy's fallback mode."""
    n = max(1, len(refs))
    images = options.modality in ("image", "both")
    if mode == "drop" and len(refs) > 1:
        keep = max(1, min(len(refs) - 1, round(budget / max(1, _page_cost(refs, options)))))
        kept = sorted(sorted(range(len(refs)), key=lambda i: priority[i])[:keep])
        dropped = [refs[i].number for i in range(len(refs)) if i not in kept]
        return [refs[i] for i in kept], options, {"mode": "drop", "dropped_pages": dropped}
    longest = max((len(r.document.page(r.number).text) for r in refs), default=0)
    current = options.max_chars_per_page or max(longest, MIN_CHARS_PER_PAGE)
    per_page_chars = max(MIN_CHARS_PER_PAGE, budget * CHARS_PER_TOKEN // n)
    if per_page_chars >= current:
        per_page_chars = max(MIN_CHARS_PER_PAGE, current // 2)
    new = replace(options, max_chars_per_page=per_page_chars)
    record: dict[str, Any] = {"mode": "truncate", "max_chars_per_page": per_page_chars}
    if images:
        max_images = max(1, budget // max(1, options.image_tokens))
        if options.max_images is not None:
            max_images = min(max_images, max(1, options.max_images // 2))
        new = replace(new, max_images=max_images)
        record["max_images"] = max_images
    if per_page_chars >= current and len(refs) > 1:
        half = refs[: max(1, len(refs) // 2)]  # nothing left to trim: keep the first half
        record["dropped_pages"] = [r.number for r in refs[len(half) :]]
        refs = half
    return refs, new, record


def _page_cost(refs: Sequence[PageRef], options: ContextOptions) -> int:
    if options.modality == "image":
        return options.image_tokens
    chars = sum(len(r.document.page(r.number).text) for r in refs) // max(1, len(refs))
    cap = options.max_chars_per_page or chars
    text = min(chars, cap) // CHARS_PER_TOKEN + 12
    return text + (options.image_tokens if options.modality == "both" else 0)


async def read_pages(
    ctx: StrategyContext,
    trajectory: Trajectory,
    refs: Sequence[PageRef],
    *,
    question: str,
    task: str,
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
    not commit a failed node); ``raise_overflow`` hands a context overflow to the caller, for
    strategies that fall back by splitting their input rather than truncating it.
    """
    prompt = prompt or reader_prompt(spec.output, task)
    question_text = prompt.render_user(extra=extra, task_input=task_input, question=question)
    fixed = estimate_text_tokens(prompt.system) + estimate_text_tokens(question_text)
    pages, opts = list(refs), options
    prio = list(priority) if priority is not None else list(range(len(pages)))
    schema = schema_for(task) if spec.output == "json" else None
    for attempt in range(spec.max_retries + 1):
        inp = build_input(pages, opts, ctx.renderer)
        total = inp.est_tokens + fixed + spec.max_tokens
        window = spec.context_tokens
        if window is not None and total > window and raise_overflow:
            raise ContextOverflowError(
                ctx.model_for(spec.role), f"estimated {total} tokens exceed the {window} window"
            )
        if window is not None and total > window and attempt < spec.max_retries:
            pages, opts, prio = _fallback(
                trajectory, pages, opts, prio, window - fixed - spec.max_tokens, spec, "estimate"
            )
            continue
        started = time.perf_counter()
        try:
            response = await call_model(
                ctx,
                trajectory,
                prompt=prompt,
                user=_user_parts(inp, question_text),
                role=spec.role,
                stage=spec.stage,
                max_tokens=spec.max_tokens,
                temperature=spec.temperature,
                json_schema=schema,
            )
        except ContextOverflowError as exc:
            if raise_overflow:
                raise
            if attempt >= spec.max_retries:
                message = f"context overflow after {attempt} fallbacks: {exc}"
                return _failed(trajectory, inp, message)
            budget = inp.est_tokens // 2
            if window is not None:
                budget = min(budget, window - fixed - spec.max_tokens)
            pages, opts, prio = _fallback(trajectory, pages, opts, prio, budget, spec, "overflow")
            continue
        except ModelError as exc:
            if raise_model_errors:
                raise
            add_step(trajectory, "model_error", {"stage": spec.stage, "error": str(exc)})
            return _failed(trajectory, inp, str(exc))
        _record_input(trajectory, inp)
        data = {
            "stage": spec.stage,
            "pages": [p for _, p in inp.pages],
            "modality": opts.modality,
            "est_tokens": inp.est_tokens,
            "finish_reason": response.finish_reason,
            **(step_data or {}),
        }
        if inp.truncated:
            data["truncated_pages"] = inp.truncated
        add_step(trajectory, step_kind, data, time.perf_counter() - started)
        parsed = parse_reply(response.text, spec.output, parse_ctx, response.finish_reason)
        return ReadResult(parsed, response.text, inp.pages)
    return _failed(trajectory, None, "context fallback gave up")  # pragma: no cover


def _fallback(
    trajectory: Trajectory,
    pages: list[PageRef],
    opts: ContextOptions,
    prio: list[int],
    budget: int,
    spec: ReaderSpec,
    trigger: str,
) -> tuple[list[PageRef], ContextOptions, list[int]]:
    budget = max(256, budget)
    before = [p.number for p in pages]
    new_pages, new_opts, record = _shrink(pages, opts, budget, spec.fallback, prio)
    kept = {id(p) for p in new_pages}
    new_prio = [pr for p, pr in zip(pages, prio, strict=True) if id(p) in kept]
    data = {"stage": spec.stage, "trigger": trigger, "budget_tokens": budget, "pages": before}
    add_step(trajectory, "fallback", {**data, **record})
    trajectory.metadata.setdefault("context_fallbacks", []).append(
        {"stage": spec.stage, "trigger": trigger, **record}
    )
    return new_pages, new_opts, new_prio


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
