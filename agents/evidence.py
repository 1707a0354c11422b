"""The parsed reader output both output paths produce, and the builder that validates it.

The free-text citation parser (``scanrag.agents.citations``) and the JSON path
(``scanrag.agents.structured``) each turn a model reply into a list of *cited statements* — a
sentence plus the page, printed page label and box it cites — and hand them to
:class:`EvidenceBuilder`. The builder alone decides what is valid, so the two paths cannot
drift apart:

* a citation whose page lies outside the document (or whose page is unreadable) is invalid;
  it adds nothing to pages, regions or facts;
* a citation with a readable, in-range page but a bad box (outside [0, 1], corners out of
  order, not four numbers) is invalid too, yet its page still counts as an evidence page and its
  sentence still counts as a fact (without a box): DocScope scores such a page as not covered
  rather than pretending it was never cited;
* a citation without a box is valid: it names a page and a fact but no region.

Every citation, valid or not, is kept in ``citations`` with the reason it failed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from scanrag.schemas import (
    UNANSWERABLE,
    BBox,
    Citation,
    Document,
    EvidencePair,
    Fact,
    Region,
    ReportedIssue,
    Trajectory,
)

_EPS = 1e-9


@dataclass(frozen=True)
class DocInfo:
    """What the parser needs to know about one document: its id, name and page count."""

    id: str
    name: str
    num_pages: int | None = None

    @classmethod
    def of(cls, document: Document) -> DocInfo:
        return cls(id=document.id, name=document.name, num_pages=document.num_pages)


@dataclass(frozen=True)
class ParseContext:
    """The documents a reply may cite. The first one (``primary``) is the default target.

    Evidence pages are reported for the primary document only; citations of other documents
    (``doc="..."``, cross-paper items) keep their ``doc_id`` on regions and facts.
    """

    primary: DocInfo = DocInfo(id="", name="")
    others: tuple[DocInfo, ...] = ()

    @classmethod
    def for_documents(cls, primary: Document, others: Sequence[Document] = ()) -> ParseContext:
        return cls(DocInfo.of(primary), tuple(DocInfo.of(d) for d in others))

    @classmethod
    def with_pages(cls, num_pages: int | None) -> ParseContext:
        return cls(DocInfo(id="", name="", num_pages=num_pages))

    def resolve(self, key: str | None) -> DocInfo | None:
        """The document a ``doc=`` key names (id, file name or stem); ``None`` if unknown."""
        if key is None or not key.strip():
            return self.primary
        wanted = key.strip().lower()
        for info in (self.primary, *self.others):
            stem = info.name.rsplit(".", 1)[0].lower()
            if wanted in {info.id.lower(), info.name.lower(), stem}:
                return info
        return None


@dataclass
class CitedStatement:
    """One citation as read from a reply, before validation."""

    sentence: str
    raw: str = ""
    page: int | None = None
    doc_page: str | None = None
    bbox: list[float] | None = None
    element_type: str = "text"
    doc: str | None = None
    problem: str | None = None  # set by a parser that could not read the citation at all


@dataclass(frozen=True)
class Added:
    """What one citation contributed: the kept citation, its counted page and its region."""

    citation: Citation
    page: int | None = None
    region: Region | None = None


class ParsedOutput(BaseModel):
    """A reader reply turned into trajectory fields, plus notes on what could not be used."""

    parser: str
    pages: list[int] = Field(default_factory=list)
    regions: list[Region] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    answer: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    evidence_chain: list[EvidencePair] = Field(default_factory=list)
    issues: list[ReportedIssue] = Field(default_factory=list)
    verdict: bool | None = None
    notes: dict[str, Any] = Field(default_factory=dict)

    @property
    def valid_citations(self) -> list[Citation]:
        return [c for c in self.citations if c.valid]

    @property
    def usable(self) -> bool:
        """Whether anything at all could be read from the reply."""
        return bool(
            self.answer is not None
            or self.pages
            or self.valid_citations
            or self.issues
            or self.evidence_chain
            or self.verdict is not None
        )


def format_number(value: float) -> str:
    text = f"{float(value):.4f}".rstrip("0").rstrip(".")
    return text if text not in {"", "-0"} else "0"


def format_citation(page: int, doc_page: str | None, bbox: Sequence[float] | None) -> str:
    """The canonical spelling of a citation in the grammar of spec §1."""
    parts = [f"page={page}"]
    if doc_page is not None:
        parts.append(f'doc_page="{doc_page}"')
    if bbox is not None:
        parts.append("bbox=[" + ", ".join(format_number(v) for v in bbox) + "]")
    return "[" + ", ".join(parts) + "]"


def bbox_problem(values: Sequence[float]) -> str | None:
    """Why ``values`` is not a valid normalized box, or ``None`` if it is."""
    if len(values) != 4:
        return f"bbox needs 4 numbers, got {len(values)}"
    if any(v != v for v in values):  # NaN
        return "bbox contains NaN"
    if any(not (-_EPS <= v <= 1 + _EPS) for v in values):
        return "bbox outside [0, 1]"
    x1, y1, x2, y2 = values
    if x1 > x2 + _EPS or y1 > y2 + _EPS:
        return "bbox corners out of order (need x1<=x2 and y1<=y2)"
    return None


_ANSWER_WS = re.compile(r"\s+")
_UNANSWERABLE = re.compile(r"^\W*(?:unanswerable|not answerable)\W*$", re.IGNORECASE)


def normalize_answer(text: str | None) -> str | None:
    """Collapse whitespace; map a bare "unanswerable" (any case) to exactly ``UNANSWERABLE``."""
    if text is None:
        return None
    cleaned = _ANSWER_WS.sub(" ", text).strip()
    if not cleaned:
        return None
    if _UNANSWERABLE.match(cleaned):
        return UNANSWERABLE
    return cleaned


@dataclass
class EvidenceBuilder:
    """Validates cited statements and accumulates pages, regions, facts and citations."""

    context: ParseContext = field(default_factory=ParseContext)
    pages: set[int] = field(default_factory=set)
    regions: list[Region] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    other_doc_pages: set[tuple[str, int]] = field(default_factory=set)

    def add(self, item: CitedStatement) -> Added:
        """Validate one statement, record its citation and say what it contributed."""
        doc = self.context.resolve(item.doc)
        doc_id = doc.id if doc is not None and doc.id else None
        citation = Citation(
            sentence=item.sentence,
            raw=item.raw,
            page=item.page,
            doc_page=item.doc_page,
            bbox=list(item.bbox) if item.bbox is not None else None,
            doc_id=doc_id,
        )
        page_reason = self._page_problem(item, doc)
        if page_reason is not None:
            return Added(self._keep(citation, page_reason))
        assert item.page is not None  # checked by _page_problem
        page = item.page
        assert doc is not None
        if doc is self.context.primary:
            self.pages.add(page)
        else:
            self.other_doc_pages.add((doc_id or "", page))
        box_reason = bbox_problem(item.bbox) if item.bbox is not None else None
        box = BBox.from_list(item.bbox) if item.bbox is not None and box_reason is None else None
        region_index = self._region(page, box, item.element_type, doc_id) if box else None
        self._fact(page, item.sentence, box, doc_id, region_index)
        kept = self._keep(citation, item.problem or box_reason)
        region = self.regions[region_index] if region_index is not None else None
        return Added(kept, page, region)

    def add_region(
        self, page: int | None, bbox: list[float] | None, element_type: str, doc: str | None
    ) -> None:
        """A region given without a statement (JSON path): it becomes a citation without text
        unless a statement already cited the same page and box (valid or not)."""
        info = self.context.resolve(doc)
        doc_id = info.id if info is not None and info.id else None
        for citation in self.citations:
            if (citation.page, citation.bbox, citation.doc_id) == (page, bbox, doc_id):
                return
        raw = format_citation(page, None, bbox) if page is not None else ""
        self.add(
            CitedStatement(
                sentence="", raw=raw, page=page, bbox=bbox, element_type=element_type, doc=doc
            )
        )

    def _page_problem(self, item: CitedStatement, doc: DocInfo | None) -> str | None:
        if item.problem is not None and item.page is None:
            return item.problem
        if item.page is None:
            return "malformed citation: no page number"
        if doc is None:
            return f"unknown document {item.doc!r}"
        if item.page < 1:
            return f"page {item.page} out of range: pages are 1-based"
        if doc.num_pages is not None and item.page > doc.num_pages:
            return f"page {item.page} out of range 1..{doc.num_pages}"
        return None

    def _keep(self, citation: Citation, reason: str | None) -> Citation:
        if reason is not None:
            citation.valid = False
            citation.reason = reason
        self.citations.append(citation)
        return citation

    def _find_region(self, page: int, box: BBox, doc_id: str | None) -> int | None:
        for index, region in enumerate(self.regions):
            if region.page == page and region.bbox == box and region.doc_id == doc_id:
                return index
        return None

    def _region(self, page: int, box: BBox, element_type: str, doc_id: str | None) -> int:
        found = self._find_region(page, box, doc_id)
        if found is not None:
            return found
        self.regions.append(Region(page=page, bbox=box, element_type=element_type, doc_id=doc_id))
        return len(self.regions) - 1

    def _fact(
        self, page: int, text: str, box: BBox | None, doc_id: str | None, region: int | None
    ) -> None:
        text = text.strip()
        if not text:
            return
        fact = Fact(page=page, text=text, bbox=box, doc_id=doc_id, region_index=region)
        if fact not in self.facts:
            self.facts.append(fact)

    def output(self, parser: str, **fields: Any) -> ParsedOutput:
        notes = fields.pop("notes", {})
        if self.other_doc_pages:
            notes["other_doc_pages"] = sorted([list(p) for p in self.other_doc_pages])
        return ParsedOutput(
            parser=parser,
            pages=sorted(self.pages),
            regions=list(self.regions),
            facts=list(self.facts),
            citations=list(self.citations),
            notes=notes,
            **fields,
        )


def merge_citations(
    context: ParseContext | None, citations: Sequence[Citation], parser: str = "merged"
) -> ParsedOutput:
    """Pages, regions and facts rebuilt from citations gathered in several replies."""
    builder = EvidenceBuilder(context or ParseContext())
    for c in citations:
        builder.add(
            CitedStatement(
                sentence=c.sentence,
                raw=c.raw,
                page=c.page,
                doc_page=c.doc_page,
                bbox=c.bbox,
                doc=c.doc_id,
            )
        )
    return builder.output(parser)


def adopt_evidence(trajectory: Trajectory, gathered: ParsedOutput, source: str) -> bool:
    """Give a final reply without usable citations the evidence gathered on the way.

    Returns whether it did; the trajectory's metadata names the ``source`` when it did.
    """
    if any(c.valid for c in trajectory.citations) or not gathered.valid_citations:
        return False
    trajectory.pages = list(gathered.pages)
    trajectory.regions = list(gathered.regions)
    trajectory.facts = list(gathered.facts)
    trajectory.citations = [*trajectory.citations, *gathered.citations]
    trajectory.metadata["evidence_source"] = source
    return True
