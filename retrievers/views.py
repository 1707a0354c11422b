"""Query views: which texts a ``hybrid`` component is searched with for one question.

* ``query`` — the question itself (the component applies its own ``query_mode``);
* ``sentences`` — each sentence of the question (``scanrag.indexes.queries.question_sentences``) as
  its own search; a page keeps its best sentence's score
  (``scanrag.retrievers.fusion.merge_views``).

A single-vector encoder squeezes a question into one vector, so a question that asks one thing
and defines its terms in the next sentences ("What is the FY2019 DPO? DPO is defined as ...")
lands between the pages it needs; searched sentence by sentence, each part finds its page. A
term-matching retriever (BM25) already adds up evidence term by term and gains nothing from
it, a multi-vector one (ColPali) matches each query token anyway. Hence the default: dense
components search by sentences, every other component with the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from scanrag.indexes.queries import question_sentences
from scanrag.retrievers.fusion import merge_views
from scanrag.schemas import PageHit

View = Literal["query", "sentences"]
VIEWS: tuple[str, ...] = get_args(View)
SENTENCE_VIEW_RETRIEVERS = frozenset({"dense"})


def default_view(component: Any) -> View:
    """``sentences`` for a dense component (by its retriever name), else ``query``."""
    return "sentences" if getattr(component, "name", None) in SENTENCE_VIEW_RETRIEVERS else "query"


def check_views(views: Sequence[str] | None, components: int) -> None:
    if views is None:
        return
    if isinstance(views, str) or not isinstance(views, Sequence) or len(views) != components:
        raise ValueError(f"views needs one entry per retriever ({components}), got {views!r}")
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        raise ValueError(f"unknown view {unknown[0]!r}; use one of {', '.join(VIEWS)}")


def search_views(
    component: Any,
    queries: Sequence[str],
    view: str,
    depth: int,
    doc_ids: Sequence[str] | str | None,
) -> list[list[PageHit]]:
    """``component``'s top ``depth`` hits per query, searched with ``view`` (one batch)."""
    if view == "query":
        return list(component.search_batch(list(queries), depth, doc_ids))
    texts = [question_sentences(q) if q.strip() else [q] for q in queries]
    ranked = component.search_batch([t for group in texts for t in group], depth, doc_ids)
    out, start = [], 0
    for group in texts:
        out.append(merge_views(ranked[start : start + len(group)], depth))
        start += len(group)
    return out
