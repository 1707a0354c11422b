"""Node logic of the single-read strategies: full document, top-k RAG and the oracles.

The node functions (``prepare``, ``select_full_doc``, ``retrieve_topk``, ``select_oracle``,
``read_truncated``, ``read_ranked``) take ``(scope, state[, parameters])`` and return the state
keys they change (see :class:`ReadState`); ``graphs`` wires them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from scanrag.agents import reductions
from scanrag.agents.common import add_step
from scanrag.agents.context import PageRef
from scanrag.agents.prompts.oracle import FACTS_SECTION, REGIONS_SECTION
from scanrag.agents.scope import Scope
from scanrag.agents.state import PageKey, StrategyState
from scanrag.schemas import Document, PageHit, Region, Sample, Status

Order = Literal["rank", "page"]
OracleLevel = Literal["pages", "regions", "facts"]


# --------------------------------------------------------------------------- nodes


class ReadState(StrategyState, total=False):
    """Graph state of the single-read strategies (``full_doc``, ``topk_rag``, the oracles):
    the pages chosen for the read, in reading order, with their retrieval ranks."""

    refs: list[PageKey]
    priority: list[int]
    extra: str


def prepare(scope: Scope, state: ReadState) -> dict[str, Any]:
    """Record the item's documents; stop when one is missing."""
    return {"stop": not scope.prepare()}


def select_full_doc(scope: Scope, state: ReadState) -> dict[str, Any]:
    """Choose every page up to the cap (``full_doc_pages``)."""
    return {"refs": scope.keys(full_doc_pages(scope))}


def select_oracle(scope: Scope, state: ReadState, level: OracleLevel) -> dict[str, Any]:
    """Choose the gold pages and the oracle evidence of ``level``."""
    refs = oracle_pages(scope)
    return {"refs": scope.keys(refs), "extra": oracle_extra(scope, level)}


def retrieve_topk(scope: Scope, state: ReadState, k: int, order: Order) -> dict[str, Any]:
    """Search the question for ``k`` pages (at most the page cap: the pages it keeps out of
    the top ``k`` are a ``page_cap`` reduction), then the cited documents; a retriever
    failure stops the item."""
    cap = scope.page_cap
    wanted = k
    k = min(k, cap) if cap else k
    question = scope.sample.question
    found = retrieve(scope, question, wanted)
    if found is None:
        return {"stop": True}
    ranked = order_hits(found, "rank")
    hits = ranked[:k]
    if cap is not None:
        lost = [h.page for h in ranked[k:]]
        reductions.page_cap(scope.trajectory, lost, cap, source=scope.page_cap_source)
    refs = topk_pages(scope, hits, order)
    ranks = {h.page: h.rank for h in hits}
    add_step(
        scope.trajectory,
        "retrieve",
        {
            "query": question,
            "k": k,
            "order": order,
            "hits": hit_record(hits),
            "read_order": [r.number for r in refs],
        },
    )
    cited = scope.cited_refs()
    priority = [ranks[r.number] for r in refs] + [0] * len(cited)
    return {"refs": scope.keys(refs + cited), "priority": priority}


async def read_truncated(scope: Scope, state: ReadState) -> dict[str, Any]:
    """Read the chosen pages (with any ``extra`` section); too long a prompt truncates pages."""
    refs = scope.page_refs(state["refs"])
    await scope.read(refs, fallback="truncate", extra=state.get("extra", ""))
    return {}


async def read_ranked(scope: Scope, state: ReadState) -> dict[str, Any]:
    """Read the chosen pages; too long a prompt drops the lowest-priority pages first."""
    refs = scope.page_refs(state["refs"])
    await scope.read(refs, fallback="drop", priority=state["priority"])
    return {}


# --------------------------------------------------------------------------- full document


def full_doc_pages(scope: Scope) -> list[PageRef]:
    """Every page of the primary document up to the page cap, then the cited documents."""
    pages = list(range(1, len(scope.doc.pages) + 1))  # page numbers, no page read
    cap = scope.page_cap
    kept = pages[:cap] if cap is not None else pages
    data: dict[str, Any] = {"pages": len(kept), "page_cap": cap}
    if cap is not None and len(kept) < len(pages):
        data["capped_pages"] = pages[len(kept) :]
        reductions.page_cap(scope.trajectory, pages[len(kept) :], cap, source=scope.page_cap_source)
    refs = scope.refs(kept) + scope.cited_refs()
    data["cited_pages"] = len(refs) - len(kept)
    add_step(scope.trajectory, "select", data)
    return refs


# --------------------------------------------------------------------------- top-k RAG


def order_hits(hits: Sequence[PageHit], order: Order) -> list[PageHit]:
    """Hits in rank order, or re-sorted into page order (ScholScan's official setting)."""
    if order == "page":
        return sorted(hits, key=lambda h: (h.doc_id, h.page))
    return sorted(hits, key=lambda h: h.rank)


def retrieve(scope: Scope, query: str, k: int, *, kind: str = "retrieve") -> list[PageHit] | None:
    """Search the primary document; a failing or missing retriever marks ``retriever_error``."""
    retriever = scope.ctx.retriever
    if retriever is None:
        scope.trajectory.fail(Status.RETRIEVER_ERROR, "no retriever configured for this strategy")
        add_step(scope.trajectory, kind, {"query": query, "k": k, "error": "no retriever"})
        return None
    try:
        hits = retriever.search(query, k, doc_ids=[scope.doc.id])
    except Exception as exc:  # any retriever failure is recorded on this item only
        message = f"retriever {getattr(retriever, 'name', '?')} failed: {type(exc).__name__}: {exc}"
        scope.trajectory.fail(Status.RETRIEVER_ERROR, message)
        add_step(scope.trajectory, kind, {"query": query, "k": k, "error": message})
        return None
    valid = [h for h in hits if h.doc_id == scope.doc.id and 1 <= h.page <= scope.doc.num_pages]
    if len(valid) < len(hits):
        scope.trajectory.metadata["ignored_hits"] = len(hits) - len(valid)
    return valid


def hit_record(hits: Sequence[PageHit]) -> list[dict[str, Any]]:
    """Hits as recorded in steps and metadata (page, rank, rounded score)."""
    return [{"page": h.page, "rank": h.rank, "score": round(h.score, 6)} for h in hits]


def topk_pages(scope: Scope, hits: Sequence[PageHit], order: Order) -> list[PageRef]:
    """The hits' pages in reading order; the ranking and the order go to the metadata."""
    ordered = order_hits(hits, order)
    scope.trajectory.metadata["retrieved"] = hit_record(order_hits(hits, "rank"))
    scope.trajectory.metadata["page_order"] = order
    return scope.refs([h.page for h in ordered])


# --------------------------------------------------------------------------- oracles


def oracle_pages(scope: Scope) -> list[PageRef]:
    """The gold pages of the primary document (in page order), then the cited documents."""
    gold = [p for p in scope.sample.gold_pages if 1 <= p <= scope.doc.num_pages]
    data: dict[str, Any] = {"pages": gold, "source": "gold_pages"}
    outside = sorted(set(scope.sample.gold_pages) - set(gold))
    if outside:
        data["outside_document"] = outside
    if not gold:
        scope.trajectory.metadata["oracle_note"] = "no gold pages: the reader sees no page"
    add_step(scope.trajectory, "select", data)
    return scope.refs(gold) + scope.cited_refs()


def _doc_for(region: Region, scope: Scope) -> Document:
    if region.doc_id:
        for doc in (scope.doc, *scope.others):
            if region.doc_id in {doc.id, doc.name}:
                return doc
    return scope.doc


def region_text(region: Region, document: Document, limit: int = 400) -> str:
    """The region's own text, else the words of the page whose center lies inside its box."""
    if region.text:
        return region.text.strip()[:limit]
    if not 1 <= region.page <= len(document.pages):
        return ""
    box = region.bbox
    words = [
        w[4]
        for w in document.page(region.page).words
        if box.x1 <= (w[0] + w[2]) / 2 <= box.x2 and box.y1 <= (w[1] + w[3]) / 2 <= box.y2
    ]
    return " ".join(words)[:limit]


def describe_regions(sample: Sample, scope: Scope) -> str:
    """The oracle's region section: each gold region's page, type, box and text."""
    lines = []
    for i, region in enumerate(sample.gold_regions, start=1):
        doc = _doc_for(region, scope)
        label = doc.page(region.page).doc_page if 1 <= region.page <= doc.num_pages else "none"
        box = ", ".join(f"{v:.3f}" for v in region.bbox.as_list())
        where = f"{doc.name}, " if doc is not scope.doc else ""
        line = f"- Region {i}: {where}page {region.page} (printed: {label}), "
        line += f"{region.element_type}, box [{box}]"
        text = region_text(region, doc)
        lines.append(line + (f'; text: "{text}"' if text else ""))
    return REGIONS_SECTION.render_user(items="\n".join(lines) or "- (none)")


def describe_facts(sample: Sample) -> str:
    """The oracle's fact section: each gold fact with its page."""
    lines = [f"- (page {f.page}) {f.text.strip()}" for f in sample.gold_facts]
    return FACTS_SECTION.render_user(items="\n".join(lines) or "- (none)")


def oracle_extra(scope: Scope, level: OracleLevel) -> str:
    """The injected oracle evidence for a level (cumulative: facts include regions)."""
    parts = []
    if level in ("regions", "facts"):
        parts.append(describe_regions(scope.sample, scope))
        scope.trajectory.prompt_hashes["oracle_regions"] = REGIONS_SECTION.hash
    if level == "facts":
        parts.append(describe_facts(scope.sample))
        scope.trajectory.prompt_hashes["oracle_facts"] = FACTS_SECTION.hash
    if parts:
        add_step(
            scope.trajectory,
            "inject",
            {
                "level": level,
                "regions": len(scope.sample.gold_regions),
                "facts": len(scope.sample.gold_facts) if level == "facts" else 0,
            },
        )
    return "".join(parts)
