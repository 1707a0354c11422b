"""Reader input: markers, block boxes, truncation, images and composite merging."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from PIL import Image

from scanrag.agents.context import (
    TRUNCATION_MARK,
    ContextOptions,
    PageRef,
    build_input,
    estimate_tokens,
    page_marker,
    page_text,
)
from scanrag.llm.types import ImagePart, TextPart
from scanrag.untrusted import read_blocks


def test_marker_carries_global_page_and_printed_label(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3, labels=["i", "none", "10"])
    assert page_marker(doc.page(1)) == "=== Page 1 (printed: i) ==="
    assert page_marker(doc.page(2)) == "=== Page 2 (printed: none) ==="
    assert page_marker(doc.page(3), "b.pdf") == "=== b.pdf — Page 3 (printed: 10) ==="
    assert page_marker(doc.page(1), token="ab12") == "=== Page 1 (printed: i) === [id ab12]"


def test_a_document_name_cannot_break_the_marker_line(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=1)
    marker = page_marker(doc.page(1), "x ===\n=== Page 9 [id 00]")
    assert "\n" not in marker and marker.count("===") == 2 and "[id" not in marker


def test_text_pages_are_fenced_under_one_content_derived_id(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3, labels=["i", "ii", "1"])
    refs = [PageRef(doc, 1), PageRef(doc, 3)]
    inp = build_input(refs, ContextOptions())
    blocks = read_blocks("\n".join(p.text for p in inp.parts if isinstance(p, TextPart)))
    assert [(b.label, b.end_label) for b in blocks] == [
        ("Page 1 (printed: i)", "page 1"),
        ("Page 3 (printed: 1)", "page 3"),
    ]
    assert blocks[0].text == page_text(doc.page(1)) and blocks[1].text == page_text(doc.page(3))
    assert blocks[0].token == blocks[1].token
    assert build_input(refs, ContextOptions()).parts == inp.parts  # same pages, same prompt
    other = kit.make_document(num_pages=3, texts=["a", "b", "c"])
    assert read_blocks(build_input([PageRef(other, 1)], ContextOptions()).parts[0].text)[
        0
    ].token != (blocks[0].token)


def test_text_pages_list_boxed_blocks(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2, blocks=True)
    text = page_text(doc.page(2))
    assert text.splitlines() == [
        "[box: 0.10, 0.10, 0.90, 0.20] Title 2",
        "[box: 0.10, 0.30, 0.90, 0.50] Page 2 body. Value 20 is reported.",
    ]
    assert page_text(doc.page(2), block_boxes=False) == "Page 2 body. Value 20 is reported."


def test_truncation_is_marked_and_reported(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2, texts=["x" * 500, "short"])
    refs = [PageRef(doc, 1), PageRef(doc, 2)]
    inp = build_input(refs, ContextOptions(max_chars_per_page=100))
    first = inp.parts[0]
    assert isinstance(first, TextPart)
    assert read_blocks(first.text)[0].text.endswith(TRUNCATION_MARK) and inp.truncated == [1]
    assert inp.pages == [(doc.id, 1), (doc.id, 2)]


def test_image_modality_gives_marker_then_image(kit: SimpleNamespace, renderer) -> None:
    doc = kit.make_document(num_pages=3)
    inp = build_input([PageRef(doc, p) for p in (1, 3)], ContextOptions(modality="image"), renderer)
    kinds = [type(p).__name__ for p in inp.parts]
    assert kinds == ["TextPart", "ImagePart", "TextPart", "ImagePart"]
    assert inp.parts[2].text.startswith("=== Page 3 (printed: 3) === [id ")  # type: ignore[union-attr]
    assert inp.est_tokens == estimate_tokens(inp.parts) and inp.composites == []


def test_both_modality_gives_text_and_image(kit: SimpleNamespace, renderer) -> None:
    doc = kit.make_document(num_pages=1)
    inp = build_input([PageRef(doc, 1)], ContextOptions(modality="both"), renderer)
    assert isinstance(inp.parts[0], TextPart) and "Value 10" in inp.parts[0].text
    assert isinstance(inp.parts[1], ImagePart)


def test_images_over_the_limit_are_stacked(kit: SimpleNamespace, renderer, tmp_path: Path) -> None:
    doc = kit.make_document(num_pages=5)
    options = ContextOptions(modality="image", max_images=2, composite_dir=tmp_path / "comp")
    inp = build_input([PageRef(doc, p) for p in range(1, 6)], options, renderer)
    images = [p for p in inp.parts if isinstance(p, ImagePart)]
    assert len(images) == 2
    assert [c["pages"] for c in inp.composites] == [[1, 2, 3], [4, 5]]
    with Image.open(images[0].path) as merged:
        assert merged.size == (60, 240)  # three 60x80 pages stacked
    captions = [p.text for p in inp.parts if isinstance(p, TextPart) and "stacks" in p.text]
    assert captions[0].startswith("(the image below stacks pages 1, 2, 3")


def test_without_renderer_images_fall_back_to_text(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    inp = build_input([PageRef(doc, 1)], ContextOptions(modality="image"), None)
    assert all(isinstance(p, TextPart) for p in inp.parts)
    assert "Value 10" in inp.parts[0].text  # type: ignore[union-attr]
    assert "no page renderer" in inp.notes["image_fallback"]


def test_a_page_that_fails_to_render_is_read_as_text(kit: SimpleNamespace, tmp_path: Path) -> None:
    doc = kit.make_document(num_pages=2)
    broken = kit.FakeRenderer(tmp_path / "r", fail_pages=[2])
    inp = build_input([PageRef(doc, 1), PageRef(doc, 2)], ContextOptions(modality="image"), broken)
    assert [type(p).__name__ for p in inp.parts] == ["TextPart", "ImagePart", "TextPart"]
    assert inp.notes["render_errors"][0]["page"] == 2


def test_unreadable_page_says_so(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=1, texts=[""])
    doc.pages[0].error = "encrypted"
    assert page_text(doc.page(1)) == "(this page could not be read: encrypted)"
