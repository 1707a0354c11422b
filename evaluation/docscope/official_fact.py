"""Fact consistency under the official profile (DocScope's ``score_facts.py``).

Population: items whose inference succeeded, answerable or not, and for each the pages in
both the gold evidence pages and the cited pages that hold gold facts. One judge call per
page, always (no shortcut when nothing on the page was cited): the judge gets the question,
the page, that page's gold facts with their ids, the item's facts of other pages as context
and the system's whole reply, and applies the citation rule itself. Each fact gets its own
status: ``ok`` with ``consistent`` / ``not_consistent``, ``judge_parse_error`` when the reply
has no exact label for its id, ``judge_error`` when the call failed. Fact ids are the
benchmark's ``local_id`` values when the sample kept them (``metadata["fact_ids"]``), else
``f1``, ``f2``... in the item's order. The judge may write up to 2048 tokens, with no second
try. The summary counts the labels of ``ok`` facts; consistency = consistent / n.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from evaluation.base import Scorer, StatsOptions, count_column, ratio_metric, split_rows
from evaluation.docscope import official_prompts as prompt
from evaluation.docscope.official import (
    OfficialView,
    inference_skip,
    judge_items,
    official_view,
)
from evaluation.docscope.profiles import OFFICIAL
from evaluation.judge_prompts import custom_messages, custom_template, template_hash
from evaluation.judging import JudgeContext
from evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
from scanrag.schemas import Sample, Trajectory

ROLE = "fact"
LABELS = frozenset({"consistent", "not_consistent"})


class _FactOutcome(BaseModel):
    page: int
    index: int
    fact_id: str
    status: str
    label: str | None = None
    reason: str | None = None


def fact_ids(sample: Sample) -> list[str]:
    """The id of every gold fact: the benchmark's local ids when kept, else f1, f2, ..."""
    kept = sample.metadata.get("fact_ids")
    if isinstance(kept, list) and len(kept) == len(sample.gold_facts):
        return [str(k) for k in kept]
    return [f"f{j + 1}" for j in range(len(sample.gold_facts))]


def fact_pages(sample: Sample) -> dict[int, list[int]]:
    """Indices (into ``gold_facts``) of the gold facts of each page."""
    out: dict[int, list[int]] = {}
    for j, fact in enumerate(sample.gold_facts):
        out.setdefault(fact.page, []).append(j)
    return out


def _messages(
    ctx: JudgeContext, sample: Sample, page: int, on_page: list[int], reply: str
) -> tuple[list[Any], str, list[str]]:
    ids_all = fact_ids(sample)
    ids = [ids_all[j] for j in on_page]
    facts = [sample.gold_facts[j].text for j in on_page]
    siblings = [f.text for f in sample.gold_facts if f.page != page]
    template = custom_template(ctx, ROLE)
    if template is None:
        messages = prompt.build_messages(
            question=sample.question,
            page=page,
            ids=ids,
            facts=facts,
            siblings=siblings,
            reply=reply,
        )
        return messages, prompt.PROMPT_HASH, ids
    fields = {
        "question": sample.question,
        "gt_page": page,
        "gold_facts_block": prompt.facts_block(ids, facts),
        "sibling_facts": prompt.siblings_text(siblings),
        "model_raw": reply,
    }
    return custom_messages(template, fields), template_hash(template), ids


async def _judge_page(
    ctx: JudgeContext, sample: Sample, view: OfficialView, page: int, on_page: list[int]
) -> tuple[list[_FactOutcome], JudgeRecord]:
    messages, prompt_hash, ids = _messages(ctx, sample, page, on_page, view.raw)
    key = f"page={page}"
    record, items = await judge_items(ctx, ROLE, messages, prompt_hash, key, ids, LABELS)
    return [
        _FactOutcome(page=page, index=k, fact_id=ids[k], status=status, label=label, reason=reason)
        for k, (status, label, reason) in enumerate(items)
    ], record


async def score_fact(
    scorer: Scorer, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None
) -> ScoreRow:
    view = official_view(trajectory)
    details: dict[str, Any] = {"profile": OFFICIAL, "view": view.source}
    if not view.ok:
        return inference_skip(scorer, trajectory, sample, view)
    by_page = fact_pages(sample)
    if not by_page:
        return scorer.skip(trajectory, sample, "no gold facts", details=details)
    if judge is None or judge.model_for(ROLE) is None:
        reason = judge.why_not(ROLE) if judge is not None else "no judge context"
        return scorer.skip(trajectory, sample, reason, details=details)
    pages = sorted(p for p in set(sample.gold_pages) & set(view.predicted_pages) if p in by_page)
    results = await asyncio.gather(
        *(_judge_page(judge, sample, view, p, by_page[p]) for p in pages)
    )
    row = scorer.new_row(trajectory, sample)
    outcomes: list[_FactOutcome] = []
    for page_outcomes, record in results:
        row.add_judge(record)
        outcomes += page_outcomes
    labels = [o.label for o in outcomes if o.status == "ok"]
    consistent = labels.count("consistent")
    failed = [o.status for o in outcomes if o.status != "ok"]
    row.counts = {
        "facts": len(labels),
        "facts_ok": len(labels),
        "consistent": consistent,
        "not_consistent": len(labels) - consistent,
        "facts_failed": len(failed),
        "facts_judged_pages": len(outcomes),
        "facts_all": len(sample.gold_facts),
        "pages_judged": len(pages),
    }
    row.metrics = {"consistency": consistent / len(labels) if labels else None}
    row.details = details | {
        "units": [o.model_dump() | {"unit": f"page{o.page}/fact{o.index}"} for o in outcomes]
    }
    if failed:
        row.status = "partial" if labels else failed[0]  # type: ignore[assignment]
        row.reason = f"{len(failed)} of {len(outcomes)} gold facts failed"
    return row


def aggregate_fact(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
    usable, failed, skipped = split_rows(rows)
    facts = count_column(usable, "facts")
    consistent = count_column(usable, "consistent")
    by_label = {
        "consistent": int(consistent.sum()),
        "not_consistent": int(count_column(usable, "not_consistent").sum()),
    }
    return AggregateResult(
        metrics={
            "consistency": ratio_metric(
                consistent, facts, stats, excluded=failed, skipped=skipped, headline=True
            )
        },
        tables={
            "official_summary": {
                "n": int(facts.sum()),
                "by_label": {k: v for k, v in by_label.items() if v},
            },
            "facts": int(facts.sum()),
            "facts_failed": int(count_column(usable, "facts_failed").sum()),
            "partial_items": sum(1 for r in usable if r.status == "partial"),
        },
    )
