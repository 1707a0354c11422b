"""The gold of one item as a scoring profile reads it: pages, boxes and facts by page, the
question and the reference answer.

Three sources, one shape (:class:`ItemGold`):

* the paper profile reads the sample's gold (``gold_pages``, ``gold_regions``,
  ``gold_facts``) restricted to the primary document (:class:`~scanrag.evaluation.docscope.common.
  DocScope`), with fact ids ``f1``, ``f2``... per page;
* the official profile reads the benchmark row as DocScope's released scorers read it
  (``code/eval/eval_common.py``) when the loader kept it (``metadata["docscope_row"]``, with
  ``profile: official``): gold pages are the evidence pages that are numbers, truncated to
  integers (``4.0`` is page 4, even past the PDF's end); the gold boxes of a page are the
  evidences whose page equals it; the facts of a page are those naming one of its evidences
  by ``local_id`` and every other fact is context for it; ids are the row's ``local_id``
  values (``f<k>`` by position on the page without one); the answer is ``answer_text`` (the
  whole ``answer`` value when that is empty, as the released code falls back);
* otherwise the official profile reads the sample's gold whole (no document filter), with
  the benchmark's fact ids when the sample kept them (``metadata["fact_ids"]``).

A sample of a question missing from the benchmark (imported with ``profile: official``) has
no gold pages, boxes or facts; its gold answer is the record's ``gold_answer`` or empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scanrag.evaluation.docscope.common import DocScope, gold_facts_by_page, gold_regions_by_page
from scanrag.schemas import BBox, Sample

ROW_KEY = "docscope_row"  # the benchmark row as written (loader option profile: official)
BOXES_KEY = "evidence_boxes"  # each evidence's normalized box (None: it cannot be placed)
NOT_IN_BENCHMARK = "not_in_benchmark"
WHOLE_PAGE = BBox(x1=0.0, y1=0.0, x2=1.0, y2=1.0)


@dataclass(frozen=True)
class GoldBox:
    """One gold box of a page: its position there, where it lies, how the judge is shown it."""

    index: int  # 0-based, among the page's gold boxes
    box: BBox | None  # normalized; None when it cannot be placed on the page
    element_type: str
    pixels: Any = None  # the benchmark's own value (a prompt file shows it as written)
    drawn: bool = True  # drawn on the page image (the released code draws four-number boxes)


@dataclass(frozen=True)
class GoldFact:
    fact_id: str
    text: str


@dataclass
class ItemGold:
    """Gold pages, boxes and facts by page, question and reference answer of one item."""

    question: str
    answer: Any  # the reference answer as the released code formats it (a string, mostly)
    answerable: bool
    pages: list[Any]  # ints, but a record of a question missing from the benchmark may say else
    boxes: dict[int, list[GoldBox]] = field(default_factory=dict)
    facts: dict[int, list[GoldFact]] = field(default_factory=dict)
    sibling_texts: dict[int, list[str]] = field(default_factory=dict)
    all_facts: list[str] = field(default_factory=list)
    known: bool = True
    as_written: bool = False  # the answer is shown as the released code formats it ("None")

    def boxes_on(self, page: int) -> list[GoldBox]:
        return self.boxes.get(page, [])

    def facts_on(self, page: int) -> list[GoldFact]:
        return self.facts.get(page, [])

    def siblings(self, page: int) -> list[str]:
        """The item's fact texts that are not facts of ``page`` (context for its judge)."""
        if page in self.sibling_texts:
            return self.sibling_texts[page]
        on_page = {f.text for f in self.facts_on(page)}
        return [text for text in self.all_facts if text not in on_page]

    @property
    def n_boxes(self) -> int:
        return sum(len(v) for v in self.boxes.values())

    @property
    def n_facts(self) -> int:
        return sum(len(v) for v in self.facts.values())

    @property
    def answer_text(self) -> str:
        """The reference answer as text ("" when there is none, unless it is shown as written)."""
        return "" if self.answer is None and not self.as_written else str(self.answer)


def paper_gold(sample: Sample, scope: DocScope) -> ItemGold:
    """The sample's gold on its primary document, fact ids ``f1``... per page."""
    regions = gold_regions_by_page(sample, scope)
    facts = gold_facts_by_page(sample, scope)
    return ItemGold(
        question=sample.question,
        answer=sample.answer,
        answerable=sample.answerable,
        pages=list(sample.gold_pages),
        boxes={
            page: [GoldBox(i, r.bbox, r.element_type) for i, r in enumerate(found)]
            for page, found in regions.items()
        },
        facts={
            page: [GoldFact(f"f{i + 1}", f.text) for i, f in enumerate(found)]
            for page, found in facts.items()
        },
        all_facts=[f.text for f in sample.gold_facts],
    )


def fact_ids(sample: Sample) -> list[str]:
    """The id of every gold fact: the benchmark's local ids when kept, else f1, f2, ..."""
    kept = sample.metadata.get("fact_ids")
    if isinstance(kept, list) and len(kept) == len(sample.gold_facts):
        return [str(k) for k in kept]
    return [f"f{j + 1}" for j in range(len(sample.gold_facts))]


def official_gold(sample: Sample) -> ItemGold:
    """The gold the official profile reads: the benchmark row when kept, else the sample's."""
    row = sample.metadata.get(ROW_KEY)
    if isinstance(row, Mapping):
        return gold_of_row(row, sample.metadata.get(BOXES_KEY))
    if sample.metadata.get(NOT_IN_BENCHMARK):
        pages = sample.metadata.get("record_gold_pages")
        return ItemGold(
            question=str(sample.metadata.get("record_question", "")),
            answer=sample.metadata.get("record_gold_answer", ""),
            answerable=True,
            pages=[p for p in pages if isinstance(p, int | float | str)]
            if isinstance(pages, list)
            else [],
            known=False,
            as_written=True,
        )
    boxes: dict[int, list[GoldBox]] = {}
    for region in sample.gold_regions:
        found = boxes.setdefault(region.page, [])
        found.append(GoldBox(len(found), region.bbox, region.element_type))
    ids = fact_ids(sample)
    facts: dict[int, list[GoldFact]] = {}
    for fid, fact in zip(ids, sample.gold_facts, strict=True):
        facts.setdefault(fact.page, []).append(GoldFact(fid, fact.text))
    return ItemGold(
        question=sample.question,
        answer=sample.answer,
        answerable=sample.answerable,
        pages=list(sample.gold_pages),
        boxes=boxes,
        facts=facts,
        sibling_texts={
            page: [f.text for f in sample.gold_facts if f.page != page] for page in facts
        },
        all_facts=[f.text for f in sample.gold_facts],
    )


# --------------------------------------------------------------------------- benchmark rows


def _number_page(value: Any) -> int | None:
    """An evidence page as the released code reads it: a number, truncated (``4.0`` → 4)."""
    return int(value) if isinstance(value, int | float) else None


def _answer(row: Mapping[str, Any]) -> tuple[Any, bool]:
    block = row.get("answer") or {}
    if not isinstance(block, Mapping):
        return block, True
    text = block.get("answer_text", "") or row.get("answer", "")
    return text, bool(block.get("is_answerable", True))


def _placed(boxes: Any, index: int) -> BBox | None:
    if not isinstance(boxes, Sequence) or index >= len(boxes):
        return None
    value = boxes[index]
    try:
        return BBox.from_list(value) if isinstance(value, Sequence) else None
    except (TypeError, ValueError):
        return None


def gold_of_row(row: Mapping[str, Any], placed: Any = None) -> ItemGold:
    """:class:`ItemGold` of a ``benchmark.json`` row read as the released scorers read it;
    ``placed`` holds each evidence's normalized box (the loader's, aligned with the row)."""
    evidences = [e for e in (row.get("evidences") or []) if isinstance(e, Mapping)]
    all_evidences = list(row.get("evidences") or [])
    facts = [f for f in (row.get("facts") or []) if isinstance(f, Mapping)]
    pages = sorted({p for e in evidences if (p := _number_page(e.get("page"))) is not None})
    answer, answerable = _answer(row)
    gold = ItemGold(
        question=str(row.get("question", "")),
        answer=answer,
        answerable=answerable,
        pages=pages,
        all_facts=[str(f.get("text_description", "") or "") for f in facts],
        as_written=True,
    )
    for page in pages:
        on_page = [(i, e) for i, e in enumerate(all_evidences) if _page_of(e) == page]
        gold.boxes[page] = [
            GoldBox(
                index=k,
                box=_placed(placed, i),
                element_type=str(e.get("element_type", "unknown")),
                pixels=e.get("bbox") or [],
                drawn=isinstance(e.get("bbox"), list) and len(e["bbox"]) == 4,
            )
            for k, (i, e) in enumerate(on_page)
        ]
        ids_on = {e["local_id"] for _, e in on_page if e.get("local_id")}
        page_facts = [f for f in facts if f.get("evidence_local_id") in ids_on]
        gold.facts[page] = [
            GoldFact(
                str(f.get("local_id") or f"f{k + 1}"), str(f.get("text_description", "") or "")
            )
            for k, f in enumerate(page_facts)
        ]
        gold.sibling_texts[page] = [
            str(f.get("text_description", "") or "")
            for f in facts
            if f.get("evidence_local_id") not in ids_on
        ]
    gold.boxes = {p: b for p, b in gold.boxes.items() if b}
    gold.facts = {p: f for p, f in gold.facts.items() if f}
    return gold


def _page_of(evidence: Any) -> Any:
    return evidence.get("page") if isinstance(evidence, Mapping) else None
