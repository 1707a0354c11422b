"""A DocScope-format run imported from ``infer.jsonl`` and scored with both profiles side by
side; every expected number below was worked out by hand from the fixture (conftest) and the
released scorers' rules (see docs/docscope-scoring.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.evaluation.cli.score import score_dir
from scanrag.evaluation.docscope.importer import InferImportError, import_infer, read_infer
from scanrag.evaluation.docscope.official.parser import parse_official
from scanrag.evaluation.docscope.official.summary import official_summary
from scanrag.llm import ScriptedModel
from scanrag.schemas import Status

PAPER = ["pages", "region", "region_geometry", "fact", "answer"]
OFFICIAL = [f"{name}_official" for name in PAPER]
CELL = "docscope_infer/claude-test"


@pytest.fixture
def imported(official_files: tuple[Path, Path], tmp_path: Path) -> Path:
    benchmark, infer = official_files
    out = tmp_path / "run"
    report = import_infer(infer, benchmark, out, bbox_units="normalized")
    assert (report.records, report.ok, report.errors, report.samples) == (5, 4, 1, 5)
    assert report.bad_lines == [4] and not report.unknown_questions and not report.missing_pdfs
    return out


@pytest.fixture
def scored(imported: Path, official_judge_fn) -> tuple[Path, ScriptedModel]:
    llm = ScriptedModel(responder=official_judge_fn)
    result = score_dir(
        imported,
        scorers=[*PAPER, *OFFICIAL],
        judge_model="scripted/judge",
        llm=llm,
        n_resamples=0,
    )
    assert not result.failures
    return imported, llm


def test_the_fixture_parsed_blocks_are_the_official_parse(official_files) -> None:
    records, bad, repeated = read_infer(official_files[1])
    assert bad == [4] and repeated == []
    for record in records.values():
        if record["status"] == "ok":
            assert parse_official(record["model_raw"]).model_dump() == record["parsed"]


def test_import_writes_a_run_folder(imported: Path) -> None:
    rows = [json.loads(line) for line in (imported / "trajectories.jsonl").read_text().splitlines()]
    by_id = {r["sample_id"]: r for r in rows}
    assert by_id["urnuuidB::q5"]["status"] == Status.MODEL_ERROR
    assert by_id["urnuuidB::q5"]["errors"] == ["error: upstream 529 overloaded"]
    q1 = by_id["urnuuidA::q1"]
    assert q1["pages"] == [2, 4] and q1["answer"] == "12" and len(q1["regions"]) == 2
    assert q1["run_key"] == CELL and q1["usage"]["reader"]["prompt_tokens"] == 1000
    q2 = by_id["urnuuidA::q2"]  # no answer tag: no answer, but both citations (one in backticks)
    assert q2["answer"] is None and [c["page"] for c in q2["citations"]] == [1, 1]
    q4 = by_id["urnuuidB::q4"]  # both boxes invalid for us, the page still counts
    assert q4["pages"] == [2] and q4["regions"] == []
    assert [c["valid"] for c in q4["citations"]] == [False, False]
    assert (imported / "samples.jsonl").is_file() and (imported / "manifest.json").is_file()
    assert not (imported / "config.resolved.yaml").exists()  # nothing was run here
    infer = imported / "copy.jsonl"
    infer.write_text("")
    with pytest.raises(InferImportError, match="already holds a run"):
        import_infer(infer, imported / "y", imported)


def test_official_summary_matches_summarize_eval(scored, capsys) -> None:
    run, _ = scored
    summary = json.loads((run / "summary.json").read_text())
    from scanrag.evaluation.schemas import GroupSummary

    group = GroupSummary.model_validate(summary["scoring"]["groups"][CELL])
    expected = {
        "infer": {"n": 5},
        "pages": {
            "n": 4,
            "macro": {"precision": 0.625, "recall": 0.875, "f1": 0.625},
            "micro": {"precision": 0.6, "recall": 0.75, "f1": pytest.approx(2 / 3), "tp": 3}
            | {"fp": 2, "fn": 1},
        },
        "bbox": {"n": 3, "by_label": {"covered": 2, "imprecise": 1}},
        "facts": {"n": 4, "by_label": {"consistent": 3, "not_consistent": 1}},
        "answer": {
            "n_judged": 3,
            "n_correct": 3,
            "accuracy": 1.0,
            "n_with_answer_tag": 3,
            "n_total": 4,
        },
    }
    assert official_summary(group) == expected
    from scanrag.evaluation.docscope.official.summary import main

    assert main([str(run)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed[CELL]["answer"]["n_with_answer_tag"] == 3
    assert main([]) == 2 and main([str(run / "nowhere")]) == 2


def test_both_profiles_side_by_side(scored) -> None:
    run, llm = scored
    metrics = json.loads((run / "summary.json").read_text())["metrics"][CELL]
    # paper: answerable items only, the inference error counted as wrong
    assert metrics["pages.precision"] == 0.75 and metrics["pages.recall"] == 0.6
    assert metrics["pages.f1"] == pytest.approx(2 / 3)
    # official: unanswerable q3 in, the inference error out
    assert metrics["pages_official.precision"] == 0.6 and metrics["pages_official.recall"] == 0.75
    # region: the paper gate decides q4 (no valid box) without a call; duplicates count once
    assert metrics["region.strict_f1"] == 0.5 and metrics["region.lenient_f1"] == 0.5
    assert metrics["region_official.covered_rate"] == pytest.approx(2 / 3)
    assert metrics["region_official.lenient_rate"] == 1.0
    assert metrics["region_geometry.iou"] == 0.5
    assert metrics["region_geometry_official.iou"] == pytest.approx((2 + 2 * 0.04 / 0.27) / 4)
    assert metrics["fact.consistency"] == 0.75 and metrics["fact_official.consistency"] == 0.75
    # answer: rules decide every paper item (no call); the official judge sees them all
    assert metrics["answer.accuracy"] == pytest.approx(3 / 5)
    assert metrics["answer.accuracy_answerable"] == 0.5
    assert metrics["answer_official.accuracy"] == 1.0
    assert metrics["answer_official.accuracy_unanswerable"] == 1.0
    # completeness: q1 missed a gold page but grounded what it found: P✗B✓F✓
    assert metrics["completeness.complete_rate"] == 0.0
    assert metrics["completeness_official.complete_rate"] == 0.5
    tables = json.loads((run / "summary.json").read_text())["scoring"]["groups"][CELL]["tables"]
    assert tables["completeness_official.judge"]["combinations"] == {"P✓B✓F✓": 1, "P✗B✓F✓": 1}
    assert tables["completeness.judge"]["combinations"] == {"P✓B✗F✗": 1, "P✗B✓F✓": 1}
    assert metrics["region_official.strict_f1"] == pytest.approx(4 / 9)  # not a headline
    assert metrics["region_official.lenient_f1"] == pytest.approx(2 / 3)
    assert {tables[f"{n}.profile"] for n in PAPER} == {"paper"}
    assert {tables[f"{n}.profile"] for n in OFFICIAL} == {"official"}
    stages = [r.stage for r in llm.requests]
    # paper: region q1, q2 (q4 gated); fact q1, q2, q4 (q4's units exist); answer: none
    # official: region q1, q2, q4; fact q1, q2, q4; answer q1..q4; no second try anywhere
    assert stages.count("judge.region") == 2 + 3
    assert stages.count("judge.fact") == 3 + 3
    assert stages.count("judge.answer") == 4
    official = [r for r in llm.requests if r.max_tokens == 2048]
    assert len(official) == 3 + 3 + 4


def test_official_rows_carry_per_box_and_per_fact_statuses(scored) -> None:
    run, _ = scored
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    key = {(r["sample_id"], r["scorer"]): r for r in rows}
    q4 = key[("urnuuidB::q4", "region_official")]
    assert q4["status"] == "partial"
    assert [(u["gold_id"], u["status"], u["label"]) for u in q4["details"]["units"]] == [
        ("GOLD[1]", "ok", "imprecise"),
        ("GOLD[2]", "judge_parse_error", None),
    ]
    assert q4["details"]["units"][0]["n_pred_drawn"] == 1
    assert q4["details"]["units"][0]["skipped_pred_bboxes"] == [[120.0, 300.0, 400.0, 500.0]]
    q1 = key[("urnuuidA::q1", "region_official")]
    assert q1["details"]["units"][0]["n_pred_drawn"] == 2  # the duplicate box counts twice
    assert key[("urnuuidB::q5", "pages_official")]["status"] == "skipped"
    assert key[("urnuuidB::q5", "pages")]["status"] == "ok"  # paper: scored as wrong
    assert key[("urnuuidB::q3", "pages")]["status"] == "skipped"
    answer = key[("urnuuidB::q4", "answer_official")]
    assert answer["status"] == "judge_parse_error" and answer["details"]["has_answer_tag"]
    assert key[("urnuuidA::q2", "answer_official")]["details"]["predicted"].startswith("The cover")
    facts = key[("urnuuidB::q4", "fact_official")]["details"]["units"]
    assert [(u["fact_id"], u["label"]) for u in facts] == [
        ("f1", "consistent"),
        ("f2", "not_consistent"),
    ]


def test_the_report_labels_each_headline_with_its_profile(scored, tmp_path: Path) -> None:
    from scanrag.evaluation.report.data import all_groups, load_runs
    from scanrag.evaluation.report.table import build_table, to_markdown

    run, _ = scored
    groups = all_groups(load_runs([run]))
    table = build_table(groups, None, n_resamples=0)
    text = to_markdown(table)
    for name in ("pages.f1 [paper]", "pages_official.f1 [official]", "fact.consistency [paper]"):
        assert name in text
    assert "answer_official.accuracy [official]" in text
    assert "region_official.covered_rate [official]" in text


def test_import_command_and_odd_records(official_files, tmp_path: Path, capsys) -> None:
    from scanrag.cli import main

    benchmark, infer = official_files
    lines = infer.read_text().splitlines()
    q1 = json.loads(lines[0])
    del q1["parsed"]  # a record without its parsed block is parsed again
    extra = [
        json.dumps(q1),
        json.dumps({"question_id": "nowhere::q1", "model": "m", "status": "error: x"}),
        "",
    ]
    infer.write_text("\n".join([*lines, *extra]) + "\n")
    out = tmp_path / "imported"
    argv = ["import", "docscope-infer", str(infer), "--benchmark", str(benchmark)]
    assert main([*argv, "--out", str(out), "--bbox-units", "normalized", "--run-key", "x"]) == 0
    captured = capsys.readouterr()
    assert "6 records (4 ok, 2 inference errors), 5 samples" in captured.out
    assert "question ids seen twice (last record kept): urnuuidA::q1" in captured.err
    assert "not in the benchmark (scored as skipped): nowhere::q1" in captured.err
    rows = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    q1_row = next(r for r in rows if r["sample_id"] == "urnuuidA::q1")
    assert q1_row["run_key"] == "x" and q1_row["pages"] == [2, 4]
    assert "parsed_by" in q1_row["metadata"]["docscope_infer"]
    assert main([*argv, "--out", str(out)]) == 2  # never over an existing run
    assert "already holds a run" in capsys.readouterr().err
