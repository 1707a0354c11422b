"""Recording each model call on the trajectory (``Trajectory.calls``), compactly.

The report shows every call's prompt and raw reply so a wrong citation can be traced to what the
model saw and wrote. Page text would make trajectory rows as large as the documents, so a page
part (a text part opening with the marker :func:`scanrag.agents.context.page_marker` writes) keeps
its marker line and the first :data:`PAGE_PREVIEW_CHARS` characters; an image keeps its file name;
other text and the reply are cut at :data:`TEXT_CAP_CHARS` / :data:`REPLY_CAP_CHARS`; a system
prompt already stored by an earlier call of the same trajectory is referenced by that call's
index. ``chars`` fields give the full lengths, so a cut is always visible.
"""

from __future__ import annotations

import re
from pathlib import Path

from scanrag.llm.types import ChatRequest, ChatResponse, ImagePart, Message
from scanrag.schemas import ModelCall, PromptPart, Trajectory, Usage

PAGE_PREVIEW_CHARS = 240
TEXT_CAP_CHARS = 6000
REPLY_CAP_CHARS = 8000
CUT_MARK = " […]"
# ``=== Page 12 (printed: 10) ===``, ``=== report.pdf — Page 3 (printed: none) ===``, either
# with a block id after it (``... === [id 3f9a2c1b7d4e]``) where page text is fenced
PAGE_MARKER = re.compile(
    r"^=== (?:.+ — )?Page (\d+) \(printed: [^\n]*?\) ===(?: \[id [0-9a-f]+\])?$"
)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + CUT_MARK


def prompt_parts(message: Message) -> list[PromptPart]:
    """The parts of a user message as stored: page text reduced to a preview."""
    if isinstance(message.content, str):
        return [_text_part(message.content)]
    parts: list[PromptPart] = []
    last_page: int | None = None
    for part in message.content:
        if isinstance(part, ImagePart):
            name = Path(part.path).name
            parts.append(PromptPart(kind="image", text=name, chars=0, page=last_page))
            last_page = None
            continue
        stored = _text_part(part.text)
        last_page = stored.page
        parts.append(stored)
    return parts


def _text_part(text: str) -> PromptPart:
    head, _, body = text.partition("\n")
    match = PAGE_MARKER.match(head.strip())
    if match is None:
        return PromptPart(kind="text", text=cut(text, TEXT_CAP_CHARS), chars=len(text))
    preview = cut(body, PAGE_PREVIEW_CHARS)
    stored = head if not body else f"{head}\n{preview}"
    return PromptPart(kind="page", text=stored, chars=len(body), page=int(match.group(1)))


def record_call(
    trajectory: Trajectory,
    request: ChatRequest,
    role: str,
    response: ChatResponse | None,
    error: str | None,
    seconds: float,
) -> ModelCall:
    """Append the record of one call (answered or failed) to ``trajectory.calls``."""
    system = cut("\n".join(m.text for m in request.messages if m.role == "system"), TEXT_CAP_CHARS)
    user = [part for m in request.messages if m.role != "system" for part in prompt_parts(m)]
    earlier = next((c for c in trajectory.calls if c.system == system), None)
    reply = response.text if response is not None else None
    call = ModelCall(
        index=len(trajectory.calls),
        step=len(trajectory.steps),
        stage=request.stage,
        role=role,
        model=request.model,
        prompt_hash=request.prompt_hash,
        system=None if earlier is not None else system,
        system_of=earlier.index if earlier is not None else None,
        user=user,
        reply=None if reply is None else cut(reply, REPLY_CAP_CHARS),
        reply_chars=len(reply or ""),
        finish_reason=response.finish_reason if response is not None else None,
        usage=response.usage if response is not None else Usage(calls=1),
        latency_s=round(response.latency_s, 4) if response is not None else 0.0,
        seconds=round(seconds, 4),
        cached=bool(response.cached) if response is not None else False,
        cached_from=response.cached_from if response is not None else None,
        error=error,
    )
    trajectory.calls.append(call)
    return call
