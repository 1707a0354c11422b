"""The agreement command on small CSV files written in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.evaluation.cli.agreement import (
    AgreementInputError,
    agreement_report,
    normalize_label,
    ordinal,
    read_label_csv,
    read_score_units,
)
from scanrag.evaluation.schemas import ScoreRow

HUMAN = """item_id,label,note
q1/p1/g0,covered,
q1/p1/g1,Not covered,hard one
q2/p4/g0,imprecise,
q3/p2/g0,covered,
q4/p1/g0,,unlabelled
"""
JUDGE = """item_id,label,iou,iom,gt_recall
q1/p1/g0,covered,0.9,0.95,1.0
q1/p1/g1,not_covered,0.0,0.0,0.0
q2/p4/g0,covered,0.4,0.8,0.5
q3/p2/g0,covered,0.7,,0.9
q9/p1/g0,covered,0.1,0.1,0.1
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_label_csv(tmp_path: Path) -> None:
    rows = read_label_csv(write(tmp_path, "h.csv", HUMAN))
    assert set(rows) == {"q1/p1/g0", "q1/p1/g1", "q2/p4/g0", "q3/p2/g0"}
    assert rows["q1/p1/g1"]["label"] == "not_covered"
    judge = read_label_csv(write(tmp_path, "j.csv", JUDGE))
    assert judge["q3/p2/g0"] == {"label": "covered", "iou": 0.7, "gt_recall": 0.9}


def test_read_label_csv_errors(tmp_path: Path) -> None:
    with pytest.raises(AgreementInputError, match="missing column"):
        read_label_csv(write(tmp_path, "a.csv", "id,label\nx,covered\n"))
    with pytest.raises(AgreementInputError, match="duplicate"):
        read_label_csv(write(tmp_path, "b.csv", "item_id,label\nx,a\nx,b\n"))
    with pytest.raises(AgreementInputError, match="not a number"):
        read_label_csv(write(tmp_path, "c.csv", "item_id,label,iou\nx,a,high\n"))
    with pytest.raises(AgreementInputError, match="cannot read"):
        read_label_csv(tmp_path / "absent.csv")


def test_ordinal_scales() -> None:
    assert normalize_label(" Not-Covered ") == "not_covered"
    assert ordinal(["covered", "not_covered"]) == {"covered": 2.0, "not_covered": 0.0}
    assert ordinal(["1", "0.5"]) == {"0.5": 0.5, "1": 1.0}
    assert ordinal(["b", "a"], order=["b", "a"]) == {"a": 1.0, "b": 0.0}
    with pytest.raises(ValueError, match="--order"):
        ordinal(["red", "blue"])


def test_agreement_report_by_hand(tmp_path: Path) -> None:
    human = read_label_csv(write(tmp_path, "h.csv", HUMAN))
    judge = read_label_csv(write(tmp_path, "j.csv", JUDGE))
    report = agreement_report(human, judge)
    # 4 shared items; the judge says covered where the human says imprecise.
    assert report["n"] == 4 and report["human_only"] == 0 and report["judge_only"] == 1
    assert report["accuracy"] == pytest.approx(0.75)
    # classes covered/imprecise/not_covered: F1 = 0.8, 0, 1 -> mean 0.6
    assert report["macro_f1"] == pytest.approx(0.6)
    # p_o = 3/4; gold marginals (2,1,1)/4, judge (3,0,1)/4 -> p_e = (6+0+1)/16
    assert report["cohen_kappa"] == pytest.approx((0.75 - 7 / 16) / (1 - 7 / 16))
    # judge ranks [2,0,2,2] vs iou [0.9,0,0.4,0.7]: nc=3, nd=0, ties_x=3 -> 3/sqrt(3*6)
    tau = report["kendall_tau_b"]["iou"]
    assert tau["n"] == 4
    assert tau["judge"] == pytest.approx(3 / (3 * 6) ** 0.5)
    assert report["kendall_tau_b"]["iom"]["n"] == 3  # one item has no IoM


def test_agreement_without_overlap(tmp_path: Path) -> None:
    with pytest.raises(AgreementInputError, match="no item_id in common"):
        agreement_report({"a": {"label": "x"}}, {"b": {"label": "x"}})


def test_agreement_command_with_two_csvs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human = write(tmp_path, "h.csv", HUMAN)
    judge = write(tmp_path, "j.csv", JUDGE)
    out = tmp_path / "report.json"
    code = main(["agreement", "--labels", str(human), "--judge", str(judge), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Cohen's kappa" in printed and "Kendall tau_b vs iou" in printed
    assert json.loads(out.read_text())["accuracy"] == pytest.approx(0.75)


def test_agreement_command_reports_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human = write(tmp_path, "h.csv", "item_id,label\na,covered\n")
    judge = write(tmp_path, "j.csv", "item_id,label\nb,covered\n")
    assert main(["agreement", "--labels", str(human), "--judge", str(judge)]) == 2
    assert "no item_id in common" in capsys.readouterr().err


def _row(sample_id: str, scorer: str, units: list[dict], **fields: object) -> str:
    row = ScoreRow(
        sample_id=sample_id,
        strategy=str(fields.pop("strategy", "topk_rag")),
        scorer=scorer,
        details={"units": units},
        **fields,
    )
    return row.model_dump_json()


def test_agreement_from_scores_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    unit = {"unit": "page1/gold0", "label": "covered", "iou": 0.9, "iom": 1.0, "gt_recall": 1.0}
    lines = [
        _row(
            "q1",
            "region",
            [
                unit,
                {
                    **unit,
                    "unit": "page1/gold1",
                    "label": "not_covered",
                    "iou": 0.0,
                    "iom": 0.0,
                    "gt_recall": 0.0,
                },
            ],
        ),
        _row("q2", "region", [{**unit, "label": "imprecise", "iou": 0.3}]),
        _row("q3", "region", [unit], status="judge_error"),  # failed rows give no units
        _row("q1", "faithfulness", [{"unit": "sentence0", "label": "Attributable"}]),
    ]
    (run_dir / "scores.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    units = read_score_units(run_dir, scorer="region")
    assert set(units) == {"q1/page1/gold0", "q1/page1/gold1", "q2/page1/gold0"}
    assert units["q2/page1/gold0"] == {
        "label": "imprecise",
        "iou": 0.3,
        "iom": 1.0,
        "gt_recall": 1.0,
    }
    with pytest.raises(AgreementInputError, match="--scorer"):
        read_score_units(run_dir)
    human = write(
        tmp_path,
        "h.csv",
        "item_id,label\nq1/page1/gold0,covered\n"
        "q1/page1/gold1,not covered\nq2/page1/gold0,covered\n",
    )
    code = main(
        ["agreement", "--labels", str(human), "--scores", str(run_dir), "--scorer", "region"]
    )
    assert code == 0
    assert "accuracy         0.667" in capsys.readouterr().out


def test_scores_jsonl_with_several_groups_needs_group(tmp_path: Path) -> None:
    unit = {"unit": "sentence0", "label": "Attributable"}
    path = write(
        tmp_path,
        "scores.jsonl",
        _row("q1", "faithfulness", [unit])
        + "\n"
        + _row("q1", "faithfulness", [unit], strategy="scan"),
    )
    with pytest.raises(AgreementInputError, match="--group"):
        read_score_units(path)
    assert set(read_score_units(path, group="scan")) == {"q1/sentence0"}
    bad = write(tmp_path, "bad.jsonl", "{not json}\n")
    with pytest.raises(AgreementInputError, match="not a score row"):
        read_score_units(bad)


FAITH_HUMAN = """item_id,label,rewrite_of
a/s1,Attributable,
a/s2,Attributable,
a/s3,Not Attributable,
b/s1,Contradicted,
b/s2,Attributable,
b/s3,Not Attributable,
a/s1r,Attributable,a/s1
"""
FAITH_JUDGE = """item_id,label
a/s1,attributable
a/s2,not attributable
a/s3,not_attributable
b/s1,Attributable
b/s2,Attributable
b/s3,contradicted
a/s1r,Not Attributable
"""


def test_faithfulness_labels_get_contextcheck_meta_evaluation(tmp_path: Path) -> None:
    human = read_label_csv(write(tmp_path, "h.csv", FAITH_HUMAN))
    judge = read_label_csv(write(tmp_path, "j.csv", FAITH_JUDGE))
    meta = agreement_report(human, judge)["faithfulness"]
    # base sentences: gold 1,1,0,0,1,0 vs judge 1,0,0,1,1,0 (binary, Attributable = 1)
    assert meta["n"] == 6
    assert meta["plain"]["macro_f1"]["estimate"] == pytest.approx(2 / 3)
    assert meta["plain"]["balanced_accuracy"]["estimate"] == pytest.approx(2 / 3)
    plain = meta["plain"]["macro_f1"]
    assert plain["low"] <= plain["midpoint"] <= plain["high"] and plain["n_resamples"] == 1000
    assert plain["midpoint"] == pytest.approx((plain["low"] + plain["high"]) / 2)
    # a/s1 is right, but its rewrite is judged wrong: the debiased rule counts a/s1 as wrong
    debiased = meta["debiased"]
    assert debiased["flipped"] == 1 and debiased["debiased"] is True
    assert debiased["macro_f1"]["estimate"] == pytest.approx((0.4 + 4 / 7) / 2)
    assert debiased["balanced_accuracy"]["estimate"] == pytest.approx(0.5)


def test_region_labels_get_no_faithfulness_section(tmp_path: Path) -> None:
    human = read_label_csv(write(tmp_path, "h.csv", HUMAN))
    judge = read_label_csv(write(tmp_path, "j.csv", JUDGE))
    assert "faithfulness" not in agreement_report(human, judge)
