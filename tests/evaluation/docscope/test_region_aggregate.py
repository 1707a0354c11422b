"""Region judge scorer: label and id reading, per-page counts, the item row's bookkeeping and
the aggregate's report tables (label totals, page counts, partial items, headline flags),
all worked out by hand."""

from __future__ import annotations

import json

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.region import RegionScorer
from scanrag.evaluation.docscope.region_labels import (
    RegionJudgment,
    gold_index,
    labels_from,
    normalize_label,
    region_counts,
    region_prf,
)
from scanrag.evaluation.schemas import ScoreRow
from scanrag.llm import ModelError
from scanrag.schemas import BBox, Citation, Region

NO_CI = StatsOptions(n_resamples=0)


def reg(page: int, *v: float) -> Region:
    return Region(page=page, bbox=BBox.from_list(v))


def reply(*labels: str) -> str:
    items = [{"id": f"GOLD[{i + 1}]", "label": lab} for i, lab in enumerate(labels)]
    return json.dumps({"items": items})


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("Covered", "covered"),
        (" IMPRECISE ", "imprecise"),
        ("not covered", "not_covered"),
        ("Not-Covered", "not_covered"),
        ("notcovered", "not_covered"),
        ("uncovered", "not_covered"),
        ("partial", "partial"),  # unknown labels pass through (and fail validation)
    ],
)
def test_normalize_label(written: str, label: str) -> None:
    assert normalize_label(written) == label


def test_gold_index_forms() -> None:
    assert gold_index(1) == 0 and gold_index(3) == 2
    assert gold_index("GOLD[12]") == 11
    assert gold_index("box") is None


def judgment(*items: tuple[object, str]) -> RegionJudgment:
    return RegionJudgment.model_validate({"items": [{"id": i, "label": lab} for i, lab in items]})


def test_labels_from_ids_without_numbers_are_taken_in_order() -> None:
    assert labels_from(judgment(("a", "imprecise"), ("b", "covered")), 2) == [
        "imprecise",
        "covered",
    ]
    # Unusable ids but the wrong number of them: refused.
    with pytest.raises(ValueError, match="unknown gold id 'a'"):
        labels_from(judgment(("a", "covered")), 2)


def test_labels_from_repeats_and_range() -> None:
    # The same label twice for one box is accepted; two different labels are not.
    assert labels_from(judgment((1, "covered"), (1, "covered")), 1) == ["covered"]
    with pytest.raises(ValueError, match="labelled twice"):
        labels_from(judgment((1, "covered"), (1, "imprecise")), 1)
    # GOLD[0] is below the range, GOLD[3] of 2 above it; GOLD[2] of 2 is the last one.
    with pytest.raises(ValueError, match=r"expected GOLD\[1\]..GOLD\[2\]"):
        labels_from(judgment(("GOLD[0]", "covered"), ("GOLD[1]", "covered")), 2)
    with pytest.raises(ValueError, match="unknown gold id"):
        labels_from(judgment(("GOLD[3]", "covered"), ("GOLD[1]", "covered")), 2)
    assert labels_from(judgment(("GOLD[2]", "covered"), ("GOLD[1]", "imprecise")), 2) == [
        "imprecise",
        "covered",
    ]
    with pytest.raises(ValueError, match=r"no label for GOLD\[1\], GOLD\[3\]"):
        labels_from(judgment(("GOLD[2]", "covered")), 3)


def test_region_counts_of_one_page() -> None:
    labels = ["covered", "imprecise", "not_covered", "covered", "imprecise"]
    assert region_counts(labels, 3) == {
        "gold": 5,
        "n_pred": 3,
        "covered": 2,
        "imprecise": 2,
        "not_covered": 1,
        "hit_strict_capped": 2,
        "hit_lenient_capped": 3,  # min(4, 3)
    }
    assert region_counts(labels, 1)["hit_strict_capped"] == 1
    assert set(region_counts([], 0)) == {
        "gold",
        "n_pred",
        "covered",
        "imprecise",
        "not_covered",
        "hit_strict_capped",
        "hit_lenient_capped",
    }


def test_region_prf_modes() -> None:
    counts = region_counts(["covered", "imprecise", "not_covered", "not_covered"], 4)
    assert region_prf(counts, "strict") == (0.25, 0.25)
    assert region_prf(counts, "lenient") == (0.5, 0.5)
    empty = region_counts([], 0)
    assert region_prf(empty, "strict") == (None, None)


# --------------------------------------------------------------------------- the item row


async def test_row_bookkeeping_of_judged_gated_and_no_gold_pages(
    make_sample, make_traj, make_ctx
) -> None:
    # Page 1: two gold boxes, one predicted box -> judged (covered, not_covered).
    # Page 2: one gold box, no predicted box -> gated.
    # Page 3: no gold box, two predicted boxes -> no_gold.
    ctx = make_ctx([reply("covered", "not_covered")])
    sample = make_sample(
        gold_pages=[1, 2, 3],
        gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(1, 0.5, 0.5, 0.7, 0.7), reg(2, 0, 0, 1, 1)],
    )
    traj = make_traj(
        pages=[1, 2, 3],
        regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(3, 0, 0, 0.5, 0.5), reg(3, 0.5, 0.5, 1, 1)],
    )
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "ok" and row.reason is None
    assert row.details["profile"] == "paper"
    assert row.details["pages"] == {
        "1": {"status": "ok", "n_pred": 1, "gated": False, "no_gold": False},
        "2": {"status": "ok", "n_pred": 0, "gated": True, "no_gold": False},
        "3": {"status": "ok", "n_pred": 2, "gated": False, "no_gold": True},
    }
    assert row.counts == {
        "gold": 3,
        "n_pred": 3,
        "covered": 1,
        "imprecise": 0,
        "not_covered": 2,
        "hit_strict_capped": 1,
        "hit_lenient_capped": 1,
        "gold_all": 3,
        "pages_judged": 1,
        "pages_gated": 1,
        "pages_no_gold": 1,
        "pages_failed": 0,
        "boxes": 3,  # every gold box of a page of P̂, labelled or not
        "boxes_ok": 3,
        "boxes_failed": 0,
        "n_pred_drawn": 3,  # all valid: every box counted is drawn
    }
    # strict = lenient: P = 1/3, R = 1/3
    assert row.metrics["strict_precision"] == pytest.approx(1 / 3)
    assert row.metrics["lenient_recall"] == pytest.approx(1 / 3)
    assert row.metrics["strict_f1"] == pytest.approx(1 / 3)
    units = row.details["units"]
    assert [u["unit"] for u in units] == ["page1/gold0", "page1/gold1", "page2/gold0"]
    first, second, gated = units
    assert (first["page"], first["index"], first["label"], first["gated"]) == (
        1,
        0,
        "covered",
        False,
    )
    assert first["iou"] == pytest.approx(1.0) and first["iom"] == pytest.approx(1.0)
    assert second["index"] == 1 and second["label"] == "not_covered"
    assert second["gt_recall"] == 0.0
    assert gated["gated"] is True and gated["label"] == "not_covered" and gated["page"] == 2
    assert gated["iou"] == 0.0 and gated["gt_recall"] == 0.0


async def test_failed_page_of_a_partial_item(make_sample, make_traj, make_ctx) -> None:
    # Pages 1 and 2 judged, page 2's call fails; page 3 is a no-gold page (not in the count
    # of judged pages behind "1 of 2").
    def by_page(request) -> str:  # pages are judged concurrently: answer by page, not order
        if "Page: 2" in request.messages[-1].text:
            raise ModelError("scripted/judge", "down")
        return reply("imprecise")

    ctx = make_ctx([], responder=by_page)
    sample = make_sample(
        gold_pages=[1, 2, 3], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(2, 0.1, 0.1, 0.3, 0.3)]
    )
    traj = make_traj(
        pages=[1, 2, 3],
        regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(2, 0.1, 0.1, 0.3, 0.3), reg(3, 0, 0, 1, 1)],
    )
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "partial"
    assert row.reason == "1 of 2 gold boxes failed"
    assert row.details["pages"]["2"]["status"] == "judge_error"
    assert "down" in row.details["pages"]["2"]["error"]
    assert "error" not in row.details["pages"]["1"]
    # The failed page adds nothing: gold 1, n_pred 1 + 1 (page 3).
    assert (row.counts["gold"], row.counts["n_pred"], row.counts["imprecise"]) == (1, 2, 1)
    assert row.counts["pages_failed"] == 1 and row.counts["pages_judged"] == 1
    assert row.metrics["lenient_precision"] == 0.5 and row.metrics["lenient_recall"] == 1.0
    assert row.metrics["strict_f1"] == 0.0


async def test_every_judged_page_failed(make_sample, make_traj, make_ctx) -> None:
    ctx = make_ctx([ModelError("scripted/judge", "down")])
    sample = make_sample(gold_pages=[1, 2], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    traj = make_traj(pages=[1, 2], regions=[reg(1, 0.1, 0.1, 0.3, 0.3), reg(2, 0, 0, 1, 1)])
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.status == "judge_error"
    assert row.reason == "1 of 1 gold boxes failed"
    assert row.metrics == dict.fromkeys(
        [
            "strict_precision",
            "strict_recall",
            "strict_f1",
            "lenient_precision",
            "lenient_recall",
            "lenient_f1",
            "covered_rate",
            "lenient_rate",
        ]
    )


async def test_no_judge_context_skips(make_sample, make_traj) -> None:
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    row = await RegionScorer().score(make_traj(pages=[1]), sample, judge=None)
    assert row.status == "skipped" and row.reason == "no judge context"


async def test_invalid_and_valid_boxes_on_one_page(make_sample, make_traj, make_ctx) -> None:
    # One valid and one invalid box: the page is judged (not gated), n_pred counts both.
    ctx = make_ctx([reply("covered")])
    sample = make_sample(gold_pages=[1], gold_regions=[reg(1, 0.1, 0.1, 0.3, 0.3)])
    traj = make_traj(
        pages=[1],
        citations=[
            Citation(sentence="a", page=1, bbox=[0.1, 0.1, 0.3, 0.3]),
            Citation(sentence="b", page=1, bbox=[1.2, 0, 1.5, 0.3], valid=False),
        ],
    )
    row = await RegionScorer().score(traj, sample, judge=ctx)
    assert row.counts["n_pred"] == 2 and row.counts["pages_judged"] == 1
    assert row.metrics["strict_precision"] == 0.5 and row.metrics["strict_recall"] == 1.0


# --------------------------------------------------------------------------- the aggregate


def row(status: str = "ok", **counts: float) -> ScoreRow:
    return ScoreRow(
        sample_id=f"s{len(counts)}{status}",
        strategy="s",
        scorer="region",
        status=status,  # type: ignore[arg-type]
        counts=counts,
        details={"profile": "paper"},
    )


def test_aggregate_tables_and_flags() -> None:
    rows = [
        row(
            gold=3,
            n_pred=2,
            covered=1,
            imprecise=1,
            not_covered=1,
            hit_strict_capped=1,
            hit_lenient_capped=2,
            pages_judged=2,
            pages_gated=0,
            pages_failed=0,
        ),
        row(
            "partial",
            gold=2,
            n_pred=4,
            covered=2,
            imprecise=0,
            not_covered=0,
            hit_strict_capped=2,
            hit_lenient_capped=2,
            pages_judged=1,
            pages_gated=1,
            pages_failed=1,
        ),
        row("judge_error", gold=0, pages_failed=1),
        row("skipped"),
        row("skipped", gold=9),
    ]
    result = RegionScorer().aggregate(rows, RowGroup("c", "s"), NO_CI)
    assert result.tables["labels"] == {"covered": 3, "imprecise": 1, "not_covered": 1}
    assert result.tables["pages"] == {"pages_judged": 3, "pages_gated": 1, "pages_failed": 1}
    assert result.tables["partial_items"] == 1
    assert result.tables["profile"] == "paper"
    m = result.metrics
    # strict: P = 3 / 6, R = 3 / 5; lenient: P = 4 / 6, R = 4 / 5
    assert m["strict_precision"].value == pytest.approx(0.5)
    assert m["strict_recall"].value == pytest.approx(0.6)
    assert m["strict_f1"].value == pytest.approx(2 * 0.5 * 0.6 / 1.1)
    assert m["lenient_precision"].value == pytest.approx(4 / 6)
    assert m["lenient_recall"].value == pytest.approx(0.8)
    assert m["lenient_f1"].value == pytest.approx(2 * (4 / 6) * 0.8 / (4 / 6 + 0.8))
    assert {k for k, v in m.items() if v.headline} == {"strict_f1", "lenient_f1"}
    assert all(v.n == 2 and v.excluded == 1 and v.skipped == 2 for v in m.values())


def test_aggregate_f1_undefined_without_gold() -> None:
    # Only no-gold pages: n_pred counts, no gold -> precision 0, recall and F1 undefined.
    rows = [row(gold=0, n_pred=2, covered=0, imprecise=0, hit_strict_capped=0)]
    m = RegionScorer().aggregate(rows, RowGroup("c", "s"), NO_CI).metrics
    assert m["strict_precision"].value == 0.0
    assert m["strict_recall"].value is None and m["strict_f1"].value is None
    assert m["lenient_f1"].value is None


def test_names_and_labels() -> None:
    from scanrag.evaluation.docscope.region import region_official
    from scanrag.evaluation.docscope.region_labels import LABELS
    from scanrag.registry import SCORERS

    assert LABELS == ("covered", "imprecise", "not_covered")
    assert RegionScorer.name == "region" and region_official.name == "region_official"
    assert SCORERS.get("region") is RegionScorer
    assert SCORERS.get("region_official") is region_official


async def test_skip_reasons(make_sample, make_traj, make_ctx) -> None:
    scorer = RegionScorer()
    unanswerable = await scorer.score(
        make_traj(), make_sample(answerable=False, answer=None), judge=make_ctx([])
    )
    assert unanswerable.reason == "unanswerable question: no region metric"


def test_partial_items_counts_only_partial_rows() -> None:
    rows = [
        row("ok", gold=1),
        row("ok", gold=1, n_pred=1),
        row("partial", gold=2, n_pred=1, covered=1),
    ]
    rows[1].sample_id = "other"
    tables = RegionScorer().aggregate(rows, RowGroup("c", "s"), NO_CI).tables
    assert tables["partial_items"] == 1
