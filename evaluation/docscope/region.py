"""Region grounding with a vision judge (answerable questions with gold regions).

For each correctly retrieved page p ∈ P̂ that has gold regions G_p, the page is rendered with
gold boxes in green (``GOLD[i]``) and predicted boxes in red, and one judge call labels every
gold box covered / imprecise / not_covered against the union of red boxes. Validity gate: a
page with no valid predicted box (none at all, or all outside [0, 1]²) labels every gold box
not_covered without a call. With h = covered (strict) or covered + imprecise (lenient) and
n_pred the number of predicted boxes on the page (invalid ones included), summed over items
and pages: R = Σh / Σ|G|, P = Σ min(h, n_pred) / Σ n_pred, F1 = 2PR / (P + R).

Every page of P̂ enters the sums (DocScope eq. 2): a correctly retrieved page without gold
regions adds its predicted boxes to Σ n_pred and nothing to Σ|G| (h = 0, no judge call), so
boxes drawn there lower precision. A page whose render or judgment failed is excluded from
every sum and counted; the item is then ``partial`` (or failed, when no page of it could be
scored). Without a vision-capable judge
model the item is ``skipped``; :mod:`evaluation.docscope.region_geometry` still scores it.
Each judged gold box is listed in ``details["units"]`` as ``page<p>/gold<i>`` (0-based index
on the page) with its label and geometric scores, for judge-agreement studies.
``profile: official`` scores DocScope's released population and policies instead
(:mod:`evaluation.docscope.official_region`); a user prompt file for the ``region`` role
(:mod:`evaluation.judge_prompts`) replaces the built-in prompt under either profile.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, field_validator

from evaluation.base import (
    RowGroup,
    Scorer,
    StatsOptions,
    count_column,
    f1,
    safe_ratio,
    split_rows,
    statistic_metric,
)
from evaluation.docscope.common import (
    DocScope,
    correct_pages,
    doc_scope,
    gold_regions_by_page,
    predicted_boxes,
)
from evaluation.docscope.geometry import gold_vs_union
from evaluation.docscope.overlay import cached_overlay
from evaluation.docscope.profiles import (
    OFFICIAL,
    PAPER,
    Profile,
    aggregate_by_profile,
    apply_profile,
    official_twin,
)
from evaluation.judge_prompts import custom_template
from evaluation.judging import JudgeContext
from evaluation.prompts import docscope_region as prompt
from evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
from scanrag.schemas import Region, Sample, Trajectory

RegionLabel = Literal["covered", "imprecise", "not_covered"]
LABELS: tuple[str, ...] = ("covered", "imprecise", "not_covered")
ROLE = "region"
COUNT_KEYS = (
    "gold",
    "n_pred",
    "covered",
    "imprecise",
    "not_covered",
    "hit_strict_capped",
    "hit_lenient_capped",
)
_ID_NUMBER = re.compile(r"(\d+)")


def normalize_label(value: object) -> str:
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    return {"notcovered": "not_covered", "uncovered": "not_covered"}.get(text, text)


class RegionItem(BaseModel):
    id: str | int
    label: RegionLabel
    reason: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: object) -> str:
        return normalize_label(value)


class RegionJudgment(BaseModel):
    items: list[RegionItem]


def gold_index(value: str | int) -> int | None:
    """0-based gold index from ``GOLD[2]``, ``g2``, ``"2"`` or ``2`` (all → 1)."""
    if isinstance(value, int):
        return value - 1
    match = _ID_NUMBER.search(value)
    return int(match.group(1)) - 1 if match else None


def labels_from(judgment: RegionJudgment, n_gold: int) -> list[str]:
    """One label per gold box, in order; ``ValueError`` if any is missing or repeated."""
    labels: list[str | None] = [None] * n_gold
    indices = [gold_index(item.id) for item in judgment.items]
    if all(i is None for i in indices) and len(judgment.items) == n_gold:
        return [item.label for item in judgment.items]  # ids unusable: take them in order
    for index, item in zip(indices, judgment.items, strict=True):
        if index is None or not 0 <= index < n_gold:
            raise ValueError(f"unknown gold id {item.id!r}; expected GOLD[1]..GOLD[{n_gold}]")
        if labels[index] is not None and labels[index] != item.label:
            raise ValueError(f"gold id {item.id!r} labelled twice")
        labels[index] = item.label
    missing = [f"GOLD[{i + 1}]" for i, label in enumerate(labels) if label is None]
    if missing:
        raise ValueError(f"no label for {', '.join(missing)}")
    return [label for label in labels if label is not None]


def region_counts(labels: Sequence[str], n_pred: int) -> dict[str, float]:
    """Additive counts of one page: label counts and the capped hits."""
    covered = sum(1 for label in labels if label == "covered")
    imprecise = sum(1 for label in labels if label == "imprecise")
    return {
        "gold": len(labels),
        "n_pred": n_pred,
        "covered": covered,
        "imprecise": imprecise,
        "not_covered": len(labels) - covered - imprecise,
        "hit_strict_capped": min(covered, n_pred),
        "hit_lenient_capped": min(covered + imprecise, n_pred),
    }


def region_prf(counts: dict[str, float], mode: str) -> tuple[float | None, float | None]:
    """(precision, recall) of summed counts; ``mode`` is ``strict`` or ``lenient``."""
    hits = counts["covered"] + (counts["imprecise"] if mode == "lenient" else 0)
    capped = counts[f"hit_{mode}_capped"]
    return safe_ratio(capped, counts["n_pred"]), safe_ratio(hits, counts["gold"])


class _PageOutcome(BaseModel):
    page: int
    status: str
    labels: list[str] = []
    n_pred: int = 0
    gated: bool = False
    no_gold: bool = False  # a page of P̂ without gold regions: only its n_pred counts
    record: JudgeRecord | None = None


class RegionScorer(Scorer):
    name = "region"
    roles = (ROLE,)
    profile: Profile = PAPER

    def __init__(self, profile: Profile = PAPER) -> None:
        apply_profile(self, profile)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if self.profile == OFFICIAL:
            from evaluation.docscope.official_region import score_region

            return await score_region(self, trajectory, sample, judge)
        if not sample.answerable:
            return self.skip(trajectory, sample, "unanswerable question: no region metric")
        scope = doc_scope(trajectory, sample, judge)
        gold_by_page = gold_regions_by_page(sample, scope)
        if not gold_by_page:
            return self.skip(trajectory, sample, "no gold regions")
        if judge is None or judge.model_for(ROLE) is None:
            reason = judge.why_not(ROLE) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason)
        pages = correct_pages(trajectory, sample)
        judged = [p for p in pages if gold_by_page.get(p)]
        outcomes = list(
            await asyncio.gather(
                *(self._page(trajectory, sample, p, gold_by_page[p], scope, judge) for p in judged)
            )
        )
        for page in pages:
            if not gold_by_page.get(page):  # boxes on a right page with nothing to find
                n_pred = predicted_boxes(trajectory, page, scope).n_pred
                outcomes.append(_PageOutcome(page=page, status="ok", n_pred=n_pred, no_gold=True))
        outcomes.sort(key=lambda o: o.page)
        return self._row(trajectory, sample, gold_by_page, outcomes, scope)

    async def _page(
        self,
        trajectory: Trajectory,
        sample: Sample,
        page: int,
        gold: list[Region],
        scope: DocScope,
        ctx: JudgeContext,
    ) -> _PageOutcome:
        pred = predicted_boxes(trajectory, page, scope)
        if not pred.valid:
            labels = ["not_covered"] * len(gold)
            return _PageOutcome(
                page=page, status="ok", labels=labels, n_pred=pred.n_pred, gated=True
            )
        key = f"page={page}"
        try:
            image = await asyncio.to_thread(self._overlay, ctx, sample, page, gold, pred.valid)
        except Exception as exc:  # missing PDF, MuPDF or PIL failure: this page only
            record = JudgeRecord(
                role=ROLE,
                model=ctx.model_for(ROLE),
                prompt_hash=prompt.PROMPT_HASH,
                status="render_failed",
                key=key,
                error=f"{type(exc).__name__}: {exc}",
            )
            return _PageOutcome(
                page=page, status="render_failed", n_pred=pred.n_pred, record=record
            )
        predicted = [b.as_list() for b in pred.valid]
        messages, prompt_hash = (
            prompt.build_messages(
                image=image,
                question=sample.question,
                answer=sample.answer,
                page=page,
                gold=gold,
                predicted=predicted,
            ),
            prompt.PROMPT_HASH,
        )
        if custom_template(ctx, ROLE) is not None:
            from evaluation.docscope.official_region import custom_region_messages

            messages, prompt_hash = custom_region_messages(
                ctx, sample, page, gold, predicted, image
            )

        def complete(judgment: RegionJudgment) -> None:
            labels_from(judgment, len(gold))  # raises ValueError when a gold id is missing

        record, parsed = await ctx.judge(
            ROLE, messages, RegionJudgment, prompt_hash, key=key, check=complete
        )
        if parsed is None:
            return _PageOutcome(page=page, status=record.status, n_pred=pred.n_pred, record=record)
        labels = labels_from(parsed, len(gold))
        return _PageOutcome(
            page=page, status="ok", labels=labels, n_pred=pred.n_pred, record=record
        )

    @staticmethod
    def _overlay(
        ctx: JudgeContext, sample: Sample, page: int, gold: list[Region], pred: list
    ) -> Any:
        if ctx.documents is None:
            raise FileNotFoundError("no document source to render pages from")
        png = ctx.documents.render(sample.primary_doc, page)
        return cached_overlay(ctx.documents.overlay_dir, png, [r.bbox for r in gold], pred)

    def _row(
        self,
        trajectory: Trajectory,
        sample: Sample,
        gold_by_page: dict[int, list[Region]],
        outcomes: list[_PageOutcome],
        scope: DocScope,
    ) -> ScoreRow:
        totals = dict.fromkeys(COUNT_KEYS, 0.0)
        units: list[dict[str, Any]] = []
        pages_info: dict[str, dict[str, Any]] = {}
        failed = [o for o in outcomes if o.status != "ok"]
        row = self.new_row(trajectory, sample)
        for outcome in outcomes:
            if outcome.record is not None:
                row.add_judge(outcome.record)
            info: dict[str, Any] = {"status": outcome.status, "n_pred": outcome.n_pred}
            info["gated"] = outcome.gated
            info["no_gold"] = outcome.no_gold
            pages_info[str(outcome.page)] = info
            if outcome.status != "ok":
                info["error"] = outcome.record.error if outcome.record else None
                continue
            for key, value in region_counts(outcome.labels, outcome.n_pred).items():
                totals[key] += value
            valid = predicted_boxes(trajectory, outcome.page, scope).valid
            for index, (region, label) in enumerate(
                zip(gold_by_page.get(outcome.page, []), outcome.labels, strict=True)
            ):
                geo = gold_vs_union(region.bbox, valid)
                units.append(
                    {
                        "unit": f"page{outcome.page}/gold{index}",
                        "page": outcome.page,
                        "index": index,
                        "label": label,
                        "gated": outcome.gated,
                        "iou": geo.iou,
                        "iom": geo.iom,
                        "gt_recall": geo.gt_recall,
                    }
                )
        metrics: dict[str, float | None] = {}
        for mode in ("strict", "lenient"):
            precision, recall = region_prf(totals, mode)
            metrics |= {
                f"{mode}_precision": precision,
                f"{mode}_recall": recall,
                f"{mode}_f1": f1(precision, recall) if totals["gold"] else None,
            }
        row.metrics = metrics
        row.counts = {
            **totals,
            "gold_all": sum(len(v) for v in gold_by_page.values()),
            "pages_judged": sum(
                1 for o in outcomes if o.status == "ok" and not o.gated and not o.no_gold
            ),
            "pages_gated": sum(1 for o in outcomes if o.gated),
            "pages_no_gold": sum(1 for o in outcomes if o.no_gold),
            "pages_failed": len(failed),
        }
        row.details = {"profile": PAPER, "pages": pages_info, "units": units}
        if failed:
            judged = [o for o in outcomes if not o.no_gold]
            row.status = "partial" if len(failed) < len(judged) else failed[0].status  # type: ignore[assignment]
            row.reason = f"{len(failed)} of {len(judged)} pages excluded (judge or render failed)"
            if row.status != "partial":
                row.metrics = dict.fromkeys(metrics)
        return row

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        from evaluation.docscope.official_region import aggregate_region

        return aggregate_by_profile(
            rows,
            self.profile,
            lambda kept: self._paper(kept, stats),
            lambda kept: aggregate_region(kept, stats),
        )

    @staticmethod
    def _paper(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        names = ("gold", "n_pred", "covered", "imprecise", "hit_strict_capped")
        cols = {k: count_column(usable, k) for k in (*names, "hit_lenient_capped")}

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

        metrics = {}
        for mode in ("strict", "lenient"):
            for which in ("precision", "recall", "f1"):
                metrics[f"{mode}_{which}"] = statistic_metric(
                    stat(mode, which),
                    len(usable),
                    stats,
                    excluded=failed,
                    skipped=skipped,
                    headline=which == "f1",
                )
        tables = {
            "labels": {k: int(cols[k].sum()) for k in ("covered", "imprecise")}
            | {"not_covered": int(count_column(usable, "not_covered").sum())},
            "pages": {
                k: int(count_column(usable, k).sum())
                for k in ("pages_judged", "pages_gated", "pages_failed")
            },
            "partial_items": sum(1 for r in usable if r.status == "partial"),
        }
        return AggregateResult(metrics=metrics, tables=tables)


RegionOfficialScorer = official_twin(RegionScorer, "region_official")
