"""DocScope's official benchmark.json: boxes are pixels of a 144-DPI render.

The golden file holds the example record of the official ``code/README.md`` and, for letter
and A4 pages, the normalized boxes it must load as. The render test draws each official box
into a generated PDF, renders the page at 144 DPI (what the official ``render_eval_page.py``
draws gold boxes on, unscaled) and checks that the loaded box lands on the drawn pixels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from scanrag.loaders.docscope import load_docscope
from scanrag.loaders.docscope_boxes import PAPER_MEAN_AREA, mean_area

GOLDEN = Path(__file__).parent / "golden" / "docscope_readme_item.json"


def _golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def _official_pdf(folder: Path, name: str, size: tuple[float, float], item: dict[str, Any]) -> Path:
    """A PDF with enough pages whose evidence areas are filled black, drawn in points."""
    doc = pymupdf.open()
    width, height = size
    for _ in range(max(e["page"] for e in item["evidences"])):
        doc.new_page(width=width, height=height)
    for evidence in item["evidences"]:
        x1, y1, x2, y2 = (v * 72 / 144 for v in evidence["bbox"])
        doc[evidence["page"] - 1].draw_rect(
            pymupdf.Rect(x1, y1, x2, y2), color=None, fill=(0, 0, 0)
        )
    path = folder / f"{name}.pdf"
    folder.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()
    return path


def _write(folder: Path, items: list[dict[str, Any]]) -> Path:
    path = folder / "benchmark.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def _black_box(pix: pymupdf.Pixmap) -> tuple[int, int, int, int]:
    """Pixel bounds (x1, y1, x2, y2, exclusive ends) of the black pixels of a render."""
    samples, n = pix.samples, pix.n
    xs, ys = [], []
    for y in range(pix.height):
        row = samples[y * pix.stride : y * pix.stride + pix.width * n]
        dark = [x for x in range(pix.width) if row[x * n] < 128]
        if dark:
            xs += [dark[0], dark[-1]]
            ys.append(y)
    return min(xs), min(ys), max(xs) + 1, max(ys) + 1


@pytest.mark.parametrize("paper", ["letter", "a4"])
def test_the_readme_item_loads_with_its_boxes(tmp_path: Path, paper: str) -> None:
    golden = _golden()
    item = golden["item"]
    size = tuple(golden["page_size_points"][paper])
    _official_pdf(tmp_path / "pdfs", item["pdf"]["doc_id_str"], size, item)
    dataset = load_docscope(_write(tmp_path, [item]))  # the default unit: 144-DPI pixels
    assert dataset.report.summary() == "read 1, kept 1, dropped 0"
    (sample,) = dataset.samples
    expected = golden["normalized_boxes"][paper]
    for region, box in zip(sample.gold_regions, expected, strict=True):
        assert region.bbox.as_list() == pytest.approx(box, abs=1e-6)
    assert sample.gold_pages == [51, 53] and sample.answer == "11 - 30 mmbf"
    assert [f.region_index for f in sample.gold_facts] == [0, 1]
    assert sample.metadata["bbox_units"].startswith("pixels at 144 DPI")
    assert sample.metadata["evidence_sources"] == ["text"] and sample.category == "class2"


@pytest.mark.parametrize("paper", ["letter", "a4"])
def test_loaded_boxes_land_where_the_official_renderer_draws_them(
    tmp_path: Path, paper: str
) -> None:
    golden = _golden()
    item = golden["item"]
    size = tuple(golden["page_size_points"][paper])
    pdf = _official_pdf(tmp_path / "pdfs", item["pdf"]["doc_id_str"], size, item)
    (sample,) = load_docscope(_write(tmp_path, [item])).samples
    with pymupdf.open(pdf) as doc:
        for evidence, region in zip(item["evidences"], sample.gold_regions, strict=True):
            pix = doc[region.page - 1].get_pixmap(dpi=144)
            drawn = _black_box(pix)
            assert drawn == pytest.approx(evidence["bbox"], abs=1.5)  # the official pixels
            box = region.bbox
            loaded = (
                box.x1 * pix.width,
                box.y1 * pix.height,
                box.x2 * pix.width,
                box.y2 * pix.height,
            )
            assert loaded == pytest.approx(drawn, abs=1.5)


def test_reading_the_pixels_as_points_drops_the_item(tmp_path: Path) -> None:
    golden = _golden()
    item = golden["item"]
    _official_pdf(tmp_path / "pdfs", item["pdf"]["doc_id_str"], (612, 792), item)
    dataset = load_docscope(_write(tmp_path, [item]), bbox_units="points")
    assert dataset.samples == []
    assert "exceeds the page (612x792 points)" in dataset.report.dropped[0].reason


def _tenth_of_a_page_items(count: int) -> list[dict[str, Any]]:
    """Items whose boxes cover about 9.9% of a 300 x 400 point page in 144-DPI pixels."""
    return [
        {
            "id": f"q{i}",
            "pdf": {"doc_id_str": "paper"},
            "question": f"Question {i}?",
            "answer": {"answer_text": "x", "is_answerable": True},
            "evidences": [{"local_id": "e1", "page": 1, "bbox": [10, 10, 200, 260]}],
            "facts": [],
        }
        for i in range(count)
    ]


def test_the_mean_area_is_checked_against_the_paper(tmp_path: Path, pdf_factory: Any) -> None:
    pdf_factory(tmp_path / "pdfs" / "paper.pdf", 1)
    path = _write(tmp_path, _tenth_of_a_page_items(40))
    right = load_docscope(path)
    mean, count = mean_area(r.bbox for s in right.samples for r in s.gold_regions)
    assert count == 40 and mean == pytest.approx(190 * 250 / (600 * 800))
    assert abs(mean - PAPER_MEAN_AREA) < 0.01
    (note,) = right.report.notes
    assert note.startswith("mean evidence area 9.90% of the page over 40 boxes read as pixels")
    assert "(DocScope paper: 9.79%)" in note
    wrong = load_docscope(path, bbox_units="points")  # four times the area
    (warning,) = wrong.report.notes
    assert warning.startswith("warning: mean evidence area 39.58%")
    assert "another unit" in warning
    few = load_docscope(_write(tmp_path, _tenth_of_a_page_items(3)), bbox_units="points")
    assert not few.report.notes[0].startswith("warning")  # too few boxes to judge
