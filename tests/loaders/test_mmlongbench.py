"""MMLongBench-Doc ``samples.json``: the public rows against the real PDFs, and bad rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import DatasetError, load_dataset, load_generic
from scanrag.datasets.fields import content_id
from scanrag.loaders.mmlongbench import load_mmlongbench, parse_pages

SAMPLE_FILE = "mmlongbench-doc_samples_sample.json"


def _write(tmp_path: Path, rows: list[Any], name: str = "samples.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _row(**overrides: Any) -> dict[str, Any]:
    row = {
        "doc_id": "a.pdf",
        "doc_type": "Report",
        "question": "What is on page two?",
        "answer": "Page body 2",
        "evidence_pages": "[2]",
        "evidence_sources": "['Pure-text (Plain-text)']",
        "answer_format": "Str",
    }
    row.update(overrides)
    return row


def test_public_rows_load_against_the_real_pdfs(formats_dir: Path, mmlb_dir: Path) -> None:
    dataset = load_mmlongbench(formats_dir / SAMPLE_FILE, mmlb_dir / "pdfs")
    assert dataset.report.summary() == "read 6, kept 6, dropped 0"
    assert dataset.loader == "mmlongbench"
    assert [s.gold_pages for s in dataset.samples] == [[2], [14], [10], [11], [14], [13]]
    first = dataset.samples[0]
    assert first.id == content_id("mmlongbench-doc/", first.doc_ids[0], first.question)
    assert len({s.id for s in dataset.samples}) == 6
    assert [s.metadata["source_index"] for s in dataset.samples] == list(range(6))
    assert first.metadata["evidence_sources"] == ["Pure-text (Plain-text)"]
    assert first.metadata["num_pages"] == 15 and first.answer_format == "Str"
    # The same questions in mmlb-dev (converted by hand to the generic format) agree.
    reference = {s.question: s for s in load_generic(mmlb_dir / "questions.jsonl").samples}
    for sample in dataset.samples:
        twin = reference[sample.question]
        assert (sample.answer, sample.gold_pages, sample.doc_ids) == (
            twin.answer,
            twin.gold_pages,
            twin.doc_ids,
        )


def test_page_strings_and_unanswerable_rows(
    tmp_path: Path, pdf_dir: Path, pdf_factory: Callable[[Path, int], Path]
) -> None:
    rows = [
        _row(evidence_pages="[3, 5]", evidence_sources="['Chart', 'Table']"),
        _row(answer="Not answerable", evidence_pages="[]", answer_format="None"),
        _row(evidence_pages=[1, 4], evidence_sources=["Table"]),
    ]
    dataset = load_mmlongbench(_write(tmp_path, rows), pdf_dir)
    first, unanswerable, listed = dataset.samples
    assert first.gold_pages == [3, 5]
    assert first.metadata["evidence_sources"] == ["Chart", "Table"]
    assert not unanswerable.answerable and unanswerable.gold_pages == []
    assert unanswerable.answer == "Not answerable"
    assert listed.gold_pages == [1, 4]


@pytest.mark.parametrize(
    ("value", "pages"), [("[3, 5]", [3, 5]), ("[]", []), ("", []), ("7", [7]), ([2], [2])]
)
def test_parse_pages(value: Any, pages: list[int]) -> None:
    assert parse_pages(value) == pages


def test_bad_rows_are_dropped_with_reasons(tmp_path: Path, pdf_dir: Path) -> None:
    rows = [
        _row(),
        _row(evidence_pages="[0]"),
        _row(evidence_pages="[2, 9]"),  # a.pdf has 5 pages
        _row(evidence_pages="[3, oops"),
        _row(doc_id=None),
        _row(doc_id="missing.pdf"),
        _row(question="  "),
        "not an object",
    ]
    dataset = load_mmlongbench(_write(tmp_path, rows), pdf_dir)
    assert dataset.report.rows_read == 8 and dataset.report.rows_kept == 1
    reasons = {d.row: d.reason for d in dataset.report.dropped}
    assert "1-based" in reasons[1]
    assert "page 9 outside 1..5" in reasons[2]
    assert "not a list literal" in reasons[3]
    assert "doc_id" in reasons[4]
    assert "missing PDF 'missing.pdf'" in reasons[5]
    assert "question" in reasons[6]
    assert "not an object" in reasons[7]
    assert dataset.report.dropped[0].id == dataset.samples[0].id + "~2"  # same doc and question


def test_registry_folder_lookup_and_unreadable_files(tmp_path: Path, pdf_dir: Path) -> None:
    _write(tmp_path, [_row()])
    dataset = load_dataset("mmlongbench", tmp_path)  # the folder holds samples.json and pdfs/
    assert dataset.loader == "mmlongbench" and dataset.pdf_dir == pdf_dir
    assert len(dataset) == 1
    (tmp_path / "broken.json").write_text("[{]", encoding="utf-8")
    with pytest.raises(DatasetError, match="not one"):
        load_mmlongbench(tmp_path / "broken.json", validate=False)
    with pytest.raises(DatasetError, match="not found"):
        load_mmlongbench(tmp_path / "nope.json")


def test_ids_come_from_document_and_question_not_row_position(
    formats_dir: Path, mmlb_dir: Path, tmp_path: Path
) -> None:
    rows = json.loads((formats_dir / SAMPLE_FILE).read_text(encoding="utf-8"))
    forward = load_mmlongbench(_write(tmp_path, rows, "a.json"), mmlb_dir / "pdfs")
    backward = load_mmlongbench(_write(tmp_path, rows[::-1][:4], "b.json"), mmlb_dir / "pdfs")
    ids = {s.question: s.id for s in forward.samples}
    assert all(ids[s.question] == s.id for s in backward.samples)
    assert all(s.id.startswith("mmlongbench-doc/") and len(s.id) == 28 for s in forward.samples)
    # Whitespace does not change the identity; the same question on two rows keeps both.
    spaced = {**rows[0], "question": "  " + rows[0]["question"].replace(" ", "  ") + "\n"}
    twice = load_mmlongbench(_write(tmp_path, [rows[0], spaced], "c.json"), validate=False)
    assert [s.id for s in twice.samples] == [
        ids[rows[0]["question"]],
        ids[rows[0]["question"]] + "~2",
    ]
