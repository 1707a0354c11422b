"""Fact extraction with a text judge (answerable questions with gold facts).

For each correctly retrieved page p ∈ P̂ with gold facts, the evidence is citation-scoped
(:func:`evaluation.docscope.common.evidence_units`): only the units a structured citation of
page p closes, never the final answer, never the ``doc_page`` field. One judge call per page
labels every gold fact of that page consistent / not_consistent. A page with no admissible
unit labels all its gold facts not_consistent without a call (nothing on that page was
cited, so nothing can support them). Gold facts on pages outside P̂ are not counted
(inter-stage decoupling). Consistency = Σ consistent / Σ gold facts judged, pooled over
items; pages whose judgment failed are excluded and counted. ``profile: official`` scores
DocScope's released population and policy instead (the judge reads the whole reply;
:mod:`evaluation.docscope.official_fact`); a user prompt file for the ``fact`` role
(:mod:`evaluation.judge_prompts`) replaces the built-in prompt under either profile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from evaluation.base import RowGroup, Scorer, StatsOptions, count_column, ratio_metric, split_rows
from evaluation.docscope.common import (
    DocScope,
    correct_pages,
    doc_scope,
    evidence_units,
    gold_facts_by_page,
)
from evaluation.docscope.official_fact import aggregate_fact, score_fact
from evaluation.docscope.profiles import (
    OFFICIAL,
    PAPER,
    Profile,
    aggregate_by_profile,
    apply_profile,
    official_twin,
)
from evaluation.judge_prompts import custom_messages, custom_template, template_hash
from evaluation.judging import JudgeContext
from evaluation.prompts import docscope_fact as prompt
from evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
from scanrag.schemas import Fact, Sample, Trajectory

ROLE = "fact"


class FactItem(BaseModel):
    id: str | int
    label: Literal["consistent", "not_consistent"]
    reason: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: object) -> str:
        text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
        return {"inconsistent": "not_consistent", "notconsistent": "not_consistent"}.get(text, text)


class FactJudgment(BaseModel):
    items: list[FactItem]


def fact_labels(judgment: FactJudgment, n_facts: int) -> list[str]:
    """One label per gold fact in order; ``ValueError`` if an id is missing or unknown."""
    labels: list[str | None] = [None] * n_facts
    for item in judgment.items:
        digits = "".join(ch for ch in str(item.id) if ch.isdigit())
        index = int(digits) - 1 if digits else -1
        if not 0 <= index < n_facts:
            raise ValueError(f"unknown fact id {item.id!r}; expected f1..f{n_facts}")
        labels[index] = item.label
    missing = [prompt.fact_id(i) for i, label in enumerate(labels) if label is None]
    if missing:
        raise ValueError(f"no label for {', '.join(missing)}")
    return [label for label in labels if label is not None]


class _PageOutcome(BaseModel):
    page: int
    status: str
    labels: list[str] = []
    units: int = 0
    record: JudgeRecord | None = None


def _custom_messages(
    template: str, sample: Sample, page: int, facts: list[Fact], units: list[str]
) -> list[Any]:
    """A user prompt file under the paper profile: ``model_raw`` holds the cited units."""
    siblings = [f.text for f in sample.gold_facts if f.page != page]
    fields = {
        "question": sample.question,
        "gt_page": page,
        "gold_facts_block": "\n".join(
            f"id={prompt.fact_id(i)} :: {f.text}" for i, f in enumerate(facts)
        ),
        "sibling_facts": "; ".join(siblings) if siblings else "(none)",
        "model_raw": "\n".join(units),
    }
    return custom_messages(template, fields)


class FactScorer(Scorer):
    name = "fact"
    roles = (ROLE,)
    profile: Profile = PAPER

    def __init__(self, profile: Profile = PAPER) -> None:
        apply_profile(self, profile)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if self.profile == OFFICIAL:
            return await score_fact(self, trajectory, sample, judge)
        if not sample.answerable:
            return self.skip(trajectory, sample, "unanswerable question: no fact metric")
        scope = doc_scope(trajectory, sample, judge)
        facts_by_page = gold_facts_by_page(sample, scope)
        if not facts_by_page:
            return self.skip(trajectory, sample, "no gold facts")
        if judge is None or judge.model_for(ROLE) is None:
            reason = judge.why_not(ROLE) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason)
        pages = [p for p in correct_pages(trajectory, sample) if facts_by_page.get(p)]
        outcomes = await asyncio.gather(
            *(self._page(trajectory, sample, p, facts_by_page[p], scope, judge) for p in pages)
        )
        return self._row(trajectory, sample, facts_by_page, list(outcomes))

    async def _page(
        self,
        trajectory: Trajectory,
        sample: Sample,
        page: int,
        facts: list[Fact],
        scope: DocScope,
        ctx: JudgeContext,
    ) -> _PageOutcome:
        units = evidence_units(trajectory, page, scope)
        if not units:
            return _PageOutcome(page=page, status="ok", labels=["not_consistent"] * len(facts))
        template = custom_template(ctx, ROLE)
        if template is None:
            messages = prompt.build_messages(
                question=sample.question, page=page, facts=[f.text for f in facts], units=units
            )
            prompt_hash = prompt.PROMPT_HASH
        else:
            messages = _custom_messages(template, sample, page, facts, units)
            prompt_hash = template_hash(template)

        def complete(judgment: FactJudgment) -> None:
            fact_labels(judgment, len(facts))

        record, parsed = await ctx.judge(
            ROLE, messages, FactJudgment, prompt_hash, key=f"page={page}", check=complete
        )
        if parsed is None:
            return _PageOutcome(page=page, status=record.status, units=len(units), record=record)
        return _PageOutcome(
            page=page,
            status="ok",
            labels=fact_labels(parsed, len(facts)),
            units=len(units),
            record=record,
        )

    def _row(
        self,
        trajectory: Trajectory,
        sample: Sample,
        facts_by_page: dict[int, list[Fact]],
        outcomes: list[_PageOutcome],
    ) -> ScoreRow:
        row = self.new_row(trajectory, sample)
        facts = consistent = no_citation = 0
        units: list[dict[str, Any]] = []
        pages: dict[str, dict[str, Any]] = {}
        failed = [o for o in outcomes if o.status != "ok"]
        for outcome in outcomes:
            if outcome.record is not None:
                row.add_judge(outcome.record)
            pages[str(outcome.page)] = {"status": outcome.status, "units": outcome.units}
            if outcome.status != "ok":
                pages[str(outcome.page)]["error"] = outcome.record.error if outcome.record else None
                continue
            facts += len(outcome.labels)
            consistent += sum(1 for label in outcome.labels if label == "consistent")
            if outcome.units == 0:
                no_citation += len(outcome.labels)
            units += [
                {
                    "unit": f"page{outcome.page}/fact{i}",
                    "page": outcome.page,
                    "index": i,
                    "label": label,
                }
                for i, label in enumerate(outcome.labels)
            ]
        row.metrics = {"consistency": consistent / facts if facts else None}
        row.counts = {
            "facts": facts,
            "consistent": consistent,
            "facts_no_citation": no_citation,
            "facts_all": sum(len(v) for v in facts_by_page.values()),
            "pages_judged": sum(1 for o in outcomes if o.status == "ok" and o.units),
            "pages_no_citation": sum(1 for o in outcomes if o.status == "ok" and not o.units),
            "pages_failed": len(failed),
        }
        row.details = {"profile": PAPER, "pages": pages, "units": units}
        if failed:
            row.status = "partial" if len(failed) < len(outcomes) else failed[0].status  # type: ignore[assignment]
            row.reason = f"{len(failed)} of {len(outcomes)} pages excluded (judge failed)"
            if row.status != "partial":
                row.metrics = {"consistency": None}
        return row

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        return aggregate_by_profile(
            rows,
            self.profile,
            lambda kept: self._paper(kept, stats),
            lambda kept: aggregate_fact(kept, stats),
        )

    @staticmethod
    def _paper(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        facts = count_column(usable, "facts")
        metrics = {
            "consistency": ratio_metric(
                count_column(usable, "consistent"),
                facts,
                stats,
                excluded=failed,
                skipped=skipped,
                headline=True,
            )
        }
        return AggregateResult(
            metrics=metrics,
            tables={
                "facts": int(facts.sum()),
                "facts_no_citation": int(count_column(usable, "facts_no_citation").sum()),
                "pages_failed": int(count_column(usable, "pages_failed").sum()),
                "partial_items": sum(1 for r in usable if r.status == "partial"),
            },
        )


FactOfficialScorer = official_twin(FactScorer, "fact_official")
