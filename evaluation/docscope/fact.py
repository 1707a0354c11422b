"""Fact extraction with a text judge (items with gold facts).

For each page p of P̂ (gold pages the system cited) that has gold facts, one judge call labels
every gold fact of p consistent / not_consistent. Gold facts on pages outside P̂ are not
counted (inter-stage decoupling). Consistency = Σ consistent / Σ gold facts labelled, pooled
over items; a fact whose judgment failed is excluded and counted.

What the profile decides (:mod:`scanrag.evaluation.docscope.profiles`):

* paper (spec §2): answerable items; the judge sees only the citation-scoped evidence units
  of p (:func:`scanrag.evaluation.docscope.common.evidence_units`: the unit each structured citation
  of p closes, never the final answer, never ``doc_page``); a page with no such unit labels
  its facts not_consistent without a call; fact ids ``f1``, ``f2``... per page; a reply that
  does not label every fact fails the page (after one corrective call);
* official (``score_facts.py``): every item whose inference succeeded; the judge gets the
  whole reply with the item's facts of other pages as context and applies the citation rule
  itself, always; ids are the benchmark's fact ids; each fact has its own status; the table
  ``official_summary`` is the ``facts`` block of ``summarize_eval.py``.

A user prompt file for the ``fact`` role (:mod:`scanrag.evaluation.judge_prompts`) replaces the
built-in prompt under either profile (``model_raw`` is the cited units under the paper
profile, the whole reply under the official one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from scanrag.evaluation.base import StatsOptions, count_column, ratio_metric, split_rows
from scanrag.evaluation.docscope import fact_prompt as prompt
from scanrag.evaluation.docscope.gold import GoldFact
from scanrag.evaluation.docscope.labelling import label_items
from scanrag.evaluation.docscope.official import fact_prompt as official_prompt
from scanrag.evaluation.docscope.profiled import (
    JudgingScorer,
    Opening,
    ProfileBinding,
    ProfiledScorer,
)
from scanrag.evaluation.docscope.profiles import OFFICIAL, Profile
from scanrag.evaluation.docscope.region_labels import ID_HINT
from scanrag.evaluation.judge_prompts import custom_messages, custom_template, template_hash
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
from scanrag.schemas import Sample, Trajectory

ROLE = "fact"
LABELS = frozenset({"consistent", "not_consistent"})


class FactItem(BaseModel):
    id: str | int = Field(json_schema_extra=ID_HINT)
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


class FactOutcome(BaseModel):
    page: int
    index: int
    fact_id: str
    status: str
    label: str | None = None
    reason: str | None = None


class FactPage(BaseModel):
    page: int
    facts: list[FactOutcome]
    units: int = 0  # evidence units read (paper profile)
    shortcut: bool = False  # labelled without a call: nothing on the page was cited
    record: JudgeRecord | None = None


def _messages(
    ctx: JudgeContext, opening: Opening, page: int, facts: list[GoldFact], evidence: list[str]
) -> tuple[list[Any], str]:
    gold = opening.gold
    template = custom_template(ctx, ROLE)
    if template is not None:
        fields = {
            "question": gold.question,
            "gt_page": page,
            "gold_facts_block": "\n".join(f"id={f.fact_id} :: {f.text}" for f in facts),
            "sibling_facts": official_prompt.siblings_text(gold.siblings(page)),
            "model_raw": "\n".join(evidence),
        }
        return custom_messages(template, fields), template_hash(template)
    if opening.profile.fact_reads == "whole_reply":
        messages = official_prompt.build_messages(
            question=gold.question,
            page=page,
            ids=[f.fact_id for f in facts],
            facts=[f.text for f in facts],
            siblings=gold.siblings(page),
            reply=opening.view.raw,
        )
        return messages, official_prompt.PROMPT_HASH
    messages = prompt.build_messages(
        question=gold.question, page=page, facts=[f.text for f in facts], units=evidence
    )
    return messages, prompt.PROMPT_HASH


async def judge_facts(ctx: JudgeContext, opening: Opening, page: int) -> FactPage:
    """The outcome of every gold fact of ``page``."""
    facts = opening.gold.facts_on(page)
    evidence = opening.view.evidence(page)
    units = len(evidence) if opening.profile.fact_reads == "cited_units" else 0

    def each(status: str, labels: Sequence[str | None], reasons: Sequence[str | None]) -> list:
        return [
            FactOutcome(page=page, index=i, fact_id=f.fact_id, status=s, label=v, reason=r)
            for i, (f, s, v, r) in enumerate(zip(facts, status, labels, reasons, strict=True))
        ]

    if opening.profile.shortcuts and not evidence:
        n = len(facts)
        outcomes = each(["ok"] * n, ["not_consistent"] * n, [None] * n)  # type: ignore[arg-type]
        return FactPage(page=page, facts=outcomes, shortcut=True)
    messages, prompt_hash = _messages(ctx, opening, page, facts, evidence)
    record, items = await label_items(
        ctx,
        opening.profile,
        ROLE,
        messages,
        prompt_hash,
        key=f"page={page}",
        ids=[f.fact_id for f in facts],
        allowed=LABELS,
        schema=FactJudgment,
        labeller=fact_labels,
    )
    statuses, labels, reasons = zip(*items, strict=True) if items else ((), (), ())
    outcomes = each(statuses, labels, reasons)  # type: ignore[arg-type]
    return FactPage(page=page, facts=outcomes, units=units, record=record)


class FactScorer(JudgingScorer):
    name = "fact"
    stage = "fact"
    roles = (ROLE,)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        opening = self.open_item(
            trajectory, sample, judge, has_gold=lambda g: g.n_facts > 0, role=ROLE
        )
        if isinstance(opening, ScoreRow):
            return opening
        assert judge is not None  # the opening checked the judge
        pages = [p for p in opening.p_hat() if opening.gold.facts_on(p)]
        results = await asyncio.gather(*(judge_facts(judge, opening, p) for p in pages))
        return fact_row(self, trajectory, sample, opening, list(results))

    def summarize(
        self, rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        facts = count_column(usable, "facts")
        consistent = count_column(usable, "consistent")
        metric = ratio_metric(
            consistent, facts, stats, excluded=failed, skipped=skipped, headline=True
        )
        tables: dict[str, Any] = {
            "facts": int(facts.sum()),
            "facts_no_citation": int(count_column(usable, "facts_no_citation").sum()),
            "facts_failed": int(count_column(usable, "facts_failed").sum()),
            "pages_failed": int(count_column(usable, "pages_failed").sum()),
            "partial_items": sum(1 for r in usable if r.status == "partial"),
        }
        if profile.summary_blocks:
            by_label = {
                "consistent": int(consistent.sum()),
                "not_consistent": int(count_column(usable, "not_consistent").sum()),
            }
            by_label = {k: v for k, v in by_label.items() if v}
            tables["official_summary"] = {"n": int(facts.sum()), "by_label": by_label}
        return AggregateResult(metrics={"consistency": metric}, tables=tables)


def fact_row(
    scorer: ProfiledScorer,
    trajectory: Trajectory,
    sample: Sample,
    opening: Opening,
    pages: list[FactPage],
) -> ScoreRow:
    row = scorer.new_row(trajectory, sample)
    outcomes = [o for page in pages for o in page.facts]
    labels = [o.label for o in outcomes if o.status == "ok" and o.label]
    failed = [o for o in outcomes if o.status != "ok"]
    info: dict[str, dict[str, Any]] = {}
    for page in pages:
        if page.record is not None:
            row.add_judge(page.record)
        bad = [o.status for o in page.facts if o.status != "ok"]
        info[str(page.page)] = {"status": bad[0] if bad else "ok", "units": page.units}
        if bad and page.record is not None and page.record.error:
            info[str(page.page)]["error"] = page.record.error
    consistent = labels.count("consistent")
    row.counts = {
        "facts": len(labels),
        "facts_ok": len(labels),
        "consistent": consistent,
        "not_consistent": len(labels) - consistent,
        "facts_failed": len(failed),
        "facts_no_citation": sum(len(p.facts) for p in pages if p.shortcut),
        "facts_judged_pages": len(outcomes),
        "facts_all": opening.gold.n_facts,
        "pages_judged": sum(1 for p in pages if not p.shortcut and p.record is not None),
        "pages_no_citation": sum(1 for p in pages if p.shortcut),
        "pages_failed": sum(1 for p in pages if info[str(p.page)]["status"] != "ok"),
    }
    row.metrics = {"consistency": consistent / len(labels) if labels else None}
    row.details = opening.details | {
        "pages": info,
        "units": [o.model_dump() | {"unit": f"page{o.page}/fact{o.index}"} for o in outcomes],
    }
    if failed:
        row.status = "partial" if labels else failed[0].status  # type: ignore[assignment]
        row.reason = f"{len(failed)} of {len(outcomes)} gold facts failed"
    return row


fact_official = ProfileBinding(FactScorer, OFFICIAL, "fact_official")
