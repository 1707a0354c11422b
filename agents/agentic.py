"""Node logic of the iterative agent (``agentic_rag``).

Loop: plan a query → retrieve → read the pages not seen before → assess whether the notes
suffice → refine the query, fetch the neighboring pages, or answer. The agent never reads a
page twice; after ``max_steps`` reads it must answer (a forced answer). Every step goes to
``trajectory.steps``.

Each node is a function ``(scope, state, params) -> update``: it reads the loop variables
from its graph state (:class:`AgenticState`, plain JSON, because the
graph is checkpointed after each node so an interrupted question resumes where it stopped),
records its step on ``scope.trajectory`` and returns the keys it changes; the graph wiring
(``scanrag.graphs.agentic_rag``) stores the trajectory back into the state. A model error propagates
out of the node so the failed step is not committed and reruns on resume.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scanrag.agents import baseline, routing
from scanrag.agents.common import add_step, call_model, task_input
from scanrag.agents.evidence import ParsedOutput, adopt_evidence, merge_citations
from scanrag.agents.notes import next_limit, notes_section, render_notes, trim_blocks
from scanrag.agents.prompts.agentic import ASSESSOR, PLANNER
from scanrag.agents.prompts.base import Prompt
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.reader import read_pages
from scanrag.agents.reductions import notes_trimmed
from scanrag.agents.reply import apply_output
from scanrag.agents.scope import AtLeastOne, ReaderParams, Scope
from scanrag.agents.state import StrategyState, TrajectoryValue
from scanrag.llm.types import ChatResponse, ContextOverflowError
from scanrag.parsing import first_object
from scanrag.schemas import Citation, Document, Trajectory


class AgentParams(ReaderParams):
    """The agent's budget and call settings (the parameters of ``agentic_rag``, then the
    reader's)."""

    k: AtLeastOne = 5
    pages_per_step: AtLeastOne = 3
    max_steps: AtLeastOne = 3
    plan_first: bool = True
    planner_max_tokens: AtLeastOne = 64
    assessor_max_tokens: int = 96
    # searches in all, fruitless ones included; None: 2 × max_steps
    max_searches: AtLeastOne | None = None

    @property
    def searches(self) -> int:
        """The search budget in force."""
        return 2 * self.max_steps if self.max_searches is None else self.max_searches


class AgenticState(StrategyState, total=False):
    """Graph state of ``agentic_rag``: the loop's variables (the next query, the queries
    tried, the pages seen, waiting and read, the notes, the iteration and the last decision).
    """

    query: str | None
    tried: list[str]
    seen: list[int]
    pending: list[int]
    read_pages: list[int]
    notes: list[dict[str, Any]]
    iteration: int
    decision: str


def initial_state(trajectory: TrajectoryValue) -> AgenticState:
    """The state a new question starts from (the trajectory in the form its run keeps it)."""
    return {
        "trajectory": trajectory,
        "query": None,
        "tried": [],
        "seen": [],
        "pending": [],
        "read_pages": [],
        "notes": [],
        "iteration": 0,
        "decision": "",
        "stop": False,
    }


async def prepare(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """The first step: which document, how long, the read budget."""
    data = {"doc_id": scope.doc.id, "num_pages": scope.doc.num_pages, "max_steps": p.max_steps}
    add_step(scope.trajectory, "prepare", data)
    return {}


NOTE_TRIMS = 3  # times the notes are halved after a context overflow before giving up


def _blocks(state: AgenticState) -> list[tuple[list[int], str]]:
    return [(n["pages"], n["text"]) for n in state.get("notes", [])]


def _notes_text(state: AgenticState, limit: int | None = None) -> str:
    return notes_section(trim_blocks(_blocks(state), limit)).strip() or "(none yet)"


async def _trimming_notes(
    trajectory: Trajectory,
    state: AgenticState,
    stage: str,
    call: Callable[[int | None, bool], Any],
) -> Any:
    """Run ``call(limit, last)``; on a context overflow, halve every step's notes (recorded
    as a ``fallback`` step) and try again, up to ``NOTE_TRIMS`` times (``last`` is true on the
    final try)."""
    limit: int | None = None
    for attempt in range(NOTE_TRIMS + 1):
        try:
            result = await call(limit, attempt == NOTE_TRIMS)
        except ContextOverflowError:
            if attempt == NOTE_TRIMS:
                raise
            limit = next_limit(_blocks(state), limit)
            data = {"stage": stage, "trigger": "overflow", "mode": "truncate_notes"}
            add_step(trajectory, "fallback", {**data, "max_chars_per_step": limit})
            continue
        cause = "context window: the notes did not fit; each step's notes were cut"
        notes_trimmed(trajectory, _blocks(state), limit, stage=stage, cause=cause)
        return result
    raise AssertionError("unreachable")  # pragma: no cover


async def _ask_with_notes(
    scope: Scope, state: AgenticState, prompt: Prompt, role: str, max_tokens: int, **fields: str
) -> ChatResponse:
    """One planner or assessor call (``role`` is also its stage) with the notes so far,
    trimmed and retried when they overflow the model's context."""
    trajectory = scope.trajectory

    async def ask(limit: int | None, last: bool) -> ChatResponse:
        user = prompt.render_user(**fields, notes=_notes_text(state, limit))
        return await call_model(
            scope.ctx,
            trajectory,
            prompt=prompt,
            user=user,
            role=role,
            stage=role,
            max_tokens=max_tokens,
        )

    response: ChatResponse = await _trimming_notes(trajectory, state, role, ask)
    return response


def _query_from(text: str) -> str:
    data, _ = first_object(text)
    if data and isinstance(data.get("query"), str):
        return str(data["query"]).strip()
    for line in text.splitlines():
        line = line.strip().strip("`").strip()
        if line and not line.startswith("{"):
            return line.split(":", 1)[-1].strip().strip("\"'") if ":" in line[:8] else line
    return ""


async def plan(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """Choose the next search query: the planner's (told the queries tried), or the question."""
    trajectory = scope.trajectory
    question = scope.sample.question
    tried = list(state.get("tried", []))
    if not tried and not p.plan_first:
        add_step(trajectory, "plan", {"query": question, "source": "question"})
        return {"query": question}
    response = await _ask_with_notes(
        scope,
        state,
        PLANNER,
        "planner",
        p.planner_max_tokens,
        question=question,
        tried=json.dumps(tried) if tried else "none",
    )
    query = _query_from(response.text)
    source = "planner"
    if not query:
        query, source = question, "question (planner reply unusable)"
    elif query in tried:
        source = "planner (repeated query)"
    add_step(trajectory, "plan", {"query": query, "source": source, "raw": response.text[:500]})
    return {"query": query}


async def retrieve(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """Search the query; keep up to ``pages_per_step`` pages not read before as ``pending``."""
    trajectory = scope.trajectory
    query = state.get("query") or scope.sample.question
    hits = baseline.retrieve(scope, query, p.k)
    tried = [*state.get("tried", []), query]
    if hits is None:
        return {"stop": True, "tried": tried}
    ranked = [h.page for h in baseline.order_hits(hits, "rank")]
    new = routing.unseen(ranked, state.get("seen", []), p.pages_per_step)
    add_step(
        trajectory,
        "retrieve",
        {"query": query, "hits": baseline.hit_record(hits), "new_pages": new},
    )
    return {"pending": new, "tried": tried, "query": None}


async def read(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """Read the pending pages and keep what they say as one block of notes."""
    trajectory = scope.trajectory
    pages = list(state.get("pending", []))
    iteration = state.get("iteration", 0) + 1
    result = await read_pages(
        scope.ctx,
        trajectory,
        scope.refs(pages),
        question=scope.sample.question,
        task=scope.task,
        spec=scope.spec("truncate"),
        options=scope.options(),
        parse_ctx=scope.parse_ctx,
        task_input=task_input(scope.sample, scope.task),
        step_data={"iteration": iteration},
        on_failure="raise",
    )
    note: dict[str, Any] = {"pages": pages, "text": "(the reader gave no usable reply)"}
    if result.parsed is not None:
        note["text"] = render_notes(result.parsed, primary_id=scope.doc.id)
        note["citations"] = [c.model_dump(mode="json") for c in result.parsed.valid_citations]
    return {
        "seen": [*state.get("seen", []), *pages],
        "read_pages": [*state.get("read_pages", []), *pages],
        "pending": [],
        "notes": [*state.get("notes", []), note],
        "iteration": iteration,
    }


async def assess(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """Ask whether the notes answer the question: answer, refine the query, or read on."""
    trajectory = scope.trajectory
    response = await _ask_with_notes(
        scope,
        state,
        ASSESSOR,
        "assessor",
        p.assessor_max_tokens,
        question=scope.sample.question,
        pages=", ".join(map(str, state.get("read_pages", []))) or "none",
    )
    data, _ = first_object(response.text)
    decision, query = routing.read_decision(response.text, data)
    if query is not None and query in state.get("tried", []):
        query = None  # a repeated query would find the same pages: let the planner try
    add_step(
        trajectory,
        "assess",
        {"decision": decision, "query": query, "iteration": state.get("iteration", 0)},
    )
    return {"decision": decision, "query": query}


def neighbors_of(doc: Document, state: AgenticState, p: AgentParams) -> list[int]:
    """Unseen pages next to the pages the notes cite (else next to the pages read)."""
    cited = [
        c["page"]
        for n in state.get("notes", [])
        for c in n.get("citations", [])
        if c.get("page") is not None and c.get("doc_id") in (None, doc.id)
    ]
    anchors = cited or list(reversed(state.get("read_pages", [])))
    return routing.neighbor_pages(anchors, state.get("seen", []), doc.num_pages, p.pages_per_step)


async def neighbors(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """Queue the unseen pages next to the evidence for the next read."""
    pages = neighbors_of(scope.doc, state, p)
    add_step(scope.trajectory, "neighbors", {"pages": pages})
    return {"pending": pages}


async def answer(scope: Scope, state: AgenticState, p: AgentParams) -> dict[str, Any]:
    """Write the final reply from the notes (forced when the budget ran out)."""
    trajectory = scope.trajectory
    iteration = state.get("iteration", 0)
    forced = state.get("decision") != "answer"

    cited = scope.cited_refs()

    async def write(limit: int | None, last: bool) -> Any:
        notes = notes_section(trim_blocks(_blocks(state), limit))
        return await read_pages(
            scope.ctx,
            trajectory,
            cited,
            question=scope.sample.question,
            task=scope.task,
            spec=scope.spec("truncate", stage="answer"),
            options=scope.options(),
            parse_ctx=scope.parse_ctx,
            extra=notes or "(no notes: the searches found nothing relevant)\n\n",
            task_input=task_input(scope.sample, scope.task),
            prompt=reader_prompt(scope.params.output, scope.task, "notes"),
            step_kind="answer",
            step_data={"forced": forced, "iterations": iteration, "notes": len(state["notes"])},
            on_failure="raise" if last else "raise_all",  # the last try cuts the pages instead
        )

    result = await _trimming_notes(trajectory, state, "answer", write)
    if result.parsed is not None and result.raw is not None:
        apply_output(trajectory, result.parsed, result.raw)
        adopt_evidence(trajectory, gathered_evidence(scope, state), "reading steps")
    trajectory.metadata["pages_read"] = list(state.get("read_pages", []))
    trajectory.metadata["queries"] = list(state.get("tried", []))
    return {"stop": True}


def gathered_evidence(scope: Scope, state: AgenticState) -> ParsedOutput:
    """Every citation the reading steps kept, merged into one parsed output."""
    citations = [
        Citation.model_validate(c) for n in state.get("notes", []) for c in n.get("citations", [])
    ]
    return merge_citations(scope.parse_ctx, citations, parser="notes")
