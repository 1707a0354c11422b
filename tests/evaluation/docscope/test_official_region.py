"""Region grounding under the official profile: boxes as drawn, pages judged, per-box
statuses and counts, capped-precision sums, the summary block and the geometric twin."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.docscope.gold import official_gold
from scanrag.evaluation.docscope.profiled import Opening
from scanrag.evaluation.docscope.profiles import OFFICIAL
from scanrag.evaluation.docscope.reading import drawable, released_view
from scanrag.evaluation.docscope.region import RegionScorer, summarize_regions
from scanrag.evaluation.docscope.region_geometry import RegionGeometryScorer
from scanrag.evaluation.docscope.region_page import RENDER_DPI, _pixels
from scanrag.evaluation.documents import DocumentSource
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.schemas import ScoreRow
from scanrag.llm import ChatRequest, ModelError, ScriptedModel
from scanrag.schemas import BBox, Citation, Region, Status

TEMPLATE = (
    "P={gt_page}|N={gold_total_on_page}|A={gold_answer}|{gold_facts_block}|K={n_pred}"
    "|{pred_bboxes_norm}"
)
NO_CI = StatsOptions(n_resamples=0)


def _box(x1: float, y1: float, x2: float, y2: float) -> BBox:
    return BBox(x1=x1, y1=y1, x2=x2, y2=y2)


def test_drawable_orders_clips_and_drops_invisible_boxes() -> None:
    assert drawable([[0.5, 0.6, 0.1, 0.2]]) == [_box(0.1, 0.2, 0.5, 0.6)]
    assert drawable([[-0.2, -0.3, 1.4, 1.3]]) == [_box(0.0, 0.0, 1.0, 1.0)]
    # clipped to the page, a box beyond an edge has no width or height left
    assert drawable([[1.2, 0.1, 1.4, 0.5]]) == []
    assert drawable([[0.1, 1.2, 0.5, 1.4]]) == []
    assert drawable([[-0.4, 0.1, -0.2, 0.5]]) == []
    assert drawable([[0.1, -0.4, 0.5, -0.2]]) == []
    assert drawable([[0.3, 0.1, 0.3, 0.5], [0.1, 0.3, 0.5, 0.3]]) == []
    assert drawable([[0.1, 0.1, 0.2, 0.2], [0.1, 0.1, 0.2, 0.2]]) == [_box(0.1, 0.1, 0.2, 0.2)] * 2


def test_gold_by_page_and_judged_pages(make_sample, make_traj) -> None:
    regions = [
        Region(page=3, bbox=_box(0, 0, 1, 1)),
        Region(page=2, bbox=_box(0, 0, 0.5, 0.5)),
        Region(page=3, bbox=_box(0.1, 0.1, 0.2, 0.2)),
    ]
    sample = make_sample(gold_regions=regions, gold_pages=[2, 3, 4])
    gold = official_gold(sample)
    assert {p: [g.box for g in found] for p, found in gold.boxes.items()} == {
        3: [regions[0].bbox, regions[2].bbox],
        2: [regions[1].bbox],
    }
    assert [g.index for g in gold.boxes_on(3)] == [0, 1]
    traj = make_traj(
        citations=[Citation(sentence="x", page=p, bbox=[0, 0, 1, 1]) for p in (4, 3, 2, 9)],
        metadata={"parser": "json"},
    )
    opening = Opening(OFFICIAL, released_view(traj), gold, {})
    judged = [p for p in opening.p_hat() if gold.boxes_on(p)]
    assert judged == [2, 3]  # 4: no gold box; 9: not gold


def test_pixels_of_a_144_dpi_render() -> None:
    assert RENDER_DPI == 144
    assert _pixels(_box(0.1, 0.25, 0.5, 1.0), (300, 400), 72) == [60.0, 200.0, 300.0, 800.0]
    assert _pixels(_box(0.1, 0.25, 0.5, 1.0), (600, 800), 144) == [60.0, 200.0, 300.0, 800.0]
    assert _pixels(_box(1 / 3, 0, 1, 1), (300, 400), 144) == [100.0, 0.0, 300.0, 400.0]
    # one decimal: 0.1234 * 300 = 37.02 and 0.1234 * 400 = 49.36
    assert _pixels(_box(0.1234, 0.1234, 1, 1), (300, 400), 144) == [37.0, 49.4, 300.0, 400.0]


def _labels(**by_id: str) -> str:
    return json.dumps(
        {"items": [{"id": k, "label": v, "reason": f"r-{k}"} for k, v in by_id.items()]}
    )


def _ctx(pdf_dir, tmp_path, answers: dict[int, Any]) -> JudgeContext:
    """A judge answering by the page in the user prompt (pages are judged concurrently)."""

    def respond(request: ChatRequest) -> str:
        match = re.match(r"P=(\d+)\|", request.messages[-1].text)
        assert match, request.messages[-1].text
        answer = answers[int(match.group(1))]
        if isinstance(answer, Exception):
            raise answer
        return str(answer)

    config = JudgeConfig(default_model="scripted/judge", prompts={"region": TEMPLATE})
    documents = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
    return JudgeContext(
        llm=ScriptedModel([], responder=respond), config=config, documents=documents
    )


GOLD = [
    Region(page=2, bbox=_box(0.1, 0.1, 0.5, 0.5)),
    Region(page=2, bbox=_box(0.6, 0.6, 0.9, 0.9)),
    Region(page=3, bbox=_box(0.0, 0.0, 0.5, 0.5)),
]
CITES = [
    Citation(sentence="a", page=2, bbox=[0.1, 0.1, 0.5, 0.5]),
    Citation(sentence="b", page=2, bbox=[40, 40, 90, 90]),  # not drawn, still counted
    Citation(sentence="c", page=3, bbox=[0.0, 0.0, 0.25, 0.5]),
    Citation(sentence="c", page=3, bbox=[0.0, 0.0, 0.25, 0.5]),  # duplicates are kept
    Citation(sentence="d", page=3, bbox=[0.0, 0.0, 0.25, 0.5]),
]


async def _score(make_sample, make_traj, ctx, citations=CITES, gold=GOLD) -> ScoreRow:
    sample = make_sample(gold_regions=gold, gold_pages=[2, 3])
    traj = make_traj(citations=citations, metadata={"parser": "json"})
    return await RegionScorer(profile="official").score(traj, sample, judge=ctx)


async def test_counts_units_and_rates(make_sample, make_traj, pdf_dir, tmp_path) -> None:
    answers = {2: _labels(g1="covered", g2="imprecise"), 3: _labels(g1="covered")}
    ctx = _ctx(pdf_dir, tmp_path, answers)
    row = await _score(make_sample, make_traj, ctx)
    assert row.status == "ok" and row.reason is None
    assert row.counts == {
        "boxes": 3,
        "boxes_ok": 3,
        "boxes_failed": 0,
        "n_pred": 5,
        "n_pred_drawn": 4,
        "hit_strict_capped": 2,  # page 2: min(1, 2); page 3: min(1, 3)
        "hit_lenient_capped": 3,  # page 2: min(2, 2); page 3: min(1, 3)
        "covered": 2,
        "imprecise": 1,
        "not_covered": 0,
        "gold": 3,
        "gold_all": 3,
        "pages_judged": 2,
        "pages_gated": 0,
        "pages_no_gold": 0,
        "pages_failed": 0,
    }
    assert row.metrics["covered_rate"] == 2 / 3 and row.metrics["lenient_rate"] == 1.0
    assert row.metrics["strict_precision"] == 2 / 5 and row.metrics["strict_recall"] == 2 / 3
    assert row.details["profile"] == "official" and row.details["view"] == "trajectory"
    units = row.details["units"]
    assert [u["unit"] for u in units] == ["page2/gold0", "page2/gold1", "page3/gold0"]
    assert units[0] | {"reason": None} == {
        "page": 2,
        "index": 0,
        "gold_id": "g1",
        "status": "ok",
        "label": "covered",
        "reason": None,
        "unit": "page2/gold0",
        "gated": False,
        "n_pred_drawn": 1,
        "skipped_pred_bboxes": [[40.0, 40.0, 90.0, 90.0]],
        "iou": 1.0,
        "iom": 1.0,
        "gt_recall": 1.0,
    }
    assert units[0]["reason"] == "r-g1"
    assert (units[1]["iou"], units[1]["gt_recall"]) == (0.0, 0.0)
    assert units[2]["n_pred_drawn"] == 3 and units[2]["gt_recall"] == pytest.approx(0.5)
    assert len(row.judges) == 2
    texts = sorted(r.messages[-1].text for r in ctx.llm.requests)
    assert texts[0].startswith(
        "P=2|N=2|A=12|id=g1 :: index_on_page=1, element_type=text, "
        "gold_bbox_px=[60.0, 80.0, 300.0, 400.0]\n"
        "id=g2 :: index_on_page=2, element_type=text, gold_bbox_px=[360.0, 480.0, 540.0, 720.0]|"
    )
    assert "|K=1|[[0.1, 0.1, 0.5, 0.5]]" in texts[0]  # only drawn boxes reach the judge
    assert texts[1].startswith("P=3|N=1|") and "|K=3|" in texts[1]


async def test_capped_hits_and_pages_without_labels(
    make_sample, make_traj, pdf_dir, tmp_path
) -> None:
    # page 2: two covered gold boxes, one predicted box -> the hits are capped at 1;
    # page 3: the reply has no label -> its predicted boxes do not count.
    answers = {2: _labels(g1="covered", g2="covered"), 3: "{}"}
    ctx = _ctx(pdf_dir, tmp_path, answers)
    citations = [CITES[0], *CITES[2:]]
    row = await _score(make_sample, make_traj, ctx, citations=citations)
    assert row.status == "partial" and row.reason == "1 of 3 gold boxes failed"
    assert (row.counts["n_pred"], row.counts["n_pred_drawn"]) == (1, 1)
    assert (row.counts["hit_strict_capped"], row.counts["hit_lenient_capped"]) == (1, 1)
    assert (row.counts["boxes_ok"], row.counts["boxes_failed"]) == (2, 1)
    assert (row.metrics["covered_rate"], row.metrics["lenient_rate"]) == (1.0, 1.0)
    assert row.details["units"][2]["status"] == "judge_parse_error"


async def test_every_box_failed_takes_the_first_status(
    make_sample, make_traj, pdf_dir, tmp_path
) -> None:
    answers = {2: "{}", 3: ModelError("scripted/judge", "down")}
    row = await _score(make_sample, make_traj, _ctx(pdf_dir, tmp_path, answers))
    assert row.status == "judge_parse_error"
    assert row.reason == "3 of 3 gold boxes failed"
    assert set(row.metrics.values()) == {None}
    assert [u["status"] for u in row.details["units"]] == ["judge_parse_error"] * 2 + [
        "judge_error"
    ]


async def test_with_no_box_judged_the_first_failure_names_the_row(
    make_sample, make_traj, pdf_dir, tmp_path
) -> None:
    answers = {2: "{}", 3: ModelError("scripted/judge", "down")}
    ctx = _ctx(pdf_dir, tmp_path, answers)
    row = await _score(make_sample, make_traj, ctx, gold=[GOLD[0], GOLD[2]])
    assert row.status == "judge_parse_error" and row.reason == "2 of 2 gold boxes failed"
    assert [u["status"] for u in row.details["units"]] == ["judge_parse_error", "judge_error"]


async def test_skips(make_sample, make_traj, pdf_dir, tmp_path) -> None:
    scorer = RegionScorer(profile="official")
    traj = make_traj(citations=CITES, metadata={"parser": "json"})
    row = await scorer.score(traj, make_sample(), judge=_ctx(pdf_dir, tmp_path, {}))
    assert row.status == "skipped" and row.reason == "no gold regions"
    assert row.details == {"profile": "official", "view": "trajectory"}
    sample = make_sample(gold_regions=GOLD)
    row = await scorer.score(traj, sample, judge=None)
    assert row.status == "skipped" and row.reason == "no judge context"
    assert row.details == {"profile": "official", "view": "trajectory"}
    no_model = JudgeContext(llm=ScriptedModel([]), config=JudgeConfig())
    row = await scorer.score(traj, sample, judge=no_model)
    assert row.status == "skipped" and row.reason == no_model.why_not("region")
    failed = make_traj(status=Status.MODEL_ERROR, citations=CITES)
    row = await scorer.score(failed, sample, judge=None)
    assert row.status == "skipped" and "inference status" in (row.reason or "")


async def test_no_document_source_is_a_render_failure(make_sample, make_traj) -> None:
    config = JudgeConfig(default_model="scripted/judge")
    ctx = JudgeContext(llm=ScriptedModel([]), config=config)
    row = await _score(make_sample, make_traj, ctx)
    assert row.status == "render_failed" and ctx.llm.requests == []
    assert row.judges[0].status == "render_failed"
    assert row.judges[0].error == "FileNotFoundError: no document source to render pages from"
    assert row.judges[0].key in ("page=2", "page=3")
    assert row.details["units"][0]["n_pred_drawn"] == 1
    assert [u["gold_id"] for u in row.details["units"]] == ["g1", "g2", "g1"]
    assert [u["index"] for u in row.details["units"]] == [0, 1, 0]


async def test_a_missing_gold_answer_is_empty_in_a_prompt_file(
    make_sample, make_traj, pdf_dir, tmp_path
) -> None:
    ctx = _ctx(pdf_dir, tmp_path, {3: _labels(g1="not_covered")})
    sample = make_sample(answer=None, gold_regions=GOLD[2:], gold_pages=[3])
    traj = make_traj(citations=CITES[2:3], metadata={"parser": "json"})
    row = await RegionScorer(profile="official").score(traj, sample, judge=ctx)
    assert ctx.llm.requests[0].messages[-1].text.startswith("P=3|N=1|A=|id=g1 ")
    assert row.counts["not_covered"] == 1
    assert (row.metrics["covered_rate"], row.metrics["lenient_rate"]) == (0.0, 0.0)


def _row(status: str, reason: str = "", **counts: float) -> ScoreRow:
    row = ScoreRow(sample_id="q", strategy="s", scorer="region_official", status=status)
    row.counts = counts
    row.reason = reason or None
    return row


def test_aggregate_rates_capped_f1_and_summary() -> None:
    base = dict.fromkeys(("hit_strict_capped", "hit_lenient_capped", "not_covered"), 0.0)
    rows = [
        _row(
            "ok",
            **base
            | {
                "boxes_ok": 3,
                "gold": 3,
                "covered": 2,
                "imprecise": 1,
                "n_pred": 4,
                "hit_strict_capped": 2,
                "hit_lenient_capped": 3,
            },
        ),
        _row(
            "partial",
            **base | {"boxes_ok": 1, "gold": 1, "imprecise": 0, "covered": 0, "n_pred": 2},
            boxes_failed=1,
        ),
        _row("judge_error", boxes_failed=2),
        _row("skipped", "inference status 'error': left out under the official profile"),
        _row("skipped", "no gold regions"),
        _row("skipped", "no judge context"),
        _row("ok", **base | {"boxes_ok": 0, "gold": 0, "covered": 0, "imprecise": 0, "n_pred": 0}),
    ]
    rows[1].counts["not_covered"] = 1
    result = summarize_regions(rows, NO_CI, OFFICIAL)
    assert result.metrics["covered_rate"].value == 2 / 4
    assert result.metrics["lenient_rate"].value == 3 / 4
    assert result.metrics["covered_rate"].headline and result.metrics["lenient_rate"].headline
    assert result.tables["official_summary"] == {
        "n": 4,
        "by_label": {"covered": 2, "imprecise": 1, "not_covered": 1},
    }
    capped = {name: metric.value for name, metric in result.metrics.items()}
    assert not result.metrics["strict_f1"].headline
    assert capped["strict_precision"] == 2 / 6 and capped["strict_recall"] == 2 / 4
    assert capped["lenient_precision"] == 3 / 6 and capped["lenient_recall"] == 3 / 4
    assert capped["strict_f1"] == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert capped["lenient_f1"] == pytest.approx(2 * 0.5 * 0.75 / 1.25)
    assert result.tables["boxes_failed"] == 1
    assert result.tables["partial_items"] == 1
    assert result.tables["inference_errors"] == 1
    empty = summarize_regions(
        [_row("ok", **base | {"boxes_ok": 0, "gold": 0, "n_pred": 0})], NO_CI, OFFICIAL
    )
    assert empty.metrics["strict_f1"].value is None
    assert empty.tables["official_summary"] == {"n": 0, "by_label": {}}


def test_geometry_twin_measures_the_drawn_boxes(make_sample, make_traj) -> None:
    scorer = RegionGeometryScorer(covered_threshold=0.9, profile="official")
    sample = make_sample(gold_regions=GOLD, gold_pages=[2, 3])
    extra = [*CITES, Citation(sentence="e", page=9, bbox=[0, 0, 1, 1])]
    row = scorer.compute(make_traj(citations=extra, metadata={"parser": "json"}), sample)
    assert row.details["profile"] == "official" and row.details["view"] == "trajectory"
    assert row.details["covered_threshold"] == 0.9
    assert [u["unit"] for u in row.details["units"]] == [
        "page2/gold0",
        "page2/gold1",
        "page3/gold0",
    ]
    assert [u["iou"] for u in row.details["units"]] == pytest.approx([1.0, 0.0, 0.5])
    assert (row.counts["gold"], row.counts["covered_geo"], row.counts["gold_all"]) == (3, 1, 3)
    assert row.metrics["iou"] == pytest.approx(0.5)
    failed = make_traj(status=Status.MODEL_ERROR, citations=CITES)
    assert scorer.compute(failed, sample).status == "skipped"
    assert scorer.compute(make_traj(citations=CITES), make_sample()).reason == "no gold regions"
