"""The ``infer.jsonl`` importer piece by piece: the report lines, reading records, answers,
usage, citation spans and validity, and the trajectory of each kind of record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanrag.evaluation.docscope.importer import ImportReport, read_infer
from scanrag.evaluation.docscope.infer_record import (
    STRATEGY,
    _answer,
    _span,
    _usage,
    trajectory_from_record,
)
from scanrag.evaluation.docscope.official.view import INFER_KEY
from scanrag.hashing import file_sha256
from scanrag.schemas import UNANSWERABLE, BBox, Region, Status, Usage


def test_report_defaults_and_lines(tmp_path: Path) -> None:
    report = ImportReport(out_dir=tmp_path)
    assert (report.records, report.ok, report.errors, report.samples) == (0, 0, 0, 0)
    assert report.lines() == [f"0 records (0 ok, 0 inference errors), 0 samples → {tmp_path}"]
    report = ImportReport(
        out_dir=tmp_path,
        records=7,
        ok=5,
        errors=2,
        samples=6,
        bad_lines=[3, 9],
        duplicates=["a"],
        unknown_questions=[f"q{i}" for i in range(6)],
        dropped_benchmark_rows=["r1: bad"],
        missing_pdfs=["x.pdf", "y.pdf", "z.pdf", "w.pdf", "v.pdf"],
    )
    assert report.lines() == [
        f"7 records (5 ok, 2 inference errors), 6 samples → {tmp_path}",
        "warning: 2 lines that are not JSON (skipped): 3, 9",
        "warning: 1 question ids seen twice (last record kept): a",
        "warning: 6 question ids not in the benchmark (scored as skipped): q0, q1, q2, q3, q4, ...",
        "warning: 1 benchmark rows the loader dropped: r1: bad",
        "warning: 5 PDFs not found (region judging will fail for them): "
        "x.pdf, y.pdf, z.pdf, w.pdf, v.pdf",
    ]


def test_read_infer_skips_blank_and_bad_lines_and_keeps_the_last(tmp_path: Path) -> None:
    path = tmp_path / "infer.jsonl"
    lines = [
        json.dumps({"question_id": "a", "status": "ok", "n": 1}),
        "",
        "{torn",
        json.dumps(["a list"]),
        json.dumps({"question_id": "", "status": "ok"}),
        json.dumps({"question_id": 7, "status": "ok"}),
        json.dumps({"question_id": "a", "status": "ok", "n": 2}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records, bad, repeated = read_infer(path)
    assert list(records) == ["a", "7"] and records["a"]["n"] == 2
    assert bad == [3, 4, 5] and repeated == ["a"]


def test_answers_usage_and_spans() -> None:
    assert _answer(None) is None and _answer(12) is None and _answer(" \n ") is None
    assert _answer("  twelve\n million ") == "twelve million"
    assert _answer("Unanswerable.") == UNANSWERABLE
    assert _answer("(not answerable)") == UNANSWERABLE
    assert _answer("it is unanswerable here") == "it is unanswerable here"
    assert _usage(None) is None and _usage([1]) is None
    assert _usage({"prompt_tokens": 10, "completion_tokens": 4}) == Usage(
        calls=1, prompt_tokens=10, completion_tokens=4
    )
    assert _usage({"prompt_tokens": "10"}) == Usage(calls=1, prompt_tokens=0, completion_tokens=0)
    raw = "0123456789"
    assert _span(raw, 2, 5) == "234"
    assert _span(raw, 0, 10) == raw
    assert _span(raw, 0, 11) == "" and _span(raw, -1, 3) == ""
    assert _span(raw, 5, 5) == "" and _span(raw, "2", 5) == "" and _span(raw, 2, None) == ""


RAW = "Revenue was 12 [page=2, bbox=[0.1, 0.1, 0.5, 0.5]]. <answer>12</answer>"


def _record(**parsed_fields: object) -> dict[str, object]:
    parsed: dict[str, object] = {"answer": "12", "citations": []}
    parsed.update(parsed_fields)
    return {
        "question_id": "d::q1",
        "model": "m1",
        "model_raw": RAW,
        "thinking": "hmm",
        "parsed": parsed,
        "infer_usage": {"prompt_tokens": 3, "completion_tokens": 2},
        "status": "ok",
    }


def test_an_ok_record_fills_pages_regions_facts_and_answer() -> None:
    cite = {"page": 2, "sentence": " Revenue was 12 ", "bbox": [0.1, 0.1, 0.5, 0.5]}
    cite |= {"doc_page": 1, "span_start": 15, "span_end": 51}
    citations = [
        cite,
        dict(cite),  # the same box again: one region, one fact
        {"page": 3, "sentence": "", "bbox": [0.2, 0.2, 0.4, 0.4]},  # a box, no fact text
        {"page": 3, "sentence": "No box.", "bbox": "x"},
        {"page": 9, "sentence": "Too far.", "bbox": [0.1, 0.1, 0.2, 0.2]},
        {"page": 0, "sentence": "Page zero."},
        {"page": 2, "sentence": "Bad box.", "bbox": [0.5, 0.5, 0.1, 0.1]},
        {"page": "2", "sentence": "page as text"},
        "not a mapping",
    ]
    traj = trajectory_from_record(_record(citations=citations), None, num_pages=4)
    assert traj.status == Status.OK and traj.strategy == STRATEGY == "docscope_infer"
    assert traj.run_key == "docscope_infer/m1" and traj.models == {"reader": "m1"}
    assert traj.usage["reader"] == Usage(calls=1, prompt_tokens=3, completion_tokens=2)
    assert traj.metadata["parser"] == "docscope_infer"
    assert traj.metadata[INFER_KEY]["thinking_chars"] == 3
    assert traj.metadata[INFER_KEY]["status"] == "ok" and traj.metadata[INFER_KEY]["model"] == "m1"
    assert traj.answer == "12" and traj.pages == [2, 3]
    assert traj.regions == [
        Region(page=2, bbox=BBox(x1=0.1, y1=0.1, x2=0.5, y2=0.5)),
        Region(page=3, bbox=BBox(x1=0.2, y1=0.2, x2=0.4, y2=0.4)),
    ]
    assert [(f.page, f.text, f.region_index) for f in traj.facts] == [
        (2, "Revenue was 12", 0),
        (3, "No box.", None),
        (2, "Bad box.", None),
    ]
    first = traj.citations[0]
    assert first.raw == RAW[15:51] and first.doc_page == "1" and first.valid
    assert [c.page for c in traj.citations] == [2, 2, 3, 3, 9, 0, 2]
    assert traj.citations[3].bbox is None and traj.citations[2].doc_page is None
    far, zero, bad = traj.citations[4:7]
    assert (far.valid, far.reason) == (False, "page 9 out of range 1..4")
    assert (zero.valid, zero.reason) == (False, "page 0 out of range 1..4")
    with pytest.raises(ValueError) as exc:
        BBox.from_list([0.5, 0.5, 0.1, 0.1])
    assert len(str(exc.value).splitlines()) > 1
    assert not bad.valid and bad.reason == str(exc.value).splitlines()[0]  # the first line


def test_unknown_page_count_and_run_key(make_sample) -> None:
    citations = [{"page": 0, "sentence": "x"}, {"page": 40, "sentence": "y"}]
    sample = make_sample(id="d::q1", doc_ids=["a.pdf", "b.pdf"])
    traj = trajectory_from_record(_record(citations=citations), sample, run_key="mine")
    assert traj.run_key == "mine" and traj.doc_ids == ["a.pdf"]
    assert traj.citations[0].reason == "page 0 out of range 1..?"
    assert traj.pages == [40]  # no page count: only page < 1 is out


def test_error_records_and_records_without_a_parsed_block() -> None:
    error = trajectory_from_record({"question_id": "q", "status": "error: timeout"}, None)
    assert error.status == Status.MODEL_ERROR and error.errors == ["error: timeout"]
    assert error.metadata[INFER_KEY] == {"status": "error: timeout", "model": "unknown"}
    assert error.run_key == "docscope_infer/unknown" and error.raw_output is None
    assert "reader" not in error.usage
    record = _record()
    del record["parsed"]
    record["thinking"] = ""
    traj = trajectory_from_record(record, None)
    kept = traj.metadata[INFER_KEY]
    assert kept["parsed_by"].startswith("scanrag official parser")
    assert "thinking_chars" not in kept
    # our fields come from a parse; the official profile, like the released scorers, sees none
    assert traj.answer == "12" and traj.pages == [2] and kept["parsed"] == {}
    nothing = trajectory_from_record(_record(answer="", citations=[]), None)
    assert nothing.status == Status.UNPARSED
    assert nothing.errors == ["no answer tag and no usable citation in the reply"]
    only_pages = trajectory_from_record(_record(answer=None, citations=[{"page": 1}]), None)
    assert only_pages.status == Status.OK and only_pages.answer is None


def test_import_into_a_new_nested_or_empty_folder_with_a_missing_pdf_and_a_bad_row(
    official_files: tuple[Path, Path], tmp_path: Path
) -> None:
    from scanrag.evaluation.docscope.importer import import_infer

    benchmark, infer = official_files
    items = json.loads(benchmark.read_text(encoding="utf-8"))
    items.append({"id": "urnuuidA::q9", "split": "test"})  # no question: dropped
    benchmark.write_text(json.dumps(items), encoding="utf-8")
    (benchmark.parent / "pdfs" / "urnuuidB.pdf").unlink()
    nested = tmp_path / "a" / "b" / "run"
    report = import_infer(infer, benchmark, nested, bbox_units="normalized")
    assert (nested / "trajectories.jsonl").is_file()
    # the PDF is not checked at load time: its items stay, reported as missing
    assert report.samples == 5 and report.missing_pdfs == ["urnuuidB.pdf"]
    assert not report.unknown_questions
    assert len(report.dropped_benchmark_rows) == 1
    assert report.dropped_benchmark_rows[0].startswith("urnuuidA::q9: ")
    empty = tmp_path / "empty"
    empty.mkdir()
    again = import_infer(infer, benchmark, empty, bbox_units="normalized")
    assert again.samples == 5 and (empty / "trajectories.jsonl").is_file()
    (entry,) = json.loads((nested / "datasets.json").read_text(encoding="utf-8"))
    assert entry["loader"] == "docscope" and entry["input_errors"] == {}
    assert entry["source"] == str(benchmark) and entry["pdf_dir"] == str(benchmark.parent / "pdfs")
    assert entry["name"] and entry["report"]["dropped"]
    assert len(entry["sample_ids"]) == 5 and "urnuuidA::q1" in entry["sample_ids"]
    manifest = json.loads((nested / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["importer"] == "scanrag import docscope-infer"
    assert manifest["infer"]["path"] == str(infer) and len(manifest["infer"]["sha256"]) == 64
    assert manifest["benchmark"]["path"] == str(benchmark)
    assert manifest["benchmark"]["sha256"] == file_sha256(benchmark)
    assert (manifest["split"], manifest["bbox_units"], manifest["samples"]) == (
        None,
        "normalized",
        5,
    )
    assert manifest["imported_at"].endswith("+00:00")


@pytest.mark.parametrize(
    ("infer_text", "message"),
    [
        ("", "holds no inference record; nothing to import"),
        ("\n\n", "holds no inference record; nothing to import"),
        ('not json\n{"no_id": 1}\n[1]\n', "lines 1, 2, 3 are not JSON objects with a question_id"),
        ('{"question_id": "nowhere::q1", "raw": "x"}\n', "none of the 1 records of"),
    ],
)
def test_an_infer_file_with_nothing_to_import_is_refused_before_any_folder(
    official_files: tuple[Path, Path], tmp_path: Path, infer_text: str, message: str
) -> None:
    """Issue 20: an empty or all-invalid infer file imported with exit 0 into an empty run."""
    from scanrag.evaluation.docscope.importer import InferImportError, import_infer

    benchmark, _ = official_files
    infer = tmp_path / "infer.jsonl"
    infer.write_text(infer_text, encoding="utf-8")
    out = tmp_path / "run"
    with pytest.raises(InferImportError, match=re.escape(message)):
        import_infer(infer, benchmark, out, bbox_units="normalized")
    assert not out.exists()


def test_out_naming_a_file_is_refused(official_files: tuple[Path, Path], tmp_path: Path) -> None:
    from scanrag.evaluation.docscope.importer import InferImportError, import_infer

    benchmark, infer = official_files
    taken = tmp_path / "results.csv"
    taken.write_text("keep me", encoding="utf-8")
    with pytest.raises(InferImportError, match="--out .*results.csv is a file"):
        import_infer(infer, benchmark, taken, bbox_units="normalized")
    assert taken.read_text(encoding="utf-8") == "keep me"
