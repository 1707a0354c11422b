"""DocScope benchmark.json: regions and facts, box units, splits and bad items.

The official format (144-DPI pixel boxes, the README's example item) is in
test_docscope_official.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import load_dataset
from scanrag.loaders.docscope import load_docscope
from scanrag.loaders.docscope_boxes import NORMALIZED, POINTS, detect_units

MakePdf = Callable[[Path, int], Path]  # pages are 300 x 400 points (600 x 800 pixels at 144 DPI)


def _item(ident: str, boxes: list[list[float]], **overrides: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": ident,
        "split": "test",
        "pdf": {"doc_id_str": "report"},
        "question": f"Question {ident}?",
        "answer": {"answer_text": "42", "is_answerable": True},
        "evidences": [
            {"local_id": f"e{i}", "page": 2 + i, "bbox": box, "element_type": "table"}
            for i, box in enumerate(boxes)
        ],
        "facts": [
            {"local_id": f"f{i}", "evidence_local_id": f"e{i}", "text_description": f"Fact {i}."}
            for i in range(len(boxes))
        ],
        "extract_class": "table",
    }
    item.update(overrides)
    return item


def _write(folder: Path, items: list[Any]) -> Path:
    path = folder / "benchmark.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.fixture
def pdfs(tmp_path: Path, pdf_factory: MakePdf) -> Path:
    pdf_factory(tmp_path / "pdfs" / "report.pdf", 4)
    return tmp_path / "pdfs"


def test_normalized_boxes_become_regions_and_facts(tmp_path: Path, pdfs: Path) -> None:
    items = [
        _item("a", [[0.1, 0.2, 0.5, 0.3], [0.0, 0.0, 1.0, 0.5]]),
        _item(
            "b",
            [],
            answer={"answer_text": "Unanswerable", "is_answerable": False},
            split="dev",
            extract_class="none",
        ),
    ]
    dataset = load_dataset("docscope", _write(tmp_path, items), bbox_units="auto")
    assert dataset.report.summary() == "read 2, kept 2, dropped 0"
    a, b = dataset.samples
    assert a.doc_ids == ["report.pdf"] and a.gold_pages == [2, 3]
    assert [r.bbox.as_list() for r in a.gold_regions] == [[0.1, 0.2, 0.5, 0.3], [0, 0, 1, 0.5]]
    assert a.gold_regions[0].element_type == "table"
    assert [(f.page, f.region_index, f.text) for f in a.gold_facts] == [
        (2, 0, "Fact 0."),
        (3, 1, "Fact 1."),
    ]
    assert a.gold_facts[1].bbox == a.gold_regions[1].bbox
    assert a.metadata["fact_ids"] == ["f0", "f1"]  # the ids the official fact judge reports
    assert a.metadata["bbox_units"] == NORMALIZED and a.metadata["split"] == "test"
    assert a.category == "table" and a.answer == "42" and a.answerable
    assert a.metadata["evidence_sources"] == ["table"]
    assert not b.answerable and b.gold_pages == [] and b.metadata["split"] == "dev"

    only_dev = load_docscope(tmp_path / "benchmark.json", split="dev", bbox_units="normalized")
    assert [s.id for s in only_dev.samples] == ["b"] and only_dev.name == "docscope-dev"
    assert only_dev.report.dropped[0].reason == "split 'test' not selected"


def test_point_boxes_are_divided_by_the_page_size(tmp_path: Path, pdfs: Path) -> None:
    items = [_item("pts", [[30, 40, 150, 200], [0, 200, 300, 400]])]
    dataset = load_docscope(_write(tmp_path, items), validate=False, bbox_units="points")
    sample = dataset.samples[0]
    assert sample.gold_regions[0].bbox.as_list() == pytest.approx([0.1, 0.1, 0.5, 0.5])
    assert sample.gold_regions[1].bbox.as_list() == pytest.approx([0.0, 0.5, 1.0, 1.0])
    assert sample.metadata["bbox_units"] == POINTS

    xywh = load_docscope(
        _write(tmp_path, [_item("wh", [[30, 40, 120, 160]])]),
        bbox_format="xywh",
        bbox_units="points",
    )
    assert xywh.samples[0].gold_regions[0].bbox.as_list() == pytest.approx([0.1, 0.1, 0.5, 0.5])
    # Pixels at 72 DPI are points.
    at72 = load_docscope(_write(tmp_path, items), bbox_units="pixels", bbox_dpi=72)
    assert at72.samples[0].gold_regions[0].bbox == sample.gold_regions[0].bbox


def test_unit_detection_looks_at_the_whole_file() -> None:
    small = _item("s", [[0.1, 0.1, 0.2, 0.2]])
    large = _item("l", [[10, 10, 20, 20]])
    assert detect_units([small]) == "normalized"
    assert detect_units([small, large, None]) == "pixels"
    assert detect_units([{"evidences": [{"bbox": "junk"}]}]) == "normalized"


def test_bad_items_are_dropped_with_reasons(tmp_path: Path, pdfs: Path) -> None:
    ghost = _item("ghost", [[10, 10, 50, 50]])
    ghost["facts"][0]["evidence_local_id"] = "e9"
    items = [
        _item("ok", [[10, 10, 50, 50]]),
        _item("huge", [[10, 10, 1300, 50]]),  # beyond a page 600 pixels wide at 144 DPI
        ghost,
        _item("late", [[10, 10, 50, 50]], evidences=[{"local_id": "e0", "page": 9, "bbox": None}]),
        _item("nopdf", [[10, 10, 50, 50]], pdf={"doc_id_str": "absent"}),
        _item("noq", [[10, 10, 50, 50]], question=""),
        _item("p0", [[10, 10, 50, 50]], evidences=[{"local_id": "e0", "page": 0}]),
    ]
    dataset = load_docscope(_write(tmp_path, items))
    assert [s.id for s in dataset.samples] == ["ok"]
    reasons = {d.id: d.reason for d in dataset.report.dropped}
    assert "exceeds the page (600x800 pixels)" in reasons["huge"]
    assert "unknown evidence 'e9'" in reasons["ghost"]
    assert "page 9 outside 1..4" in reasons["late"]
    assert "need the PDF" in reasons["nopdf"]
    assert "question" in reasons["noq"]
    assert "1-based" in reasons["p0"]


def test_whole_page_evidence_and_forced_units(tmp_path: Path, pdfs: Path) -> None:
    item = _item("w", [[0.1, 0.1, 0.2, 0.2]])
    item["evidences"].append({"local_id": "e1", "page": 4, "bbox": None, "element_type": "figure"})
    dataset = load_docscope(_write(tmp_path, [item]), bbox_units="points")
    sample = dataset.samples[0]
    assert sample.metadata["whole_page_regions"] == [1]
    assert sample.gold_regions[1].bbox.as_list() == [0.0, 0.0, 1.0, 1.0]
    # forced to points, 0.1 points on a 300-point page is a tiny box near the corner
    assert sample.gold_regions[0].bbox.x2 < 0.001
