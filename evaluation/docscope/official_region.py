"""Region grounding under the official profile (DocScope's ``score_bbox.py``), plus the
geometric reference metrics over the same boxes.

Population: items whose inference succeeded, answerable or not, and for each the pages in
both the gold evidence pages and the cited pages. On every such page the judge is called,
always: there is no validity gate, so a page whose citations hold no drawable box is judged
with no red box. Predicted boxes are the page's citations with four numbers, duplicates
kept; those with every number in [-0.01, 1.5] are drawn (clipped to the page) and counted in
``n_pred_drawn``, the others are listed as skipped. Each gold box gets its own status:
``ok`` with a label, ``judge_parse_error`` when the reply has no exact label for its id,
``judge_error`` when the call failed, ``render_failed`` when the page could not be drawn.
The judge may write up to 2048 tokens and gets no second try at a malformed reply.

The summary counts the labels of ``ok`` boxes (``official_summary``: ``n``, ``by_label``),
the headline rates are covered / n and (covered + imprecise) / n. The paper's strict and
lenient capped-precision F1 are also computed from these rows (R = Σh / Σ|G| over ok boxes,
P = Σ min(h, n_pred) / Σ n_pred with n_pred every four-number box cited on the page,
duplicates included); the released summary script does not print them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evaluation.base import Scorer, StatsOptions, count_column, f1, ratio_metric, split_rows
from evaluation.docscope.geometry import gold_vs_union
from evaluation.docscope.official import (
    OfficialView,
    inference_skip,
    judge_items,
    official_view,
)
from evaluation.docscope.overlay import cached_overlay
from evaluation.docscope.profiles import OFFICIAL
from evaluation.docscope.region import LABELS, ROLE, region_prf
from evaluation.docscope.region_geometry import measure_boxes
from evaluation.judge_prompts import custom_messages, custom_template, template_hash
from evaluation.judging import JudgeContext
from evaluation.prompts import docscope_region as prompt
from evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
from scanrag.llm.types import Message
from scanrag.schemas import BBox, Region, Sample, Trajectory

RENDER_DPI = 144  # the released scorer states gold boxes in pixels of a 144-DPI render
_LABELS = frozenset(LABELS)


class _Box(BaseModel):
    page: int
    index: int
    gold_id: str
    status: str
    label: str | None = None
    reason: str | None = None


class _Page(BaseModel):
    page: int
    boxes: list[_Box]
    n_drawn: int
    skipped: list[list[float]]
    record: JudgeRecord | None = None


def drawable(boxes: Sequence[Sequence[float]]) -> list[BBox]:
    """Boxes as drawn on the page: corners ordered, clipped to it; invisible ones dropped."""
    out = []
    for values in boxes:
        x1, x2 = sorted((min(1.0, max(0.0, values[0])), min(1.0, max(0.0, values[2]))))
        y1, y2 = sorted((min(1.0, max(0.0, values[1])), min(1.0, max(0.0, values[3]))))
        if x2 > x1 and y2 > y1:
            out.append(BBox(x1=x1, y1=y1, x2=x2, y2=y2))
    return out


def gold_by_page(sample: Sample) -> dict[int, list[Region]]:
    out: dict[int, list[Region]] = {}
    for region in sample.gold_regions:
        out.setdefault(region.page, []).append(region)
    return out


def judged_pages(sample: Sample, view: OfficialView, gold: dict[int, list[Region]]) -> list[int]:
    """Pages in both the gold pages and the cited pages, with gold boxes."""
    return sorted(p for p in set(sample.gold_pages) & set(view.predicted_pages) if gold.get(p))


def _pixels(box: BBox, size: tuple[int, int], dpi: int) -> list[float]:
    """``box`` in pixels of a 144-DPI render, from a render at ``dpi`` of ``size`` pixels."""
    width, height = size[0] * RENDER_DPI / dpi, size[1] * RENDER_DPI / dpi
    scales = (width, height, width, height)
    return [round(v * k, 1) for v, k in zip(box.as_list(), scales, strict=True)]


def custom_region_messages(
    ctx: JudgeContext,
    sample: Sample,
    page: int,
    gold: Sequence[Region],
    predicted: Sequence[Sequence[float]],
    image: Path,
) -> tuple[list[Message], str]:
    """The messages of the user's ``region`` prompt file (see :mod:`evaluation.judge_prompts`)
    and its hash; gold ids ``g1``, ``g2``... as DocScope's prompt expects."""
    template = custom_template(ctx, ROLE)
    if template is None:
        raise ValueError("no prompt file for the region role")
    from PIL import Image

    with Image.open(image) as picture:
        size = picture.size
    dpi = int(getattr(ctx.documents, "dpi", RENDER_DPI) or RENDER_DPI)
    lines = [
        f"id=g{i + 1} :: index_on_page={i + 1}, element_type={r.element_type}, "
        f"gold_bbox_px={_pixels(r.bbox, size, dpi)}"
        for i, r in enumerate(gold)
    ]
    fields = {
        "question": sample.question,
        "gold_answer": sample.answer or "",
        "gt_page": page,
        "gold_total_on_page": len(gold),
        "gold_facts_block": "\n".join(lines),
        "n_pred": len(predicted),
        "pred_bboxes_norm": [list(b) for b in predicted],
    }
    return custom_messages(template, fields, image), template_hash(template)


def _messages(
    ctx: JudgeContext,
    sample: Sample,
    page: int,
    gold: list[Region],
    drawn: list[list[float]],
    image: Path,
) -> tuple[list[Message], str, list[str]]:
    """Messages, prompt hash and the gold ids the reply must echo."""
    if custom_template(ctx, ROLE) is not None:
        messages, prompt_hash = custom_region_messages(ctx, sample, page, gold, drawn, image)
        return messages, prompt_hash, [f"g{i + 1}" for i in range(len(gold))]
    messages = prompt.build_messages(
        image=image,
        question=sample.question,
        answer=sample.answer,
        page=page,
        gold=gold,
        predicted=drawn,
    )
    return messages, prompt.PROMPT_HASH, [f"GOLD[{i + 1}]" for i in range(len(gold))]


async def _judge_page(
    ctx: JudgeContext, sample: Sample, view: OfficialView, page: int, gold: list[Region]
) -> _Page:
    drawn, skipped = view.boxes_on(page)

    def boxes(status: str) -> list[_Box]:
        return [
            _Box(page=page, index=i, gold_id=f"g{i + 1}", status=status) for i in range(len(gold))
        ]

    key = f"page={page}"
    try:
        if ctx.documents is None:
            raise FileNotFoundError("no document source to render pages from")
        png = await asyncio.to_thread(ctx.documents.render, sample.primary_doc, page)
        gold_boxes = [r.bbox for r in gold]
        overlay_dir = ctx.documents.overlay_dir
        image = await asyncio.to_thread(
            cached_overlay, overlay_dir, png, gold_boxes, drawable(drawn)
        )
        messages, prompt_hash, ids = _messages(ctx, sample, page, gold, drawn, image)
    except Exception as exc:  # missing PDF, MuPDF or PIL failure: this page only
        record = JudgeRecord(
            role=ROLE,
            model=ctx.model_for(ROLE),
            status="render_failed",
            key=key,
            error=f"{type(exc).__name__}: {exc}",
        )
        return _Page(
            page=page,
            boxes=boxes("render_failed"),
            n_drawn=len(drawn),
            skipped=skipped,
            record=record,
        )
    record, items = await judge_items(ctx, ROLE, messages, prompt_hash, key, ids, _LABELS)
    out = [
        _Box(page=page, index=i, gold_id=ids[i], status=status, label=label, reason=reason)
        for i, (status, label, reason) in enumerate(items)
    ]
    return _Page(page=page, boxes=out, n_drawn=len(drawn), skipped=skipped, record=record)


def _skip(scorer: Scorer, trajectory: Trajectory, sample: Sample, reason: str, view: Any) -> Any:
    return scorer.skip(trajectory, sample, reason, details={"profile": OFFICIAL, "view": view})


def _population(
    scorer: Scorer, trajectory: Trajectory, sample: Sample
) -> tuple[OfficialView, dict[int, list[Region]], ScoreRow | None]:
    """The view and gold boxes of an item, or the ``skipped`` row when it is out."""
    view = official_view(trajectory)
    if not view.ok:
        return view, {}, inference_skip(scorer, trajectory, sample, view)
    gold = gold_by_page(sample)
    if not gold:
        return view, gold, _skip(scorer, trajectory, sample, "no gold regions", view.source)
    return view, gold, None


async def score_region(
    scorer: Scorer, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None
) -> ScoreRow:
    view, gold, skipped = _population(scorer, trajectory, sample)
    if skipped is not None:
        return skipped
    if judge is None or judge.model_for(ROLE) is None:
        reason = judge.why_not(ROLE) if judge is not None else "no judge context"
        return _skip(scorer, trajectory, sample, reason, view.source)
    pages = judged_pages(sample, view, gold)
    outcomes = await asyncio.gather(*(_judge_page(judge, sample, view, p, gold[p]) for p in pages))
    return _region_row(scorer, trajectory, sample, view, gold, list(outcomes))


def _region_row(
    scorer: Scorer,
    trajectory: Trajectory,
    sample: Sample,
    view: OfficialView,
    gold: dict[int, list[Region]],
    outcomes: list[_Page],
) -> ScoreRow:
    row = scorer.new_row(trajectory, sample)
    counts = dict.fromkeys(
        ("boxes", "boxes_ok", "boxes_failed", "n_pred", "n_pred_drawn", "hit_strict_capped"), 0.0
    )
    counts |= dict.fromkeys(("hit_lenient_capped", *LABELS), 0.0)
    units: list[dict[str, Any]] = []
    for outcome in outcomes:
        if outcome.record is not None:
            row.add_judge(outcome.record)
        valid = drawable(view.boxes_on(outcome.page)[0])
        labels = [b.label for b in outcome.boxes if b.status == "ok" and b.label]
        counts["boxes"] += len(outcome.boxes)
        counts["boxes_ok"] += len(labels)
        counts["boxes_failed"] += len(outcome.boxes) - len(labels)
        if labels:
            n_pred = outcome.n_drawn + len(outcome.skipped)
            covered = labels.count("covered")
            lenient = covered + labels.count("imprecise")
            counts["n_pred"] += n_pred
            counts["n_pred_drawn"] += outcome.n_drawn
            counts["hit_strict_capped"] += min(covered, n_pred)
            counts["hit_lenient_capped"] += min(lenient, n_pred)
            for label in labels:
                counts[label] += 1
        for box in outcome.boxes:
            geo = gold_vs_union(gold[outcome.page][box.index].bbox, valid)
            units.append(
                box.model_dump()
                | {
                    "unit": f"page{box.page}/gold{box.index}",
                    "n_pred_drawn": outcome.n_drawn,
                    "skipped_pred_bboxes": outcome.skipped,
                    "iou": geo.iou,
                    "iom": geo.iom,
                    "gt_recall": geo.gt_recall,
                }
            )
    counts["gold"] = counts["boxes_ok"]
    counts["gold_all"] = sum(len(v) for v in gold.values())
    counts["pages_judged"] = len(outcomes)
    row.counts = counts
    row.details = {"profile": OFFICIAL, "view": view.source, "units": units}
    ok = counts["boxes_ok"]
    row.metrics = {
        "covered_rate": counts["covered"] / ok if ok else None,
        "lenient_rate": (counts["covered"] + counts["imprecise"]) / ok if ok else None,
    }
    if counts["boxes_failed"]:
        failed = [b.status for o in outcomes for b in o.boxes if b.status != "ok"]
        row.status = "partial" if ok else failed[0]  # type: ignore[assignment]
        row.reason = f"{int(counts['boxes_failed'])} of {int(counts['boxes'])} gold boxes failed"
        if not ok:
            row.metrics = dict.fromkeys(row.metrics)
    return row


def aggregate_region(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
    usable, failed, skipped = split_rows(rows)
    ok = count_column(usable, "boxes_ok")
    covered, imprecise = count_column(usable, "covered"), count_column(usable, "imprecise")
    metrics = {
        "covered_rate": ratio_metric(
            covered, ok, stats, excluded=failed, skipped=skipped, headline=True
        ),
        "lenient_rate": ratio_metric(
            covered + imprecise, ok, stats, excluded=failed, skipped=skipped, headline=True
        ),
    }
    sums = {
        k: float(count_column(usable, k).sum()) for k in ("gold", "n_pred", "covered", "imprecise")
    }
    sums |= {
        k: float(count_column(usable, k).sum()) for k in ("hit_strict_capped", "hit_lenient_capped")
    }
    f1_values: dict[str, float | None] = {}
    for mode in ("strict", "lenient"):
        precision, recall = region_prf(sums, mode)
        f1_values[f"{mode}_precision"] = precision
        f1_values[f"{mode}_recall"] = recall
        f1_values[f"{mode}_f1"] = f1(precision, recall) if sums["gold"] else None
    by_label = {label: int(count_column(usable, label).sum()) for label in LABELS}
    by_label = {k: v for k, v in by_label.items() if v}
    return AggregateResult(
        metrics=metrics,
        tables={
            "official_summary": {"n": int(ok.sum()), "by_label": by_label},
            "capped_f1": f1_values,
            "boxes_failed": int(count_column(usable, "boxes_failed").sum()),
            "partial_items": sum(1 for r in usable if r.status == "partial"),
            "inference_errors": sum(
                1 for r in rows if r.status == "skipped" and "inference status" in (r.reason or "")
            ),
        },
    )


# --------------------------------------------------------------------------- geometry


def score_geometry(
    scorer: Scorer, trajectory: Trajectory, sample: Sample, threshold: float
) -> ScoreRow:
    """IoU / IoM / GT-recall of every gold box the official region judge would see, against
    the union of the boxes it would draw."""
    view, gold, skipped = _population(scorer, trajectory, sample)
    if skipped is not None:
        return skipped
    pages = [(p, drawable(view.boxes_on(p)[0])) for p in judged_pages(sample, view, gold)]
    metrics, counts, units = measure_boxes(pages, gold, threshold)
    return scorer.new_row(
        trajectory,
        sample,
        metrics=metrics,
        counts=counts,
        details={
            "profile": OFFICIAL,
            "view": view.source,
            "units": units,
            "covered_threshold": threshold,
        },
    )
