"""Routing decisions of the strategy graphs, as pure functions of plain values.

Graphs wire these to conditional edges; tests call them directly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

PROCEED = "proceed"
FINISH = "finish"

Decision = Literal["answer", "refine", "neighbors"]
DECISIONS: tuple[str, ...] = ("answer", "refine", "neighbors")


def after_prepare(failed: bool) -> str:
    """Stop at once when the sample cannot run (missing document, retriever error...)."""
    return FINISH if failed else PROCEED


def after_retrieve(
    failed: bool,
    new_pages: int,
    iteration: int,
    max_steps: int,
    searches: int = 0,
    max_searches: int | None = None,
) -> str:
    """Agentic loop after a search: read new pages, search again, or answer with what we have.

    A search that finds nothing new still spends budget: once ``searches`` reaches
    ``max_searches`` (default ``2 * max_steps``) the agent answers instead of planning again,
    so a document whose pages have all been read cannot keep the loop going.
    """
    if failed:
        return "finish"
    if new_pages > 0:
        return "read"
    limit = 2 * max_steps if max_searches is None else max_searches
    return "plan" if iteration < max_steps and searches < limit else "answer"


def after_read(iteration: int, max_steps: int) -> str:
    """Once the step budget is spent the agent must answer (a forced answer)."""
    return "answer" if iteration >= max_steps else "assess"


def after_assess(decision: str, query: str | None, has_neighbors: bool) -> str:
    """Map the assessor's decision to the next node.

    ``refine`` with a query goes straight to retrieval, without one back to the planner;
    ``neighbors`` without any unseen neighboring page falls back to the planner.
    """
    if decision == "answer":
        return "answer"
    if decision == "neighbors":
        return "neighbors" if has_neighbors else "plan"
    return "retrieve" if query else "plan"


def neighbor_pages(
    read: Iterable[int], seen: Iterable[int], num_pages: int, limit: int
) -> list[int]:
    """Unseen pages right before or after pages already read, nearest first."""
    seen_set = set(seen)
    out: list[int] = []
    for page in read:
        for candidate in (page + 1, page - 1):
            if 1 <= candidate <= num_pages and candidate not in seen_set and candidate not in out:
                out.append(candidate)
    return out[:limit]


def unseen(pages: Sequence[int], seen: Iterable[int], limit: int) -> list[int]:
    """The first ``limit`` pages of ``pages`` not read before (order kept)."""
    seen_set = set(seen)
    out = [p for p in dict.fromkeys(pages) if p not in seen_set]
    return out[:limit]


_DECISION_WORD = re.compile(r"\b(answer|refine|neighbou?rs?)\b", re.IGNORECASE)


def read_decision(text: str, data: dict[str, object] | None) -> tuple[str, str | None]:
    """The assessor's decision and optional new query, from its JSON or, failing that, words.

    Anything unclear counts as ``answer``: an agent that cannot tell stops searching.
    """
    decision: str | None = None
    query: str | None = None
    if data:
        raw = str(data.get("decision") or data.get("action") or "").strip().lower()
        decision = _canonical(raw)
        q = data.get("query")
        query = str(q).strip() if isinstance(q, str) and q.strip() else None
    if decision is None:
        match = _DECISION_WORD.search(text or "")
        decision = _canonical(match.group(1).lower()) if match else None
    return decision or "answer", query


def _canonical(word: str) -> str | None:
    if word.startswith("neighbo"):
        return "neighbors"
    return word if word in DECISIONS else None


def windows(num_pages: int, size: int, stride: int | None = None) -> list[list[int]]:
    """Page windows for a scan: ``size`` pages each, starting every ``stride`` pages."""
    if size < 1:
        raise ValueError(f"window size must be >= 1, got {size}")
    step = stride or size
    if step < 1:
        raise ValueError(f"window stride must be >= 1, got {step}")
    out: list[list[int]] = []
    start = 1
    while start <= num_pages:
        out.append(list(range(start, min(num_pages, start + size - 1) + 1)))
        if start + size - 1 >= num_pages:
            break
        start += step
    return out
