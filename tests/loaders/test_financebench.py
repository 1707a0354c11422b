"""FinanceBench: 0-based evidence pages become 1-based gold pages; validation on a made PDF."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scanrag.datasets import load_dataset
from scanrag.loaders.financebench import load_financebench

SAMPLE_FILE = "financebench_sample.jsonl"
WriteRows = Callable[..., Path]


def _row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "financebench_id": "fb1",
        "company": "Acme",
        "doc_name": "ACME_2023_10K",
        "question_type": "metrics-generated",
        "question": "What was revenue?",
        "answer": "$5",
        "justification": None,
        "evidence": [
            {
                "evidence_text": "Revenue 5",
                "doc_name": "ACME_2023_10K",
                "evidence_page_num": 2,
                "evidence_text_full_page": "Full page text",
            }
        ],
    }
    row.update(overrides)
    return row


def test_public_rows_shift_pages_by_one(formats_dir: Path) -> None:
    dataset = load_financebench(formats_dir / SAMPLE_FILE, validate=False)
    assert dataset.report.summary() == "read 6, kept 6, dropped 0"
    by_id = {s.id: s for s in dataset.samples}
    raw = {
        r["financebench_id"]: r
        for r in map(json.loads, (formats_dir / SAMPLE_FILE).read_text().splitlines())
    }
    for ident, sample in by_id.items():
        expected = sorted({e["evidence_page_num"] + 1 for e in raw[ident]["evidence"]})
        assert sample.gold_pages == expected
        assert sample.doc_ids == [raw[ident]["doc_name"] + ".pdf"]
        assert sample.answerable
    assert by_id["financebench_id_00941"].gold_pages == [1]  # evidence_page_num 0
    assert by_id["financebench_id_04735"].gold_pages == [59, 63]
    evidence = by_id["financebench_id_00807"].metadata["evidence"]
    assert evidence[0]["page"] == 5 and evidence[0]["doc"] == "3M_2023Q2_10Q.pdf"
    assert "full_page" not in evidence[0]
    assert by_id["financebench_id_00807"].metadata["company"] == "3M"
    assert by_id["financebench_id_00807"].category == "domain-relevant"


def test_validation_against_a_generated_pdf(
    tmp_path: Path, write_jsonl: WriteRows, pdf_factory: Callable[[Path, int], Path]
) -> None:
    pdf_factory(tmp_path / "pdfs" / "ACME_2023_10K.pdf", 3)
    last = _row(financebench_id="last")  # 0-based 2 → page 3, the last page
    past = _row(financebench_id="past")
    past["evidence"][0]["evidence_page_num"] = 3  # → page 4 of a 3-page PDF
    other = _row(financebench_id="other", doc_name="OTHER_2020_10K")
    path = write_jsonl([last, past, other], "financebench_open_source.jsonl")
    dataset = load_dataset("financebench", path)  # pdfs/ next to the file
    assert [s.id for s in dataset.samples] == ["last"]
    assert dataset.samples[0].gold_pages == [3]
    assert dataset.samples[0].metadata["num_pages"] == 3
    reasons = {d.id: d.reason for d in dataset.report.dropped}
    assert "page 4 outside 1..3" in reasons["past"]
    assert "missing PDF 'OTHER_2020_10K.pdf'" in reasons["other"]


def test_evidence_from_another_filing_and_full_pages(
    tmp_path: Path, write_jsonl: WriteRows
) -> None:
    row = _row()
    row["evidence"].append(
        {"evidence_text": "Prior year", "doc_name": "ACME_2022_10K", "evidence_page_num": 0}
    )
    dataset = load_financebench(write_jsonl([row]), validate=False, keep_full_pages=True)
    sample = dataset.samples[0]
    assert sample.doc_ids == ["ACME_2023_10K.pdf", "ACME_2022_10K.pdf"]
    assert sample.gold_pages == [3]  # gold pages refer to the primary filing only
    assert sample.metadata["evidence"][1] == {
        "doc": "ACME_2022_10K.pdf",
        "page": 1,
        "text": "Prior year",
    }
    assert sample.metadata["evidence"][0]["full_page"] == "Full page text"


def test_bad_rows_are_dropped_with_reasons(write_jsonl: WriteRows) -> None:
    negative = _row(financebench_id="neg")
    negative["evidence"][0]["evidence_page_num"] = -1
    text_page = _row(financebench_id="txt")
    text_page["evidence"][0]["evidence_page_num"] = "four"
    rows = [
        negative,
        text_page,
        _row(financebench_id="nodoc", doc_name=""),
        _row(financebench_id=None),
        _row(financebench_id="noev", evidence="nonsense"),
        _row(financebench_id="ok"),
        _row(financebench_id="ok"),
        "{broken",
    ]
    dataset = load_financebench(write_jsonl(rows), validate=False)
    assert [s.id for s in dataset.samples] == ["ok"]
    reasons = {d.row: d.reason for d in dataset.report.dropped}
    assert "0-based" in reasons[0]
    assert "must be an integer" in reasons[1]
    assert "doc_name" in reasons[2]
    assert "financebench_id" in reasons[3]
    assert "list of objects" in reasons[4]
    assert reasons[6] == "duplicate id"
    assert "not valid JSON" in reasons[7]
