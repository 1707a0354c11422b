"""Region judge scorer: formula by hand, validity gate, scripted judge paths, exclusions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope import region_prompt
from scanrag.evaluation.docscope.region import RegionScorer
from scanrag.evaluation.docscope.region_labels import RegionJudgment, gold_index, labels_from
from scanrag.llm import ModelError
from scanrag.schemas import BBox, Citation, Region

NO_CI = StatsOptions(n_resamples=0)


def reg(page: int, *v: float) -> Region:
    return Region(page=page, bbox=BBox.from_list(v))


def reply(*labels: str) -> str:
    items = [{"id": f"GOLD[{i + 1}]", "label": lab, "reason": "r"} for i, lab in enumerate(labels)]
    return json.dumps({"items": items})


def test_gold_ids_and_label_lists() -> None:
    assert [gold_index(v) for v in ("GOLD[1]", "g2", "3", 4)] == [0, 1, 2, 3]
    judged = RegionJudgment.model_validate(
        {
            "items": [
                {"id": "GOLD[2]", "label": "Not Covered"},
                {"id": "GOLD[1]", "label": "covered"},
            ]
        }
    )
    assert labels_from(judged, 2) == ["covered", "not_covered"]
    with pytest.raises(ValueError, match="no label for GOLD\\[2\\]"):
        labels_from(RegionJudgment.model_validate({"items": [{"id": 1, "label": "covered"}]}), 2)
    with pytest.raises(ValueError, match="unknown gold id"):
        labels_from(RegionJudgment.model_validate({"items": [{"id": 5, "label": "covered"}]}), 2)


async def test_formula_sums_over_items_and_pages(make_sample, make_traj, make_ctx) -> None:
    scorer = RegionScorer()
    # Page-level cases, one item each (the doc has 3 pages):
    #  q1 page 1: 3 gold [covered, imprecise, not_covered], 1 predicted box
    #  q2 page 2: 2 gold [covered, covered], 3 predicted boxes
    #  q3 page 3: 1 gold, no predicted box -> gated, not_covered, no call
    ctx = make_ctx([reply("covered", "imprecise", "not_covered"), reply("covered", "covered")])
    s1 = make_sample(
        id="q1",
        gold_pages=[1],
        gold_regions=[
            reg(1, 0, 0, 0.2, 0.2),
            reg(1, 0.3, 0.3, 0.5, 0.5),
            reg(1, 0.6, 0.6, 0.9, 0.9),
        ],
    )
    t1 = make_traj(sample_id="q1", pages=[1], regions=[reg(1, 0, 0, 0.4, 0.4)])
    s2 = make_sample(
        id="q2", gold_pages=[2], gold_regions=[reg(2, 0, 0, 0.2, 0.2), reg(2, 0.5, 0.5, 0.7, 0.7)]
    )
    t2 = make_traj(
        sample_id="q2",
        pages=[2],
        regions=[reg(2, 0, 0, 0.2, 0.2), reg(2, 0.5, 0.5, 0.7, 0.7), reg(2, 0.8, 0.8, 0.9, 0.9)],
    )
    s3 = make_sample(id="q3", gold_pages=[3], gold_regions=[reg(3, 0.1, 0.1, 0.3, 0.3)])
    t3 = make_traj(sample_id="q3", pages=[3])
    r1 = await scorer.score(t1, s1, judge=ctx)
    r2 = await scorer.score(t2, s2, judge=ctx)
    r3 = await scorer.score(t3, s3, judge=ctx)
    assert len(ctx.llm.requests) == 2  # the gated page made no call
    assert r3.counts["pages_gated"] == 1 and r3.details["units"][0]["label"] == "not_covered"
    assert r1.counts["hit_strict_capped"] == 1 and r1.counts["hit_lenient_capped"] == 1
    assert r1.metrics["strict_recall"] == pytest.approx(1 / 3)
    assert r1.metrics["lenient_precision"] == pytest.approx(1.0)  # min(2, 1) / 1
    out = scorer.aggregate([r1, r2, r3], RowGroup("c", "s"), NO_CI).metrics
    # Σ|G| = 6, Σn_pred = 4; strict Σh = 3, Σmin(h, n) = 1 + 2 + 0; lenient Σh = 4, Σmin = 3
    assert out["strict_recall"].value == pytest.approx(3 / 6)
    assert out["strict_precision"].value == pytest.approx(3 / 4)
    assert out["strict_f1"].value == pytest.approx(2 * 0.75 * 0.5 / 1.25)
    assert out["lenient_recall"].value == pytest.approx(4 / 6)
    assert out["lenient_precision"].value == pytest.approx(3 / 4)
    lr = 4 / 6
    assert out["lenient_f1"].value == pytest.approx(2 * 0.75 * lr / (0.75 + lr))


async def test_judge_request_carries_the_overlay_and_prompt(
    make_sample, make_traj, make_ctx
) -> None:
    ctx = make_ctx([reply("covered")])
    sample = make_sample(gold_pages=[2], gold_regions=[reg(2, 0.1, 0.1, 0.4, 0.3)])
    traj = make_traj(pages=[2], regions=[reg(2, 0.1, 0.1, 0.5, 0.35)])
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "ok" and row.metrics["strict_recall"] == 1.0
    request = ctx.llm.requests[0]
    images = [p for m in request.messages for p in m.images]
    assert len(images) == 1 and Path(images[0]).is_file()
    assert "GOLD[1]" in request.messages[-1].text
    assert request.prompt_hash == region_prompt.PROMPT_HASH
    judge = row.judges[0]
    assert judge.status == "ok" and judge.model == "scripted/judge" and judge.key == "page=2"
    assert row.usage["judge.region"].calls == 1
    unit = row.details["units"][0]
    assert unit["unit"] == "page2/gold0" and unit["gt_recall"] == pytest.approx(1.0)


async def test_invalid_boxes_gate_the_page_but_count_as_predictions(
    make_sample, make_traj, make_ctx
) -> None:
    ctx = make_ctx([])
    sample = make_sample(
        gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(1, 0.5, 0.5, 0.6, 0.6)]
    )
    traj = make_traj(
        pages=[1],
        citations=[Citation(sentence="x", page=1, bbox=[1.2, 0, 1.5, 0.3], valid=False)],
    )
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert not ctx.llm.requests
    assert row.counts["n_pred"] == 1 and row.counts["covered"] == 0 and row.counts["gold"] == 2
    assert row.metrics["strict_precision"] == 0.0 and row.metrics["strict_f1"] == 0.0


async def test_boxes_on_a_correct_page_without_gold_regions_count_against_precision(
    make_sample, make_traj, make_ctx
) -> None:
    ctx = make_ctx([])
    sample = make_sample(gold_pages=[1, 2], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    # page 2 is correct but has no gold region (DocScope eq. 2 sums over every p in P̂, so its
    # two boxes enter Σ n_pred with h = 0); page 3 is wrong; page 1 was missed
    traj = make_traj(
        pages=[2, 3],
        regions=[reg(2, 0, 0, 1, 1), reg(2, 0.2, 0.2, 0.4, 0.4), reg(3, 0, 0, 1, 1)],
    )
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "ok" and not ctx.llm.requests
    assert row.counts["gold"] == 0 and row.counts["n_pred"] == 2 and row.counts["gold_all"] == 1
    assert row.counts["pages_no_gold"] == 1 and row.counts["pages_judged"] == 0
    assert row.metrics["strict_recall"] is None and row.metrics["strict_precision"] == 0.0


async def test_retry_after_malformed_json(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx(['```json\n{"items": [ {"id": "GOLD[1]", ', reply("imprecise")])
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    traj = make_traj(pages=[1], regions=[reg(1, 0.2, 0.2, 0.3, 0.3)])
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "ok" and row.judges[0].attempts == 2
    assert row.counts["imprecise"] == 1


async def test_a_reply_missing_a_gold_id_is_retried(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([reply("covered"), reply("covered", "not_covered")])
    sample = make_sample(
        gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(1, 0.5, 0.5, 0.6, 0.6)]
    )
    traj = make_traj(pages=[1], regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "ok" and row.counts["covered"] == 1 and row.judges[0].attempts == 2
    assert "GOLD[2]" in ctx.llm.requests[1].messages[-1].text


async def test_parse_failure_twice_excludes_the_item_instead_of_zero(
    make_sample, make_traj, make_ctx
) -> None:
    ctx = make_ctx(["nonsense", "still nonsense"])
    scorer = RegionScorer()
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    row = await scorer.score(
        make_traj(pages=[1], regions=[reg(1, 0.1, 0.1, 0.3, 0.3)]), sample, judge=ctx
    )
    assert row.status == "judge_parse_error" and row.metrics["strict_f1"] is None
    assert row.counts["gold"] == 0 and row.counts["pages_failed"] == 1
    good = await scorer.score(
        make_traj(sample_id="q2", pages=[1], regions=[reg(1, 0.1, 0.1, 0.3, 0.3)]),
        make_sample(id="q2", gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)]),
        judge=make_ctx([reply("covered")]),
    )
    out = scorer.aggregate([row, good], RowGroup("c", "s"), NO_CI).metrics
    assert out["strict_f1"].value == 1.0  # the failed item is excluded, not a 0
    assert out["strict_f1"].excluded == 1 and out["strict_f1"].n == 1


async def test_one_failed_page_makes_the_item_partial(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([reply("covered"), ModelError("scripted/judge", "down")])
    sample = make_sample(
        gold_pages=[1, 2], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(2, 0.1, 0.1, 0.3, 0.3)]
    )
    traj = make_traj(pages=[1, 2], regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(2, 0.1, 0.1, 0.3, 0.3)])
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "partial" and row.counts["pages_failed"] == 1
    assert row.counts["gold"] == 1 and row.counts["covered"] == 1
    statuses = sorted(j.status for j in row.judges)
    assert statuses == ["judge_error", "ok"]


async def test_without_a_vision_model_the_item_is_skipped(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([], model="local/qwen2.5-0.5b")
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    row = await RegionScorer().score(
        make_traj(pages=[1], regions=[reg(1, 0, 0, 1, 1)]), sample, judge=ctx
    )
    assert row.status == "skipped" and "vision" in (row.reason or "")
    assert row.metrics == {} and not ctx.llm.requests


async def test_missing_pdf_is_render_failed(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([reply("covered")])
    sample = make_sample(
        doc_ids=["missing.pdf"], gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)]
    )
    row = await RegionScorer().score(
        make_traj(pages=[1], regions=[reg(1, 0, 0, 1, 1)]), sample, judge=ctx
    )
    assert row.status == "render_failed" and row.judges[0].status == "render_failed"
    assert "missing.pdf" in (row.judges[0].error or "") and not ctx.llm.requests


async def test_unanswerable_and_no_gold_regions_are_skipped(
    make_sample, make_traj, make_ctx
) -> None:
    ctx = make_ctx([])
    scorer = RegionScorer()
    unans = await scorer.score(make_traj(), make_sample(answerable=False, answer=None), judge=ctx)
    none = await scorer.score(make_traj(pages=[2]), make_sample(), judge=ctx)
    assert unans.status == none.status == "skipped"
    assert none.reason == "no gold regions"
