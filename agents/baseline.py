"""Node logic of the single-read strategies: full document, top-k RAG and the oracles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from agents.common import add_step
from agents.context import PageRef
from agents.prompts.oracle import FACTS_SECTION, REGIONS_SECTION
from agents.scope import Scope
from scanrag.schemas import Document, PageHit, Region, Sample, Status

Order = Literal["rank", "page"]
ORDERS: tuple[str, ...] = ("rank", "page")
OracleLevel = Literal["pages", "regions", "facts"]


# --------------------------------------------------------------------------- full document


def full_doc_pages(scope: Scope) -> list[PageRef]:
    """Every page of the primary document up to the page cap, then the cited documents."""
    pages = [p.number for p in scope.doc.pages]
    cap = scope.page_cap
    kept = pages[:cap] if cap is not None else pages
    data: dict[str, Any] = {"pages": len(kept), "page_cap": cap}
    if len(kept) < len(pages):
        data["capped_pages"] = pages[len(kept) :]
        scope.trajectory.metadata["page_cap"] = {"cap": cap, "dropped": len(pages) - len(kept)}
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
    return [{"page": h.page, "rank": h.rank, "score": round(h.score, 6)} for h in hits]


def topk_pages(scope: Scope, hits: Sequence[PageHit], order: Order) -> list[PageRef]:
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
    """The region's own text, else the words of the page whose centre lies inside its box."""
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
