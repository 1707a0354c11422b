"""The generic JSONL format: the real mmlb-dev file, round trips, and bad rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import (
    DatasetError,
    load_dataset,
    load_generic,
    page_count,
    sample_to_row,
    write_generic,
)
from scanrag.registry import LOADERS, UnknownNameError
from scanrag.schemas import BBox, EvidencePair, Fact, GoldError, Region, Sample

WriteRows = Callable[..., Path]


def _row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "q1",
        "doc": "a.pdf",
        "question": "What is on page two?",
        "answer": "Page body 2",
        "answer_format": "Str",
        "answerable": True,
        "evidence_pages": [2],
    }
    row.update(overrides)
    return row


# --------------------------------------------------------------------------- the real file


def test_loads_all_mmlb_dev_rows_with_pages_validated(mmlb_dir: Path) -> None:
    dataset = load_generic(mmlb_dir / "questions.jsonl", mmlb_dir / "pdfs")
    assert dataset.report.rows_read == 101
    assert dataset.report.rows_kept == 101
    assert dataset.report.dropped == []
    assert dataset.name == "mmlb-dev"
    assert len(dataset) == 101
    unanswerable = [s for s in dataset.samples if not s.answerable]
    assert len(unanswerable) == 31
    assert all(s.answer == "Not answerable" and not s.gold_pages for s in unanswerable)
    for sample in dataset.samples:
        pages = page_count(dataset.pdf_path(sample.primary_doc))
        assert all(1 <= p <= pages for p in sample.gold_pages)
        # The row's own page count is kept in metadata and agrees with the file.
        assert sample.metadata["num_pages"] == pages
        assert {"evidence_sources", "doc_type"} <= set(sample.metadata)
    assert len(dataset.doc_ids()) == 12


def test_mmlb_folder_path_finds_questions_and_pdfs(mmlb_dir: Path) -> None:
    dataset = load_dataset("generic", mmlb_dir)
    assert dataset.pdf_dir == mmlb_dir / "pdfs"
    assert dataset.loader == "generic"
    assert dataset.report.rows_kept == 101


def test_mmlb_rows_survive_a_round_trip(mmlb_dir: Path, tmp_path: Path) -> None:
    original = load_generic(mmlb_dir / "questions.jsonl", mmlb_dir / "pdfs")
    write_generic(original.samples, tmp_path / "copy.jsonl")
    again = load_generic(tmp_path / "copy.jsonl", mmlb_dir / "pdfs")
    assert again.samples == original.samples
    first_line = json.loads((tmp_path / "copy.jsonl").read_text().splitlines()[0])
    raw = json.loads((mmlb_dir / "questions.jsonl").read_text().splitlines()[0])
    # Same shape as the source format, with evidence_sources as a list (one type per field).
    assert raw["evidence_sources"] == "['Pure-text (Plain-text)']"
    assert first_line == {**raw, "evidence_sources": ["Pure-text (Plain-text)"]}


# --------------------------------------------------------------------------- round trip


def _rich_sample() -> Sample:
    box = BBox.from_list([0.1, 0.2, 0.5, 0.3])
    return Sample(
        id="rich-1",
        doc_ids=["a.pdf", "b.pdf"],
        cited_doc_ids=["b.pdf"],
        question="Which value does the table give?",
        answer="42",
        answerable=True,
        answer_format="Int",
        gold_pages=[4, 2],
        gold_regions=[
            Region(page=2, bbox=box, element_type="table_row", text="row 42"),
            Region(page=3, bbox=box, doc_id="b.pdf"),
        ],
        gold_facts=[
            Fact(page=2, text="The row says 42.", bbox=box, region_index=0),
            Fact(page=4, text="Page four agrees."),
        ],
        gold_chain=[EvidencePair(anchor="Fig. 2", text="the bars", page=4)],
        gold_errors=[
            GoldError(
                family="CF",
                description="total is wrong",
                pages=[2, 4],
                locations=[Region(page=2, bbox=box, element_type="table")],
                reasoning_steps=["add the rows", "compare with the total"],
            )
        ],
        gold_explanation="The rows do not add up.",
        task="error_detection",
        category="CF",
        metadata={"doc_type": "Report", "num_pages": 5, "nested": {"k": [1, 2]}, "task": "x"},
    )


def test_round_trip_keeps_every_field(tmp_path: Path, pdf_dir: Path) -> None:
    samples = [_rich_sample(), Sample(id="plain", doc_ids=["b.pdf"], question="Anything?")]
    path = write_generic(samples, tmp_path / "out.jsonl")
    dataset = load_generic(path, pdf_dir)
    assert dataset.report.dropped == []
    assert dataset.samples == samples
    row = sample_to_row(samples[0])
    assert row["docs"] == ["a.pdf", "b.pdf"] and "doc" not in row
    assert row["evidence_pages"] == [2, 4]
    assert row["metadata"] == {"task": "x"}  # a metadata key clashing with a field is nested
    assert row["gold_regions"][1]["doc"] == "b.pdf"


def test_write_is_atomic_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "dir" / "s.jsonl"
    write_generic([Sample(id="x", doc_ids=["a.pdf"], question="q?")], target)
    assert target.is_file()
    assert not list(target.parent.glob("*.tmp"))


# --------------------------------------------------------------------------- answerability


@pytest.mark.parametrize(
    ("overrides", "answerable", "answer"),
    [
        ({"answer": "Not answerable", "answerable": True}, False, "Not answerable"),
        ({"answer": "unanswerable"}, False, "unanswerable"),
        ({"answer": "Paris", "answerable": False}, False, "Paris"),
        ({"answer": 12}, True, "12"),
        ({"answer": ["a", "b"]}, True, '["a", "b"]'),
        ({"answer": None}, True, None),
    ],
)
def test_answerability_and_answer_text(
    write_jsonl: WriteRows, pdf_dir: Path, overrides: dict[str, Any], answerable: bool,
    answer: str | None,
) -> None:  # fmt: skip
    dataset = load_generic(write_jsonl([_row(**overrides)]), pdf_dir)
    (sample,) = dataset.samples
    assert sample.answerable is answerable
    assert sample.answer == answer


# --------------------------------------------------------------------------- bad rows


def test_bad_rows_are_dropped_with_reasons(write_jsonl: WriteRows, pdf_dir: Path) -> None:
    rows: list[Any] = [
        _row(id="good"),
        _row(id="far-page", evidence_pages=[9]),
        _row(id="no-pdf", doc="missing.pdf"),
        '{"id": "broken", "question": ',
        _row(id="no-question", question=""),
        {k: v for k, v in _row(id="no-question-2").items() if k != "question"},
        _row(id="bad-box", gold_regions=[{"page": 1, "bbox": [0.5, 0.5, 0.2, 0.9]}]),
        _row(id="far-region", gold_regions=[{"page": 6, "bbox": [0, 0, 1, 1]}]),
        _row(id="zero-page", evidence_pages=[0]),
        _row(id="bad-task", task="poetry"),
        _row(id="good"),
        "",
        "[1, 2]",
        _row(id="far-fact", gold_facts=[{"page": 7, "text": "x"}]),
        _row(id="far-error", gold_errors=[{"family": "CF", "pages": [8]}]),
        _row(id="cited-missing", cited_docs=["nowhere.pdf"]),
        _row(id="second-doc", docs=["a.pdf", "b.pdf"]),
    ]
    dataset = load_generic(write_jsonl(rows), pdf_dir)
    report = dataset.report
    assert report.rows_read == 16  # the blank line is not a row
    assert [s.id for s in dataset.samples] == ["good", "second-doc"]
    assert report.rows_kept == 2
    reasons = {(d.row, d.id): d.reason for d in report.dropped}
    assert len(reasons) == 14
    assert "gold page 9 outside 1..5 of 'a.pdf'" in reasons[(1, "far-page")]
    assert "missing PDF 'missing.pdf'" in reasons[(2, "no-pdf")]
    assert "line 4 is not valid JSON" in reasons[(3, None)]
    assert "field 'question' is empty" in reasons[(4, "no-question")]
    assert "missing field 'question'" in reasons[(5, "no-question-2")]
    assert "above-left" in reasons[(6, "bad-box")]
    assert "gold region 0 page 6 outside 1..5" in reasons[(7, "far-region")]
    assert "1-based" in reasons[(8, "zero-page")]
    assert "task 'poetry'" in reasons[(9, "bad-task")]
    assert reasons[(10, "good")] == "duplicate id"
    assert "not a JSON object" in reasons[(12, None)]
    assert "gold fact 0 page 7" in reasons[(13, "far-fact")]
    assert "gold error 0 page 8" in reasons[(14, "far-error")]
    assert "missing PDF 'nowhere.pdf'" in reasons[(15, "cited-missing")]
    assert [d.row for d in report.dropped] == sorted(d.row or 0 for d in report.dropped)
    assert report.summary() == "read 16, kept 2, dropped 14"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (["What", "is", "x?"], "field 'question' must be a non-empty string, got a list (['What'"),
        (None, "field 'question' must be a non-empty string, got null"),
        (42, "field 'question' must be a non-empty string, got an int (42)"),
        ("   ", "field 'question' is empty"),
    ],
)
def test_a_question_of_the_wrong_kind_is_named_precisely(
    write_jsonl: WriteRows, pdf_dir: Path, value: Any, reason: str
) -> None:
    """Issue 20: a list or null question was reported as a "missing field"."""
    dataset = load_generic(write_jsonl([_row(id="odd", question=value), _row(id="ok")]), pdf_dir)
    assert [s.id for s in dataset.samples] == ["ok"]
    ((row, sample_id, got),) = [(d.row, d.id, d.reason) for d in dataset.report.dropped]
    assert (row, sample_id) == (0, "odd") and got.startswith(reason), got


def test_without_validation_pdfs_are_not_needed(write_jsonl: WriteRows, tmp_path: Path) -> None:
    path = write_jsonl([_row(doc="nowhere.pdf", evidence_pages=[99])])
    dataset = load_generic(path, tmp_path / "no-such-dir", validate=False)
    assert [s.gold_pages for s in dataset.samples] == [[99]]


def test_corrupt_pdf_drops_its_rows(write_jsonl: WriteRows, pdf_dir: Path) -> None:
    (pdf_dir / "bad.pdf").write_bytes(b"this is not a pdf at all")
    dataset = load_generic(write_jsonl([_row(doc="bad.pdf"), _row(id="q2")]), pdf_dir)
    assert [s.id for s in dataset.samples] == ["q2"]
    assert "cannot open" in dataset.report.dropped[0].reason


# --------------------------------------------------------------------------- whole-file errors


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_generic(tmp_path / "nope.jsonl")
    with pytest.raises(DatasetError, match="questions.jsonl"):
        load_generic(tmp_path)


def test_unreadable_files_are_clear_errors(tmp_path: Path) -> None:
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(DatasetError, match="not UTF-8"):
        load_generic(binary)
    array = tmp_path / "array.jsonl"
    array.write_text('[{"id": 1}]')
    with pytest.raises(DatasetError, match="JSON array"):
        load_generic(array)
    prose = tmp_path / "prose.jsonl"
    prose.write_text("hello\nworld\n")
    with pytest.raises(DatasetError, match="is it a JSONL file"):
        load_generic(prose)


def test_empty_file_is_an_empty_dataset(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    dataset = load_generic(path)
    assert dataset.samples == [] and dataset.report.rows_read == 0
    assert dataset.name == "empty"


# --------------------------------------------------------------------------- registry


def test_loader_registry_knows_generic_and_synthetic() -> None:
    assert {"generic", "synthetic"} <= set(LOADERS.names())
    with pytest.raises(UnknownNameError, match="generic"):
        LOADERS.get("no-such-format")
