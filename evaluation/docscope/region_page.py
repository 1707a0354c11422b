"""The region judge on one page: draw the page, ask the judge, read its labels.

The page is rendered with the gold boxes in green (``GOLD[i]``) and the drawable predicted
boxes in red (:mod:`scanrag.evaluation.docscope.overlay`); one call labels every gold box of the
page. With ``Profile.shortcuts`` (paper) a page without a drawable predicted box is labelled
not_covered without a call (the validity gate). A page that cannot be drawn (no PDF, a page
past its end) gives every gold box ``render_failed``. The messages are our prompt
(:mod:`scanrag.evaluation.docscope.region_prompt`, ids ``GOLD[i]``) or the user's ``region`` prompt
file (:mod:`scanrag.evaluation.judge_prompts`, ids ``g<i>`` as DocScope's prompt expects, gold boxes
in pixels of a 144-DPI render as the benchmark writes them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from scanrag.evaluation.docscope import region_prompt as prompt
from scanrag.evaluation.docscope.gold import WHOLE_PAGE, GoldBox
from scanrag.evaluation.docscope.labelling import label_items
from scanrag.evaluation.docscope.overlay import cached_overlay
from scanrag.evaluation.docscope.profiled import Opening
from scanrag.evaluation.docscope.reading import PageBoxes
from scanrag.evaluation.docscope.region_labels import LABELS, ROLE, RegionJudgment, labels_from
from scanrag.evaluation.judge_prompts import custom_messages, custom_template, template_hash
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import JudgeRecord
from scanrag.llm.types import Message
from scanrag.schemas import BBox, Region, Sample

RENDER_DPI = 144  # the benchmark states gold boxes in pixels of a 144-DPI render
_LABELS = frozenset(LABELS)


class BoxOutcome(BaseModel):
    page: int
    index: int
    gold_id: str
    status: str
    label: str | None = None
    reason: str | None = None


class PageOutcome(BaseModel):
    """What one page of P̂ adds: its gold boxes' outcomes and its predicted boxes."""

    page: int
    boxes: list[BoxOutcome] = []
    n_shown: int = 0  # predicted boxes drawn and listed to the judge
    undrawn: list[list[float]] = []  # predicted boxes counted but not drawn
    gated: bool = False  # labelled not_covered without a call (no drawable box)
    no_gold: bool = False  # a page of P̂ without gold boxes: only its boxes count
    record: JudgeRecord | None = None

    @property
    def n_pred(self) -> int:
        return self.n_shown + len(self.undrawn)

    @property
    def labels(self) -> list[str]:
        return [b.label for b in self.boxes if b.status == "ok" and b.label]

    @property
    def counted(self) -> bool:
        """Whether the page's predicted boxes enter the sums (some gold box was labelled,
        or there was no gold box to label)."""
        return self.no_gold or bool(self.labels)


def _pixels(box: BBox, size: tuple[int, int], dpi: int) -> list[float]:
    """``box`` in pixels of a 144-DPI render, from a render at ``dpi`` of ``size`` pixels."""
    width, height = size[0] * RENDER_DPI / dpi, size[1] * RENDER_DPI / dpi
    scales = (width, height, width, height)
    return [round(v * k, 1) for v, k in zip(box.as_list(), scales, strict=True)]


def custom_region_messages(
    ctx: JudgeContext,
    opening: Opening,
    page: int,
    gold: Sequence[GoldBox],
    predicted: Sequence[Sequence[float]],
    image: Path,
) -> tuple[list[Message], str]:
    """The messages of the user's ``region`` prompt file and its hash; gold boxes as the
    benchmark wrote them when the profile reads its row, else in pixels of a 144-DPI render."""
    template = custom_template(ctx, ROLE)
    if template is None:
        raise ValueError("no prompt file for the region role")
    from PIL import Image

    with Image.open(image) as picture:
        size = picture.size
    dpi = int(getattr(ctx.documents, "dpi", RENDER_DPI) or RENDER_DPI)
    lines = []
    for i, g in enumerate(gold):
        shown = g.pixels if g.pixels is not None else _pixels(g.box or WHOLE_PAGE, size, dpi)
        lines.append(
            f"id=g{i + 1} :: index_on_page={i + 1}, element_type={g.element_type}, "
            f"gold_bbox_px={shown}"
        )
    fields = {
        "question": opening.gold.question,
        "gold_answer": opening.gold.answer_text,
        "gt_page": page,
        "gold_total_on_page": len(gold),
        "gold_facts_block": "\n".join(lines),
        "n_pred": len(predicted),
        "pred_bboxes_norm": [list(b) for b in predicted],
    }
    return custom_messages(template, fields, image), template_hash(template)


def _messages(
    ctx: JudgeContext,
    opening: Opening,
    page: int,
    gold: Sequence[GoldBox],
    shown: Sequence[Sequence[float]],
    image: Path,
) -> tuple[list[Message], str, list[str]]:
    """Messages, prompt hash and the gold ids the reply must echo."""
    if custom_template(ctx, ROLE) is not None:
        messages, prompt_hash = custom_region_messages(ctx, opening, page, gold, shown, image)
        return messages, prompt_hash, [f"g{i + 1}" for i in range(len(gold))]
    answer = opening.gold.answer
    messages = prompt.build_messages(
        image=image,
        question=opening.gold.question,
        answer=None if answer is None else str(answer),
        page=page,
        gold=[
            Region(page=page, bbox=g.box or WHOLE_PAGE, element_type=g.element_type) for g in gold
        ],
        predicted=shown,
    )
    return messages, prompt.PROMPT_HASH, [f"GOLD[{i + 1}]" for i in range(len(gold))]


def _overlay(
    ctx: JudgeContext, sample: Sample, page: int, gold: Sequence[GoldBox], pred: Sequence[BBox]
) -> Any:
    if ctx.documents is None:
        raise FileNotFoundError("no document source to render pages from")
    png = ctx.documents.render(sample.primary_doc, page)
    boxes = [g.box for g in gold if g.box is not None and g.drawn]
    return cached_overlay(ctx.documents.overlay_dir, png, boxes, pred)


def _all(page: int, ids: Sequence[str], status: str, label: str | None = None) -> list[BoxOutcome]:
    return [
        BoxOutcome(page=page, index=i, gold_id=ident, status=status, label=label)
        for i, ident in enumerate(ids)
    ]


async def judge_page(ctx: JudgeContext, opening: Opening, sample: Sample, page: int) -> PageOutcome:
    """The outcome of every gold box of ``page`` (a page of P̂ with gold boxes)."""
    gold = opening.gold.boxes_on(page)
    pred: PageBoxes = opening.view.boxes(page)
    plain_ids = [f"g{i + 1}" for i in range(len(gold))]

    def outcome(boxes: list[BoxOutcome], **fields: Any) -> PageOutcome:
        return PageOutcome(
            page=page, boxes=boxes, n_shown=len(pred.shown), undrawn=pred.undrawn, **fields
        )

    if opening.profile.shortcuts and not pred.shapes:
        return outcome(_all(page, plain_ids, "ok", "not_covered"), gated=True)
    key = f"page={page}"
    try:
        image = await asyncio.to_thread(_overlay, ctx, sample, page, gold, pred.shapes)
        messages, prompt_hash, ids = _messages(ctx, opening, page, gold, pred.shown, image)
    except Exception as exc:  # missing PDF, a page past its end, MuPDF or PIL: this page only
        record = JudgeRecord(
            role=ROLE,
            model=ctx.model_for(ROLE),
            status="render_failed",
            key=key,
            error=f"{type(exc).__name__}: {exc}",
        )
        return outcome(_all(page, plain_ids, "render_failed"), record=record)
    record, items = await label_items(
        ctx,
        opening.profile,
        ROLE,
        messages,
        prompt_hash,
        key=key,
        ids=ids,
        allowed=_LABELS,
        schema=RegionJudgment,
        labeller=labels_from,
    )
    boxes = [
        BoxOutcome(page=page, index=i, gold_id=ids[i], status=status, label=label, reason=reason)
        for i, (status, label, reason) in enumerate(items)
    ]
    return outcome(boxes, record=record)
