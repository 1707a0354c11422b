"""The DocScope loader's ``profile: official``: rows the released evaluation code keeps are
kept, read as it reads them; the samples ask the scorers for the official profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from scanrag.datasets import DatasetError
from scanrag.loaders.docscope import load_docscope


def _pdf(path: Path, pages: int = 2) -> None:
    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page(width=612, height=792)  # 1224 x 1584 pixels at 144 DPI
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()


def _row(ident: str, doc: str, evidences: list[dict], facts: list[dict] | None = None) -> dict:
    return {
        "id": ident,
        "pdf": {"doc_id_str": doc},
        "question": f"Question {ident}?",
        "answer": {"answer_text": "x", "is_answerable": True},
        "evidences": evidences,
        "facts": facts or [],
    }


ROWS: list[dict[str, Any]] = [
    _row("float", "A", [{"local_id": "e1", "page": 2.0, "bbox": [100, 100, 600, 400]}]),
    _row("past_edge", "A", [{"local_id": "e1", "page": 1, "bbox": [900, 100, 1250, 300]}]),
    _row("past_pdf", "A", [{"local_id": "e1", "page": 9, "bbox": [10, 10, 50, 50]}]),
    _row("no_pdf", "B", [{"local_id": "e1", "page": 1, "bbox": [10, 10, 50, 50]}]),
    _row(
        "facts",
        "A",
        [{"local_id": "e1", "page": 1, "bbox": [10, 10, 50, 50]}],
        [
            {"local_id": "f1", "evidence_local_id": "e1", "text_description": "On page 1."},
            {"local_id": "f9", "evidence_local_id": "e9", "text_description": "Nowhere."},
        ],
    ),
    _row("twice", "A", [{"local_id": "e1", "page": 1, "bbox": [10, 10, 50, 50]}]),
    _row("twice", "A", [{"local_id": "e1", "page": 2, "bbox": [10, 10, 50, 50]}]),
    {"id": "bare", "pdf": {"doc_id_str": "A"}, "evidences": []},  # no question, no answer
]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    _pdf(tmp_path / "pdfs" / "A.pdf")
    path = tmp_path / "benchmark.json"
    path.write_text(json.dumps(ROWS))
    return path


def test_the_paper_profile_drops_what_the_released_code_keeps(bench: Path) -> None:
    dataset = load_docscope(bench, validate=False)
    kept = {s.id for s in dataset.samples}
    assert kept == {"twice"}  # float page, box past the edge, page past the PDF, no PDF...
    reasons = " ".join(d.reason for d in dataset.report.dropped)
    assert "1-based integer" in reasons and "exceeds the page" in reasons
    assert "names unknown evidence" in reasons and "duplicate id" in reasons


def test_the_official_profile_keeps_them(bench: Path) -> None:
    dataset = load_docscope(bench, validate=False, profile="official")
    samples = {s.id: s for s in dataset.samples}
    assert set(samples) == {"float", "past_edge", "past_pdf", "no_pdf", "facts", "twice", "bare"}
    assert samples["bare"].question == "(no question in the benchmark row)"
    assert all(s.metadata["scoring_profile"] == "official" for s in samples.values())
    assert samples["float"].gold_pages == [2]
    assert samples["past_edge"].gold_regions[0].bbox.x2 == 1.0  # clipped to the page
    assert samples["past_edge"].metadata["evidence_boxes"][0][2] == 1.0
    assert samples["past_pdf"].gold_pages == [] and samples["past_pdf"].gold_regions == []
    assert samples["past_pdf"].metadata["evidence_boxes"] == [None]
    assert samples["past_pdf"].metadata["docscope_row"]["evidences"][0]["page"] == 9
    assert samples["no_pdf"].gold_regions == []
    facts = samples["facts"]
    assert [f.text for f in facts.gold_facts] == ["On page 1."]
    assert len(facts.metadata["docscope_row"]["facts"]) == 2  # the context fact stays
    assert samples["twice"].gold_pages == [2]  # the later row wins, as released
    assert [d.reason for d in dataset.report.dropped] == [
        "a later row has the same id (the released code keeps it)"
    ]


def test_profile_names_are_checked(bench: Path) -> None:
    with pytest.raises(DatasetError, match="profile must be one of paper, official"):
        load_docscope(bench, validate=False, profile="lenient")


def test_the_official_gold_reads_the_row(bench: Path) -> None:
    from scanrag.evaluation.docscope.gold import official_gold

    samples = {s.id: s for s in load_docscope(bench, validate=False, profile="official").samples}
    gold = official_gold(samples["past_pdf"])
    assert gold.pages == [9] and [b.pixels for b in gold.boxes_on(9)] == [[10, 10, 50, 50]]
    assert gold.boxes_on(9)[0].box is None  # no place on a page the PDF does not have
    assert official_gold(samples["bare"]).question == ""  # as the released code reads it
    facts = official_gold(samples["facts"])
    assert [f.fact_id for f in facts.facts_on(1)] == ["f1"]
    assert facts.siblings(1) == ["Nowhere."]
