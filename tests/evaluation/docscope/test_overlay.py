"""The judge's overlay image: green gold boxes with tags, red predictions, at the right pixels."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from scanrag.evaluation.docscope.overlay import GREEN, RED, cached_overlay, gold_tag, line_width
from scanrag.evaluation.documents import DocumentSource
from scanrag.schemas import BBox


def px(box: float, size: int) -> int:
    return round(box * (size - 1))


def test_boxes_are_drawn_in_their_colors(pdf_dir: Path, tmp_path: Path) -> None:
    source = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
    page = source.render("doc.pdf", 1)
    gold = [BBox.from_list([0.1, 0.1, 0.5, 0.3])]
    pred = [BBox.from_list([0.55, 0.5, 0.9, 0.8]), BBox.from_list([0.1, 0.6, 0.4, 0.9])]
    path = cached_overlay(source.overlay_dir, page, gold, pred)
    with Image.open(path) as im:
        image = im.convert("RGB")
    w, h = image.size
    assert (w, h) == (300, 400)  # 300 x 400 pt page at 72 dpi
    assert image.getpixel((px(0.1, w), px(0.2, h))) == GREEN  # gold left edge
    assert image.getpixel((px(0.5, w), px(0.2, h))) == GREEN  # gold right edge
    assert image.getpixel((px(0.55, w), px(0.65, h))) == RED  # predicted left edge
    assert image.getpixel((px(0.7, w), px(0.8, h))) == RED  # predicted bottom edge
    assert image.getpixel((px(0.25, w), px(0.75, h))) == (255, 255, 255)  # inside: untouched
    assert image.getpixel((px(0.1, w), px(0.6, h))) == RED  # second predicted box
    # the GOLD[1] tag sits above the gold box on a green background
    tag_row = [image.getpixel((x, px(0.1, h) - 8)) for x in range(px(0.1, w), px(0.1, w) + 40)]
    assert GREEN in tag_row
    # cached: a second call returns the same file without redrawing
    stamp = path.stat().st_mtime_ns
    assert cached_overlay(source.overlay_dir, page, gold, pred) == path
    assert path.stat().st_mtime_ns == stamp


def test_prediction_on_top_of_gold_leaves_both_visible(pdf_dir: Path, tmp_path: Path) -> None:
    source = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
    page = source.render("doc.pdf", 2)
    same = BBox.from_list([0.2, 0.2, 0.6, 0.6])
    path = cached_overlay(source.overlay_dir, page, [same], [same])
    with Image.open(path) as im:
        image = im.convert("RGB")
    w, h = image.size
    thin = line_width(w, h)
    x, y = px(0.2, w), px(0.4, h)
    assert image.getpixel((x, y)) == RED
    assert image.getpixel((x + thin, y)) == GREEN
    assert gold_tag(0) == "GOLD[1]"
