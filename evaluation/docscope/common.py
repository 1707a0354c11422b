"""What the DocScope scorers share: which pages, boxes and facts belong to the primary
document, the correctly retrieved pages P̂ = P ∩ P*, predicted boxes per page (valid and
invalid), and the citation-scoped evidence units of a page.

Documents: gold pages, regions and facts refer to the sample's primary document. A region
or citation naming another document (``doc_id`` set and not one of the primary document's
names) is left out; a sample with a single document accepts every ``doc_id``, because
strategies may name documents by content hash while samples name them by file.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from scanrag.evaluation.judging import JudgeContext
from scanrag.schemas import BBox, Fact, Region, Sample, Trajectory

_ANSWER_BLOCK = re.compile(r"<\s*answer\s*>.*?(<\s*/\s*answer\s*>|$)", re.IGNORECASE | re.DOTALL)
_CITATION_MARK = re.compile(r"\[\s*page\s*[=:][^\]]*\]?\]?", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class DocScope:
    """The primary document's names, for filtering pages, boxes and facts."""

    names: frozenset[str]
    single: bool

    def accepts(self, doc_id: str | None) -> bool:
        return self.single or doc_id is None or doc_id in self.names


def doc_scope(trajectory: Trajectory, sample: Sample, ctx: JudgeContext | None = None) -> DocScope:
    names = {sample.primary_doc}
    if trajectory.doc_ids:
        names.add(trajectory.doc_ids[0])
    source = ctx.documents if ctx is not None else None
    if source is not None:
        with contextlib.suppress(OSError, ValueError):
            names.add(source.document(sample.primary_doc).id)
    single = len(sample.doc_ids) == 1 and not sample.cited_doc_ids
    return DocScope(frozenset(names), single)


def predicted_pages(trajectory: Trajectory) -> set[int]:
    """P: the trajectory's evidence pages (global 1-based)."""
    return {int(p) for p in trajectory.pages}


def gold_regions_by_page(sample: Sample, scope: DocScope) -> dict[int, list[Region]]:
    out: dict[int, list[Region]] = {}
    for region in sample.gold_regions:
        if scope.accepts(region.doc_id):
            out.setdefault(region.page, []).append(region)
    return out


def gold_facts_by_page(sample: Sample, scope: DocScope) -> dict[int, list[Fact]]:
    out: dict[int, list[Fact]] = {}
    for fact in sample.gold_facts:
        if scope.accepts(fact.doc_id):
            out.setdefault(fact.page, []).append(fact)
    return out


def _box_from_values(values: list[float] | None) -> BBox | bool | None:
    """A valid box, ``False`` for four numbers that are not a valid box, ``None`` for none."""
    if values is None or len(values) != 4:
        return None
    try:
        return BBox.from_list(values)
    except (ValueError, TypeError):
        return False


@dataclass
class PagePrediction:
    """Predicted boxes on one page: the valid ones, and the invalid ones as written."""

    valid: list[BBox] = field(default_factory=list)
    invalid_boxes: list[list[float]] = field(default_factory=list)

    @property
    def invalid(self) -> int:
        return len(self.invalid_boxes)

    @property
    def n_pred(self) -> int:
        return len(self.valid) + self.invalid


def predicted_boxes(trajectory: Trajectory, page: int, scope: DocScope) -> PagePrediction:
    """Boxes predicted on ``page``.

    Valid boxes are the trajectory's regions on that page; a trajectory without any regions
    falls back to the valid boxes of its citations. Invalid boxes (four numbers outside
    [0, 1]² or with corners out of order) come from citations, where the parser keeps them;
    they count in ``n_pred`` but are never drawn or unioned.
    """
    out = PagePrediction()
    seen: set[BBox] = set()
    for region in trajectory.regions:
        if region.page == page and scope.accepts(region.doc_id) and region.bbox not in seen:
            seen.add(region.bbox)
            out.valid.append(region.bbox)
    use_citation_boxes = not trajectory.regions
    for citation in trajectory.citations:
        if citation.page != page or not scope.accepts(citation.doc_id):
            continue
        box = _box_from_values(citation.bbox)
        if box is False and citation.bbox is not None:
            out.invalid_boxes.append([float(v) for v in citation.bbox])
        elif isinstance(box, BBox) and use_citation_boxes and box not in seen:
            seen.add(box)
            out.valid.append(box)
    return out


def clean_unit(text: str) -> str:
    """An evidence unit without answer blocks or citation markup; empty if nothing is left."""
    text = _ANSWER_BLOCK.sub(" ", text)
    text = _CITATION_MARK.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    return text if any(ch.isalnum() for ch in text) else ""


def evidence_units(trajectory: Trajectory, page: int, scope: DocScope) -> list[str]:
    """The citation-scoped evidence for gold facts of ``page``.

    For every structured citation whose ``page`` equals ``page`` (its ``doc_page`` is never
    looked at), the unit is the sentence / list item / table row the citation closes
    (``Citation.sentence``). A citation with an empty unit follows another citation directly
    and shares the unit before the first citation of that run. Structured facts of the
    trajectory on ``page`` (JSON-output strategies) are units too: each is a statement tied to
    that page. The final answer is never used. Duplicates are dropped, order kept.
    """
    units: list[str] = []
    previous = ""
    for citation in trajectory.citations:
        text = clean_unit(citation.sentence)
        if text:
            previous = text
        else:
            text = previous
        if citation.page == page and scope.accepts(citation.doc_id) and text:
            units.append(text)
    for fact in trajectory.facts:
        if fact.page == page and scope.accepts(fact.doc_id):
            text = clean_unit(fact.text)
            if text:
                units.append(text)
    return _dedupe(units)


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.casefold()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def answer_text(trajectory: Trajectory) -> str:
    return (trajectory.answer or "").strip()
