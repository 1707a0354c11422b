"""The exchange with the model on a viewer page: the raw reply, each step with its model calls
(tokens, cost, latency), each call's prompt (expandable, page text collapsed) and reply, and
the judges' raw replies.

Everything from the run is escaped. What a trajectory kept is what is shown: page text was
stored as a preview (:mod:`scanrag.agents.calls`), so a page part says how long the full text was.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from scanrag.evaluation.report.html import compact_json, esc
from scanrag.evaluation.schemas import ScoreRow
from scanrag.schemas import ModelCall, PromptPart, Status, Step, Trajectory


def raw_reply(traj: Trajectory) -> str:
    """The final raw reply, escaped, open by default."""
    if traj.raw_output is None:
        return '<h4>Raw model reply</h4><p class="muted">No reply was recorded.</p>'
    return (
        f"<details open><summary><b>Raw model reply</b> "
        f'<span class="muted">({len(traj.raw_output)} characters)</span></summary>'
        f"<pre>{esc(traj.raw_output)}</pre></details>"
    )


def final_prompt(traj: Trajectory, gold_pages: Sequence[int] = ()) -> str:
    """The prompt of the call that produced the final reply (the last call that answered),
    collapsed, with the pages it really held (gold and predicted ones marked apart); the page
    text inside it collapsed again."""
    answered = [c for c in traj.calls if c.reply is not None]
    if not answered:
        return ""
    call = next((c for c in reversed(answered) if c.reply == traj.raw_output), answered[-1])
    return (
        f'<details class="prompt"><summary><b>Prompt of this reply</b> '
        f'<span class="muted">({call_line(call)})</span><br>'
        f"{prompt_pages(call, gold_pages, traj.pages)}</summary>{prompt_html(call)}</details>"
    )


def prompt_pages(call: ModelCall, gold: Sequence[int], predicted: Sequence[int]) -> str:
    """``pages in this prompt: 3 gold · 4 gold predicted · 9`` (text and image parts)."""
    held = list(dict.fromkeys(p.page for p in call.user if p.page is not None))
    if not held:
        return '<span class="muted prompt-pages">no page in this prompt</span>'
    marks = []
    for page in held:
        tags = [t for t, on in (("gold", page in gold), ("predicted", page in predicted)) if on]
        badges = "".join(f' <span class="tag tag-{t}">{t}</span>' for t in tags)
        marks.append(f'<span class="nowrap">{page}{badges}</span>')
    return '<span class="prompt-pages">pages in this prompt: ' + " · ".join(marks) + "</span>"


def call_line(call: ModelCall) -> str:
    """``#0 reader · model · 721 + 9 tokens · $0.00073 · 1.20 s`` with cache and error marks."""
    usage = call.usage
    parts = [
        f"#{call.index} {call.stage}",
        call.model,
        f"{usage.prompt_tokens} + {usage.completion_tokens} tokens",
        f"${usage.cost_usd:.5f}",
        f"{call.seconds:.2f} s" + (f" (model {call.latency_s:.2f} s)" if call.latency_s else ""),
    ]
    if call.cached:
        parts.append("cached")
    if call.finish_reason and call.finish_reason != "stop":
        parts.append(f"finish: {call.finish_reason}")
    text = " · ".join(esc(p) for p in parts)
    if call.error:
        text += f' · <span class="bad">failed: {esc(call.error)}</span>'
    return text


def _part(part: PromptPart) -> str:
    if part.kind == "page":
        head, _, preview = part.text.partition("\n")
        note = f"{part.chars} characters of page text; the first few kept"
        return (
            f'<details class="page"><summary>{esc(head)} '
            f'<span class="muted">({esc(note)})</span></summary>'
            f"<pre>{esc(preview)}</pre></details>"
        )
    if part.kind == "image":
        where = f"page {part.page}" if part.page is not None else "image"
        return f'<div class="muted">[{esc(where)} image: {esc(part.text)}]</div>'
    cut = f" (cut: {part.chars} characters in full)" if part.chars > len(part.text) else ""
    return f"<pre>{esc(part.text)}</pre>{f'<p class=muted>{esc(cut)}</p>' if cut else ''}"


def prompt_html(call: ModelCall) -> str:
    """The call's prompt: system prompt and user message, page text collapsed."""
    if call.system is not None:
        system = (
            f"<details><summary>system prompt "
            f'<span class="muted">({len(call.system)} characters, hash '
            f"{esc(call.prompt_hash)})</span></summary><pre>{esc(call.system)}</pre></details>"
        )
    else:
        system = f'<div class="muted">system prompt: the same as call #{esc(call.system_of)}</div>'
    user = "".join(_part(p) for p in call.user)
    return f"<div>{system}<div><b>user message</b></div>{user}</div>"


def call_html(call: ModelCall, *, open_: bool = False) -> str:
    reply = (
        f"<div><b>reply</b> <span class=muted>({call.reply_chars} characters)</span></div>"
        f"<pre>{esc(call.reply)}</pre>"
        if call.reply is not None
        else '<p class="muted">no reply</p>'
    )
    attr = " open" if open_ else ""
    return (
        f'<details class="call"{attr}><summary>model call {call_line(call)}</summary>'
        f'<div class="kv">prompt</div>{prompt_html(call)}{reply}</details>'
    )


def steps_html(traj: Trajectory, limit: int = 60) -> str:
    """Each step (its data on expanding) with the model calls made for it."""
    by_step: dict[int | None, list[ModelCall]] = defaultdict(list)
    indices = {s.index for s in traj.steps}
    for call in traj.calls:
        by_step[call.step if call.step in indices else None].append(call)
    if not traj.steps and not traj.calls:
        return ""
    items = [_step(step, by_step.get(step.index, [])) for step in traj.steps[:limit]]
    loose = by_step.get(None, [])
    if loose:
        items.append("<div class=kv>calls after the last step</div>")
        items += [call_html(c) for c in loose]
    note = f'<p class="muted">{esc(no_calls_note(traj))}</p>' if not traj.calls else ""
    return "<h4>Steps and model calls</h4>" + note + "".join(items)


def no_calls_note(traj: Trajectory) -> str:
    """Why a trajectory lists no model call: its usage counts calls that were not kept (a
    trajectory written before calls were recorded), or none was made — the item ended in an
    error first (``on_degraded: fail``, a missing document ...) or needed no model."""
    if traj.total_usage.calls:
        return (
            "This trajectory kept no model calls (written before calls were recorded): "
            "prompts and per-call usage are not available."
        )
    if traj.status != Status.OK:
        first = f" ({traj.errors[0]})" if traj.errors else ""
        return (
            f"No model call was made: the item ended as {traj.status} "
            f"before calling a model{first}."
        )
    return "No model call was made for this item."


def _step(step: Step, calls: Sequence[ModelCall]) -> str:
    lines = "".join(f"<br>&nbsp;&nbsp;↳ {call_line(c)}" for c in calls)
    return (
        f'<details class="step"><summary>{esc(step.index)}. {esc(step.kind)} '
        f'<span class="muted">({step.seconds:.2f} s)</span>{lines}</summary>'
        f"<pre>{esc(compact_json(step.data))}</pre>"
        + "".join(call_html(c) for c in calls)
        + "</details>"
    )


def judge_replies(row: ScoreRow, limit: int = 12) -> str:
    """The judges' raw replies of a score row, each expandable."""
    records = [r for r in row.judges if r.raw is not None][:limit]
    if not records:
        return ""
    return "".join(
        f"<details><summary>raw judge reply {esc(r.key or r.role)} "
        f'<span class="muted">({esc(r.model)}, {esc(r.status)})</span></summary>'
        f"<pre>{esc(r.raw)}</pre></details>"
        for r in records
    )
