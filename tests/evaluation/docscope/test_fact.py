"""Fact consistency: the citation-scoped evidence unit rule, scripted judge paths, pooling."""

from __future__ import annotations

import json

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope import fact_prompt
from scanrag.evaluation.docscope.common import DocScope, evidence_units
from scanrag.evaluation.docscope.fact import FactScorer
from scanrag.llm import ModelError
from scanrag.schemas import Citation, Fact

NO_CI = StatsOptions(n_resamples=0)
ANY_DOC = DocScope(frozenset({"doc.pdf"}), single=True)


def labels(*values: str) -> str:
    return json.dumps({"items": [{"id": f"f{i + 1}", "label": v} for i, v in enumerate(values)]})


def test_evidence_units_follow_the_citation_rule(make_traj) -> None:
    traj = make_traj(
        answer="Revenue was 99 on page 2",
        citations=[
            Citation(sentence="Revenue was 12 in 2020.", page=2, doc_page="1"),
            Citation(sentence="", page=5, doc_page="4"),  # back-to-back: shares the unit above
            Citation(sentence="Costs were 3.", page=6, doc_page="2"),  # doc_page never decides
            Citation(sentence="- Profit: 9", page=2, bbox=[2, 0, 3, 1], valid=False),
            Citation(sentence="Total <answer>21</answer>", page=3),
        ],
        facts=[Fact(page=2, text="Revenue was 12 in 2020."), Fact(page=4, text="Staff: 40")],
    )
    assert evidence_units(traj, 2, ANY_DOC) == ["Revenue was 12 in 2020.", "- Profit: 9"]
    assert evidence_units(traj, 5, ANY_DOC) == ["Revenue was 12 in 2020."]
    assert evidence_units(traj, 3, ANY_DOC) == ["Total"]  # the answer block is never evidence
    assert evidence_units(traj, 4, ANY_DOC) == ["Staff: 40"]  # structured facts are units
    assert evidence_units(traj, 1, ANY_DOC) == []


async def test_page_without_citation_needs_no_call(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([labels("consistent", "not_consistent")])
    sample = make_sample(
        gold_pages=[2, 3],
        gold_facts=[
            Fact(page=2, text="Revenue was 12 in 2020."),
            Fact(page=2, text="Costs were 3 in 2020."),
            Fact(page=3, text="Profit was 9."),
        ],
    )
    traj = make_traj(
        pages=[2, 3],
        answer="12",
        citations=[Citation(sentence="Revenue reached 12 in 2020.", page=2)],
    )
    row = await FactScorer().score(traj, sample, judge=ctx)
    assert len(ctx.llm.requests) == 1
    text = ctx.llm.requests[0].messages[-1].text
    assert '"f1": "Revenue was 12 in 2020."' in text
    assert '"e1": "Revenue reached 12 in 2020."' in text
    assert ctx.llm.requests[0].prompt_hash == fact_prompt.PROMPT_HASH
    assert row.counts["facts"] == 3 and row.counts["consistent"] == 1
    assert row.counts["facts_no_citation"] == 1 and row.counts["pages_no_citation"] == 1
    assert row.metrics["consistency"] == pytest.approx(1 / 3)
    assert [u["label"] for u in row.details["units"]] == [
        "consistent",
        "not_consistent",
        "not_consistent",
    ]


async def test_facts_on_missed_pages_are_not_counted(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([labels("consistent")])
    sample = make_sample(
        gold_pages=[1, 2], gold_facts=[Fact(page=1, text="A is 1."), Fact(page=2, text="B is 2.")]
    )
    traj = make_traj(pages=[1], citations=[Citation(sentence="A is 1.", page=1)])
    row = await FactScorer().score(traj, sample, judge=ctx)
    assert row.counts["facts"] == 1 and row.counts["facts_all"] == 2
    assert row.metrics["consistency"] == 1.0


async def test_failures_are_excluded_from_the_rate(make_sample, make_traj, make_ctx) -> None:
    scorer = FactScorer()
    sample = make_sample(gold_pages=[1], gold_facts=[Fact(page=1, text="A is 1.")])
    traj = make_traj(pages=[1], citations=[Citation(sentence="A is 1.", page=1)])
    bad = await scorer.score(traj, sample, judge=make_ctx(["{oops", "nope"]))
    down = await scorer.score(traj, sample, judge=make_ctx([ModelError("m", "down")]))
    fixed = await scorer.score(traj, sample, judge=make_ctx(["{oops", labels("consistent")]))
    assert bad.status == "judge_parse_error" and down.status == "judge_error"
    assert bad.metrics["consistency"] is None and fixed.status == "ok"
    rows = [bad.model_copy(update={"sample_id": "a"}), down.model_copy(update={"sample_id": "b"})]
    out = scorer.aggregate([*rows, fixed], RowGroup("c", "s"), NO_CI).metrics["consistency"]
    assert out.value == 1.0 and out.excluded == 2 and out.n == 1


async def test_skips(make_sample, make_traj, make_ctx) -> None:
    scorer = FactScorer()
    no_facts = await scorer.score(make_traj(pages=[2]), make_sample(), judge=make_ctx([]))
    assert no_facts.status == "skipped" and no_facts.reason == "no gold facts"
    sample = make_sample(gold_facts=[Fact(page=2, text="A")])
    no_judge = await scorer.score(make_traj(pages=[2]), sample, judge=None)
    assert no_judge.status == "skipped"
