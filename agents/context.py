"""Reader input: pages as text, images or both, behind explicit page markers.

Every page opens with ``=== Page 12 (printed: 10) === [id 3f9a2c1b7d4e]`` (global 1-based page,
then the printed label), prefixed with the document name when a prompt holds several documents,
and its text ends with ``=== end of page 12 === [id 3f9a2c1b7d4e]``. Page text is untrusted: the
id is derived from all the page text of the call (:mod:`scanrag.untrusted`), so no line of a PDF
can close its page early or pass for another page's marker, and the same pages always give the
same prompt. Text pages list their layout blocks with boxes (``[box: x1, y1, x2, y2] text``) so
a text-only reader can cite regions. When a model accepts fewer images than there are pages,
consecutive page images are stacked into composite images (recorded in
``ReaderInput.composites``). Token counts are estimates (characters / 4 plus a fixed cost per
image), good enough to decide a fallback before the provider refuses a prompt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scanrag.hashing import stable_hash
from scanrag.llm.types import ContentPart, ImagePart, TextPart
from scanrag.protocols import PageRenderer
from scanrag.schemas import Document, Page
from scanrag.untrusted import boundary, fence, open_line, safe_label

Modality = Literal["text", "image", "both"]
CHARS_PER_TOKEN = 4
TRUNCATION_MARK = " [... truncated]"


@dataclass(frozen=True)
class PageRef:
    """One page to show the reader; ``show_doc`` prefixes the marker with the file name."""

    document: Document
    number: int
    show_doc: bool = False

    @property
    def key(self) -> tuple[str, int]:
        return (self.document.id, self.number)


@dataclass(frozen=True)
class ContextOptions:
    modality: Modality = "text"
    max_images: int | None = None
    max_chars_per_page: int | None = None
    block_boxes: bool = True
    image_tokens: int = 800
    dpi: int | None = None
    composite_dir: Path | None = None


@dataclass
class ReaderInput:
    """Content parts for the user message and a record of how they were built."""

    parts: list[ContentPart]
    pages: list[tuple[str, int]]
    est_tokens: int
    truncated: list[int] = field(default_factory=list)
    composites: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)


def page_label(page: Page, doc_name: str | None = None) -> str:
    """``Page 12 (printed: 10)``, with the document name first when given."""
    label = page.doc_page if page.doc_page and page.doc_page != "none" else "none"
    prefix = f"{doc_name} — " if doc_name else ""
    return safe_label(f"{prefix}Page {page.number} (printed: {label})")


def page_marker(page: Page, doc_name: str | None = None, token: str | None = None) -> str:
    """The line that opens a page; with ``token`` it carries the call's block id."""
    label = page_label(page, doc_name)
    return open_line(label, token) if token else f"=== {label} ==="


def page_block(page: Page, text: str, token: str, doc_name: str | None = None) -> str:
    """A page's text between its opening marker and its closing line."""
    return fence(page_label(page, doc_name), text, token, end_label=f"page {page.number}")


def _fmt(value: float) -> str:
    return f"{value:.2f}"


def page_text(page: Page, max_chars: int | None = None, block_boxes: bool = True) -> str:
    """The text a reader sees for ``page``: boxed blocks when known, else the plain text."""
    if page.error and page.is_empty:
        return f"(this page could not be read: {page.error})"
    blocks = [b for b in page.blocks if b.text.strip()] if block_boxes else []
    if blocks:
        body = "\n".join(
            f"[box: {', '.join(_fmt(v) for v in b.bbox.as_list())}] {b.text.strip()}"
            for b in blocks
        )
    else:
        body = page.text.strip() or "(no text on this page)"
    if max_chars is not None and len(body) > max_chars:
        body = body[:max_chars].rstrip() + TRUNCATION_MARK
    return body


def estimate_tokens(parts: Sequence[ContentPart], image_tokens: int = 800) -> int:
    chars = sum(len(p.text) for p in parts if isinstance(p, TextPart))
    images = sum(1 for p in parts if isinstance(p, ImagePart))
    return math.ceil(chars / CHARS_PER_TOKEN) + images * image_tokens


def merge_images(paths: Sequence[Path], out_dir: Path, max_width: int = 1600) -> Path:
    """Stack page images top to bottom into one PNG (cached by the source paths)."""
    from PIL import Image

    key = stable_hash([str(p) for p in paths] + [max_width], length=20)
    target = out_dir / f"composite_{key}.png"
    if target.is_file():
        return target
    images = [Image.open(p).convert("RGB") for p in paths]
    width = min(max_width, max(im.width for im in images))
    scaled = [im.resize((width, max(1, round(im.height * width / im.width)))) for im in images]
    canvas = Image.new("RGB", (width, sum(im.height for im in scaled)), "white")
    top = 0
    for im in scaled:
        canvas.paste(im, (0, top))
        top += im.height
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp.png")
    canvas.save(tmp, format="PNG")
    tmp.replace(target)
    return target


def _groups(n: int, max_images: int | None) -> list[range]:
    if max_images is None or n <= max_images:
        return [range(i, i + 1) for i in range(n)]
    size = math.ceil(n / max_images)
    return [range(i, min(n, i + size)) for i in range(0, n, size)]


def _render(
    refs: Sequence[PageRef], renderer: PageRenderer | None, dpi: int | None, notes: dict[str, Any]
) -> list[Path | None]:
    paths: list[Path | None] = []
    for ref in refs:
        if renderer is None:
            notes["image_fallback"] = "no page renderer: pages given as text"
            paths.append(None)
            continue
        try:
            paths.append(Path(renderer.render(ref.document, ref.number, dpi)))
        except Exception as exc:  # a page that cannot be rendered is read as text
            notes.setdefault("render_errors", []).append(
                {"page": ref.number, "error": f"{type(exc).__name__}: {exc}"}
            )
            paths.append(None)
    return paths


def build_input(
    refs: Sequence[PageRef], options: ContextOptions, renderer: PageRenderer | None = None
) -> ReaderInput:
    """Content parts for ``refs`` in order, with markers, images and truncation applied."""
    notes: dict[str, Any] = {}
    pages = [ref.document.page(ref.number) for ref in refs]
    want_images = options.modality in ("image", "both")
    paths = _render(refs, renderer, options.dpi, notes) if want_images else [None] * len(refs)
    parts: list[ContentPart] = []
    truncated: list[int] = []
    composites: list[dict[str, Any]] = []
    image_idx = [i for i, p in enumerate(paths) if p is not None]
    groups = _groups(len(image_idx), options.max_images)
    group_of = {image_idx[i]: g for g, rng in enumerate(groups) for i in rng}
    emitted: set[int] = set()
    texts = [
        None
        if options.modality == "image" and path is not None
        else page_text(page, options.max_chars_per_page, options.block_boxes)
        for page, path in zip(pages, paths, strict=True)
    ]
    token = boundary(*(t for t in texts if t is not None))
    for i, (ref, page) in enumerate(zip(refs, pages, strict=True)):
        doc_name = ref.document.name if ref.show_doc else None
        has_image = paths[i] is not None
        text = texts[i]
        if text is None:
            parts.append(TextPart(text=page_marker(page, doc_name, token)))
        else:
            if text.endswith(TRUNCATION_MARK):
                truncated.append(page.number)
            parts.append(TextPart(text=page_block(page, text, token, doc_name)))
        if not has_image:
            continue
        group = group_of[i]
        members = [image_idx[k] for k in groups[group]]
        if len(members) == 1:
            parts.append(ImagePart.of(paths[i]))  # type: ignore[arg-type]
        elif i == members[-1] and group not in emitted:
            emitted.add(group)
            parts.extend(_composite(refs, pages, paths, members, options, composites))
    est = estimate_tokens(parts, options.image_tokens)
    return ReaderInput(parts, [r.key for r in refs], est, truncated, composites, notes)


def _composite(
    refs: Sequence[PageRef],
    pages: Sequence[Page],
    paths: Sequence[Path | None],
    members: list[int],
    options: ContextOptions,
    record: list[dict[str, Any]],
) -> list[ContentPart]:
    sources = [paths[m] for m in members]
    assert all(p is not None for p in sources)
    first = sources[0]
    assert first is not None
    out_dir = options.composite_dir or first.parent
    merged = merge_images([p for p in sources if p is not None], out_dir)
    numbers = [pages[m].number for m in members]
    record.append({"pages": numbers, "doc_id": refs[members[0]].document.id, "path": str(merged)})
    return [TextPart(text=composite_caption(numbers)), ImagePart.of(merged)]


def composite_caption(numbers: Sequence[int]) -> str:
    return f"(the image below stacks pages {', '.join(map(str, numbers))} from top to bottom)"
