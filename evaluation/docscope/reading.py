"""What a scoring profile reads from one trajectory: an :class:`ItemView`.

The scorers never look at a trajectory directly: they read its view, which the profile
builds one of two ways (``Profile.reads_reply``):

* **our fields** (paper profile): pages are the trajectory's valid evidence pages; the boxes
  of a page are its valid regions there, de-duplicated (with no regions, the valid boxes of
  its citations), plus the invalid four-number boxes of its citations, which count but are
  never drawn; the fact evidence of a page is the citation-scoped units
  (:func:`scanrag.evaluation.docscope.common.evidence_units`); the answer is the parsed answer;
* **the reply as the released parser reads it** (official profile,
  :func:`scanrag.evaluation.docscope.official.view.official_view`): every cited page, every
  four-number box cited on a page with duplicates kept (those flagged normalized are drawn,
  clipped to the page; the others are listed as skipped), the whole reply as fact evidence,
  and the tagged answer or else the whole reply for the answer judge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scanrag.evaluation.docscope.common import (
    DocScope,
    answer_text,
    doc_scope,
    evidence_units,
    predicted_boxes,
)
from scanrag.evaluation.docscope.official.view import OK_STATUSES, official_view
from scanrag.evaluation.docscope.profiles import Profile
from scanrag.evaluation.judging import JudgeContext
from scanrag.schemas import BBox, Sample, Trajectory


@dataclass
class PageBoxes:
    """The predicted boxes of one page as a profile reads them."""

    shown: list[list[float]] = field(default_factory=list)  # drawn in red, listed to the judge
    shapes: list[BBox] = field(default_factory=list)  # those boxes as drawn (geometry, overlay)
    undrawn: list[list[float]] = field(default_factory=list)  # counted, never drawn

    @property
    def n_pred(self) -> int:
        return len(self.shown) + len(self.undrawn)


@dataclass
class ItemView:
    """A trajectory's predictions as one profile reads them."""

    ok: bool  # the model call succeeded
    status: str
    source: str  # where the predictions were read from
    pages: list[Any]
    answer: str  # what the answer judge sees
    has_answer_tag: bool
    raw: str
    boxes: Callable[[int], PageBoxes]
    evidence: Callable[[int], list[str]]  # what the fact judge reads for a page


def drawable(boxes: Sequence[Sequence[float]]) -> list[BBox]:
    """Boxes as drawn on the page: corners ordered, clipped to it; invisible ones dropped."""
    out = []
    for values in boxes:
        x1, x2 = sorted((min(1.0, max(0.0, values[0])), min(1.0, max(0.0, values[2]))))
        y1, y2 = sorted((min(1.0, max(0.0, values[1])), min(1.0, max(0.0, values[3]))))
        if x2 > x1 and y2 > y1:
            out.append(BBox(x1=x1, y1=y1, x2=x2, y2=y2))
    return out


def _paper_boxes(trajectory: Trajectory, scope: DocScope) -> Callable[[int], PageBoxes]:
    def on(page: int) -> PageBoxes:
        found = predicted_boxes(trajectory, page, scope)
        return PageBoxes([b.as_list() for b in found.valid], list(found.valid), found.invalid_boxes)

    return on


def paper_view(trajectory: Trajectory, sample: Sample, ctx: JudgeContext | None) -> ItemView:
    scope = doc_scope(trajectory, sample, ctx)
    status = trajectory.status.value
    return ItemView(
        ok=status in OK_STATUSES,
        status=status,
        source="trajectory",
        pages=sorted({int(p) for p in trajectory.pages}),
        answer=answer_text(trajectory),
        has_answer_tag=trajectory.answer is not None,
        raw=trajectory.raw_output or "",
        boxes=_paper_boxes(trajectory, scope),
        evidence=lambda page: evidence_units(trajectory, page, scope),
    )


def released_view(trajectory: Trajectory) -> ItemView:
    view = official_view(trajectory)

    def boxes(page: int) -> PageBoxes:
        shown, skipped = view.boxes_on(page)
        return PageBoxes(shown, drawable(shown), skipped)

    return ItemView(
        ok=view.ok,
        status=view.status,
        source=view.source,
        pages=list(view.predicted_pages),
        answer=view.model_answer,
        has_answer_tag=view.has_answer_tag,
        raw=view.raw,
        boxes=boxes,
        evidence=lambda page: [view.raw],
    )


def read_view(
    profile: Profile, trajectory: Trajectory, sample: Sample, ctx: JudgeContext | None
) -> ItemView:
    """The trajectory as ``profile`` reads it."""
    if profile.reads_reply:
        return released_view(trajectory)
    return paper_view(trajectory, sample, ctx)
