"""Region grounding with a vision judge.

For each page p of P̂ (gold pages the system cited) that has gold boxes, one judge call
labels every gold box covered / imprecise / not_covered against the union of the predicted
boxes drawn on the page (:mod:`scanrag.evaluation.docscope.region_page`). With h = covered (strict)
or covered + imprecise (lenient) and n_pred the predicted boxes of a page, summed over items
and pages: R = Σh / Σ|G|, P = Σ min(h, n_pred) / Σ n_pred, F1 = 2PR / (P + R); beside them
the label rates covered / n and (covered + imprecise) / n over the labelled gold boxes.

What the profile decides (:mod:`scanrag.evaluation.docscope.profiles`):

* paper (DocScope eq. 2): answerable items; the validity gate; predicted boxes are the
  valid regions, de-duplicated, plus the invalid citation boxes in n_pred; a page of P̂
  without gold boxes adds its n_pred (boxes drawn there lower precision); a reply that does
  not label every gold box fails its whole page (after one corrective call); headline the
  strict and lenient capped F1;
* official (``score_bbox.py``): every item whose inference succeeded; the judge is always
  called; predicted boxes are every four-number box cited on the page, duplicates kept
  (flagged normalized ones drawn, clipped); each gold box has its own status; headline the
  covered and lenient rates, with ``official_summary`` = the ``bbox`` block of
  ``summarize_eval.py`` (``n``, ``by_label``).

A box or page that failed (judge, render) leaves the sums and is counted; the item is then
``partial`` (or failed, when nothing of it was labelled). Without a vision-capable judge model
the item is ``skipped``; :mod:`scanrag.evaluation.docscope.region_geometry` still scores it. Every
gold box is listed in ``details["units"]`` as ``page<p>/gold<i>`` with its status, label and
geometric scores, for judge-agreement studies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from scanrag.evaluation.base import (
    StatsOptions,
    count_column,
    f1,
    ratio_metric,
    split_rows,
    statistic_metric,
)
from scanrag.evaluation.docscope.geometry import gold_vs_union
from scanrag.evaluation.docscope.profiled import (
    JudgingScorer,
    Opening,
    ProfileBinding,
    ProfiledScorer,
)
from scanrag.evaluation.docscope.profiles import OFFICIAL, Profile
from scanrag.evaluation.docscope.region_labels import LABELS, ROLE, region_counts, region_prf
from scanrag.evaluation.docscope.region_page import PageOutcome, judge_page
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory

SUMS = ("gold", "n_pred", "covered", "imprecise", "hit_strict_capped", "hit_lenient_capped")


class RegionScorer(JudgingScorer):
    name = "region"
    stage = "region"
    roles = (ROLE,)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        opening = self.open_item(
            trajectory, sample, judge, has_gold=lambda g: g.n_boxes > 0, role=ROLE
        )
        if isinstance(opening, ScoreRow):
            return opening
        assert judge is not None  # the opening checked the judge
        pages = opening.p_hat()
        judged = [p for p in pages if opening.gold.boxes_on(p)]
        outcomes = list(
            await asyncio.gather(*(judge_page(judge, opening, sample, p) for p in judged))
        )
        if opening.profile.shortcuts:  # boxes on a right page with nothing to find (eq. 2)
            for page in pages:
                if not opening.gold.boxes_on(page):
                    boxes = opening.view.boxes(page)
                    outcomes.append(
                        PageOutcome(
                            page=page, n_shown=len(boxes.shown), undrawn=boxes.undrawn, no_gold=True
                        )
                    )
        outcomes.sort(key=lambda o: o.page)
        return region_row(self, trajectory, sample, opening, outcomes)

    def summarize(
        self, rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
    ) -> AggregateResult:
        return summarize_regions(rows, stats, profile)


def _units(opening: Opening, outcome: PageOutcome) -> list[dict[str, Any]]:
    shapes = opening.view.boxes(outcome.page).shapes
    gold = opening.gold.boxes_on(outcome.page)
    units = []
    for box in outcome.boxes:
        target = gold[box.index].box
        geo = gold_vs_union(target, shapes) if target is not None else None
        unit: dict[str, Any] = box.model_dump() | {
            "unit": f"page{box.page}/gold{box.index}",
            "gated": outcome.gated,
            "n_pred_drawn": outcome.n_shown,
            "skipped_pred_bboxes": outcome.undrawn,
        }
        for name in ("iou", "iom", "gt_recall"):
            unit[name] = getattr(geo, name) if geo is not None else None
        units.append(unit)
    return units


def region_row(
    scorer: ProfiledScorer,
    trajectory: Trajectory,
    sample: Sample,
    opening: Opening,
    outcomes: list[PageOutcome],
) -> ScoreRow:
    counts = dict.fromkeys((*SUMS, "not_covered", "boxes", "boxes_failed", "n_pred_drawn"), 0.0)
    pages: dict[str, dict[str, Any]] = {}
    units: list[dict[str, Any]] = []
    row = scorer.new_row(trajectory, sample)
    for outcome in outcomes:
        if outcome.record is not None:
            row.add_judge(outcome.record)
        failed = [b for b in outcome.boxes if b.status != "ok"]
        info: dict[str, Any] = {"status": failed[0].status if failed else "ok"}
        info |= {"n_pred": outcome.n_pred, "gated": outcome.gated, "no_gold": outcome.no_gold}
        if failed and outcome.record is not None and outcome.record.error:
            info["error"] = outcome.record.error
        pages[str(outcome.page)] = info
        counts["boxes"] += len(outcome.boxes)
        counts["boxes_failed"] += len(failed)
        if outcome.counted:
            for key, value in region_counts(outcome.labels, outcome.n_pred).items():
                counts[key] += value
            counts["n_pred_drawn"] += outcome.n_shown
        units += _units(opening, outcome)
    counts["boxes_ok"] = counts["gold"]
    counts["gold_all"] = opening.gold.n_boxes
    counts["pages_judged"] = sum(1 for o in outcomes if not o.gated and not o.no_gold and o.labels)
    counts["pages_gated"] = sum(1 for o in outcomes if o.gated)
    counts["pages_no_gold"] = sum(1 for o in outcomes if o.no_gold)
    counts["pages_failed"] = sum(1 for o in outcomes if any(b.status != "ok" for b in o.boxes))
    row.counts = counts
    row.metrics = _metrics(counts)
    row.details = opening.details | {"pages": pages, "units": units}
    if counts["boxes_failed"]:
        first = next(b.status for o in outcomes for b in o.boxes if b.status != "ok")
        row.status = "partial" if counts["gold"] else first  # type: ignore[assignment]
        row.reason = f"{int(counts['boxes_failed'])} of {int(counts['boxes'])} gold boxes failed"
        if not counts["gold"]:
            row.metrics = dict.fromkeys(row.metrics)
    return row


def _metrics(counts: dict[str, float]) -> dict[str, float | None]:
    metrics: dict[str, float | None] = {}
    for mode in ("strict", "lenient"):
        precision, recall = region_prf(counts, mode)
        metrics[f"{mode}_precision"] = precision
        metrics[f"{mode}_recall"] = recall
        metrics[f"{mode}_f1"] = f1(precision, recall) if counts["gold"] else None
    ok = counts["gold"]
    metrics["covered_rate"] = counts["covered"] / ok if ok else None
    metrics["lenient_rate"] = (counts["covered"] + counts["imprecise"]) / ok if ok else None
    return metrics


def summarize_regions(
    rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
) -> AggregateResult:
    """Capped F1 and label rates over the labelled gold boxes; the profile picks the
    headline (``region_headline``) and whether the released summary block is added."""
    usable, failed, skipped = split_rows(rows)
    cols = {k: count_column(usable, k) for k in (*SUMS, "not_covered")}
    fence = {"excluded": failed, "skipped": skipped}
    rates = profile.region_headline == "label_rates"

    def stat(mode: str, which: str) -> Callable[[np.ndarray], float | None]:
        def compute(idx: np.ndarray) -> float | None:
            sums = {k: float(v[idx].sum()) for k, v in cols.items()}
            precision, recall = region_prf(sums, mode)
            if which == "precision":
                return precision
            if which == "recall":
                return recall
            return f1(precision, recall) if sums["gold"] else None

        return compute

    metrics = {
        f"{mode}_{which}": statistic_metric(
            stat(mode, which), len(usable), stats, headline=which == "f1" and not rates, **fence
        )
        for mode in ("strict", "lenient")
        for which in ("precision", "recall", "f1")
    }
    covered, ok = cols["covered"], cols["gold"]
    metrics["covered_rate"] = ratio_metric(covered, ok, stats, headline=rates, **fence)
    metrics["lenient_rate"] = ratio_metric(
        covered + cols["imprecise"], ok, stats, headline=rates, **fence
    )
    labels = {label: int(cols[label].sum()) for label in LABELS}
    tables: dict[str, Any] = {
        "labels": labels,
        "pages": {
            k: int(count_column(usable, k).sum())
            for k in ("pages_judged", "pages_gated", "pages_failed")
        },
        "boxes_failed": int(count_column(usable, "boxes_failed").sum()),
        "partial_items": sum(1 for r in usable if r.status == "partial"),
    }
    if profile.summary_blocks:
        by_label = {k: v for k, v in labels.items() if v}
        tables["official_summary"] = {"n": int(ok.sum()), "by_label": by_label}
        tables["inference_errors"] = sum(
            1 for r in rows if r.status == "skipped" and "inference status" in (r.reason or "")
        )
    return AggregateResult(metrics=metrics, tables=tables)


region_official = ProfileBinding(RegionScorer, OFFICIAL, "region_official")
