"""Helpers every strategy shares: documents of a sample, steps, model calls."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from scanrag.agents.calls import record_call
from scanrag.agents.evidence import ParseContext
from scanrag.agents.planning import check_fits
from scanrag.agents.prompts.base import Prompt
from scanrag.agents.reductions import DegradedInputError, degraded_message, stop_if_degraded
from scanrag.llm.types import ChatRequest, ChatResponse, ContentPart, Message
from scanrag.protocols import StrategyContext
from scanrag.schemas import Document, Sample, Step, Trajectory
from scanrag.tasks import TaskSpec


class InputProblemError(Exception):
    """The sample cannot run: a document is missing or its pages are unusable."""


def resolve_documents(sample: Sample, ctx: StrategyContext) -> tuple[Document, list[Document]]:
    """The primary document and the others (extra ``doc_ids``, then ``cited_doc_ids``)."""
    names = (*sample.doc_ids, *sample.cited_doc_ids)
    missing = [name for name in names if name not in ctx.documents]
    if missing:
        known = ", ".join(sorted(ctx.documents)) or "(none)"
        raise InputProblemError(f"document(s) not loaded: {', '.join(missing)}; loaded: {known}")
    primary = ctx.documents[sample.doc_ids[0]]
    if not primary.pages:
        raise InputProblemError(f"document {primary.name!r} has no pages")
    others: list[Document] = []
    for name in (*sample.doc_ids[1:], *sample.cited_doc_ids):
        doc = ctx.documents[name]
        if doc.id != primary.id and all(doc.id != o.id for o in others):
            others.append(doc)
    return primary, others


def parse_context(primary: Document, others: Sequence[Document]) -> ParseContext:
    """The documents a reply may cite, the primary one first."""
    return ParseContext.for_documents(primary, others)


def new_trajectory(strategy: str, sample: Sample) -> Trajectory:
    """An empty trajectory of ``strategy`` for ``sample``."""
    return Trajectory(sample_id=sample.id, strategy=strategy, doc_ids=list(sample.doc_ids))


def add_step(trajectory: Trajectory, kind: str, data: dict[str, Any], seconds: float = 0.0) -> Step:
    """Append a step (numbered in order) to ``trajectory``."""
    step = Step(index=len(trajectory.steps), kind=kind, data=data, seconds=round(seconds, 4))
    trajectory.steps.append(step)
    return step


def task_input(sample: Sample, task: TaskSpec) -> str:
    """Extra input some tasks carry (``task.given``): the candidate answer and chain a verify
    item asks about."""
    if "candidate" not in task.given:
        return ""
    meta = sample.metadata
    answer = next(
        (meta[k] for k in ("candidate_answer", "answer_to_verify", "claim") if meta.get(k)), None
    )
    chain = meta.get("candidate_chain") or [p.model_dump() for p in sample.gold_chain]
    lines = []
    if answer:
        lines.append(f"Answer to check: {answer}")
    if chain:
        lines.append("Evidence offered for it:")
        for item in chain:
            anchor = item.get("anchor", "") if isinstance(item, dict) else str(item)
            text = item.get("text", "") if isinstance(item, dict) else ""
            lines.append(f"- {anchor}: {text}".rstrip(": "))
    return "\n".join(lines) + "\n" if lines else ""


def build_request(
    ctx: StrategyContext,
    *,
    prompt: Prompt,
    user: str | list[ContentPart],
    role: str,
    stage: str,
    max_tokens: int,
    temperature: float = 0.0,
    json_schema: dict[str, Any] | None = None,
) -> ChatRequest:
    """The request :func:`call_model` sends (also what a plan counts before sending)."""
    return ChatRequest(
        model=ctx.model_for(role),
        messages=[
            Message(role="system", content=prompt.system),
            Message(role="user", content=user),
        ],
        temperature=temperature,
        max_tokens=max_tokens,
        json_schema=json_schema,
        stage=stage,
        prompt_hash=prompt.hash,
        seed=ctx.settings.seed,
    )


async def call_model(
    ctx: StrategyContext,
    trajectory: Trajectory,
    *,
    prompt: Prompt,
    user: str | list[ContentPart],
    role: str,
    stage: str,
    max_tokens: int,
    temperature: float = 0.0,
    json_schema: dict[str, Any] | None = None,
    planned: bool = False,
) -> ChatResponse:
    """One model call of ``prompt`` around ``user`` (:func:`build_request`, then :func:`send`)."""
    request = build_request(
        ctx,
        prompt=prompt,
        user=user,
        role=role,
        stage=stage,
        max_tokens=max_tokens,
        temperature=temperature,
        json_schema=json_schema,
    )
    return await send(ctx, trajectory, request, role, planned=planned)


async def send(
    ctx: StrategyContext,
    trajectory: Trajectory,
    request: ChatRequest,
    role: str,
    *,
    planned: bool = False,
) -> ChatResponse:
    """Send ``request`` (from :func:`build_request`) for ``role``, with usage, timing, model,
    prompt hash and the call itself (prompt and raw reply,
    :func:`scanrag.agents.calls.record_call`) recorded on ``trajectory``.

    Before sending, a request not ``planned`` by its caller is counted against the model's
    window (:func:`scanrag.agents.planning.check_fits`): one that cannot fit raises
    ``PlannedOverflowError`` (a ``ContextOverflowError``) without a call. Under
    ``runner.on_degraded: fail`` a degraded item raises ``DegradedInputError`` instead of
    calling. Raises what the model raises (``ModelError``, ``ContextOverflowError``): callers
    decide.
    """
    stage = request.stage
    if stop_if_degraded(ctx, trajectory):
        raise DegradedInputError(degraded_message(trajectory))
    if not planned:
        await check_fits(ctx, request, role)
    trajectory.models[role] = request.model
    if request.prompt_hash is not None:
        trajectory.prompt_hashes[stage] = request.prompt_hash
    started = time.perf_counter()
    response: ChatResponse | None = None
    error: str | None = None
    try:
        response = await ctx.llm.chat(request)
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        elapsed = time.perf_counter() - started
        trajectory.timings[stage] = round(trajectory.timings.get(stage, 0.0) + elapsed, 4)
        record_call(trajectory, request, role, response, error, elapsed)
    trajectory.add_usage(stage, response.usage)
    return response
