"""Turning MuPDF's tuples into a ``Page``: words, layout blocks, text and printed label.

This half of ingestion is pure Python on plain tuples (``RawPage`` from
``scanrag.documents.extract``); it never touches a PyMuPDF object. Words are
already normalized; Python slices them to ``(x1, y1, x2, y2, text)`` and, rarely, clamps a
glyph that pokes over the page edge. Models are filled from this trusted data without
validation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, TypeVar

from pydantic import BaseModel

from scanrag.documents.extract import PageOptions, RawPage, page_size, read_page
from scanrag.documents.labels import NO_LABEL, detect_printed_label
from scanrag.documents.records import BlockRow, EncodedPage, encode_page, encode_record
from scanrag.documents.tables import Table, TableMode, find_tables_fast
from scanrag.schemas import BBox, Block, Page, Word

T = TypeVar("T")
_FIVE = itemgetter(slice(0, 5))
_X1, _Y1, _X2, _Y2 = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)


def _clamp(value: float) -> float:
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else value


def _box(x1: float, y1: float, x2: float, y2: float) -> tuple[float, float, float, float]:
    """The rectangle clamped onto the unit square, corners ordered."""
    if 0.0 <= x1 <= x2 <= 1.0 and 0.0 <= y1 <= y2 <= 1.0:
        return x1, y1, x2, y2
    a, b = sorted((_clamp(x1), _clamp(x2)))
    c, d = sorted((_clamp(y1), _clamp(y2)))
    return a, c, b, d


def _blocks_inside(raw_blocks: Sequence[tuple[Any, ...]]) -> bool:
    return all(b[0] >= 0.0 and b[1] >= 0.0 and b[2] <= 1.0 and b[3] <= 1.0 for b in raw_blocks)


def normalize_words(
    raw_words: Sequence[tuple[Any, ...]], raw_blocks: Sequence[tuple[Any, ...]] | None = None
) -> list[Word]:
    """``(x1, y1, x2, y2, text)`` tuples inside [0, 1]; clamps only when something pokes out.

    A word's box lies inside its text block's box, so when ``raw_blocks`` (same TextPage) all
    sit on the page, the words do too and the check per word is skipped.
    """
    if not raw_words:
        return []
    words: list[Word] = list(map(_FIVE, raw_words))
    if raw_blocks is not None and _blocks_inside(raw_blocks):
        return words
    inside = (
        min(map(_X1, raw_words)) >= 0.0
        and min(map(_Y1, raw_words)) >= 0.0
        and max(map(_X2, raw_words)) <= 1.0
        and max(map(_Y2, raw_words)) <= 1.0
    )
    if inside:
        return words
    for i, (x1, y1, x2, y2, text) in enumerate(words):  # rebuild only the words that poke out
        if not (0.0 <= x1 <= x2 <= 1.0 and 0.0 <= y1 <= y2 <= 1.0):
            words[i] = (*_box(x1, y1, x2, y2), text)
    return words


_set_attr = object.__setattr__


def _plain_model(cls: type[BaseModel]) -> bool:
    """True when ``model_construct`` reduces to filling ``__dict__`` (no aliases, extras,
    private attributes or post-init hooks)."""
    return (
        not cls.__pydantic_post_init__
        and not cls.__private_attributes__
        and cls.model_config.get("extra") != "allow"
        and all(f.alias is None and f.validation_alias is None for f in cls.model_fields.values())
    )


# Blocks are built by the thousand per document; when ``model_construct`` would only fill
# ``__dict__`` (checked here, once), ``make_block`` does exactly that itself, ~3x faster.
_FAST_BLOCKS = _plain_model(BBox) and _plain_model(Block)
_FAST_PAGES = _plain_model(Page) and set(Page.model_fields) == {
    "number",
    "doc_page",
    "width",
    "height",
    "text",
    "words",
    "blocks",
    "text_source",
    "error",
}
_new = object.__new__
# Every field is set, so pydantic never adds to these sets (assignment re-adds a present name):
# one shared set per class is safe and saves two allocations per block.
_BBOX_FIELDS = set(BBox.model_fields)
_BLOCK_FIELDS = set(Block.model_fields)


def make_block(kind: str, x1: float, y1: float, x2: float, y2: float, text: str) -> Block:
    """A ``Block`` from trusted values (the box is clamped onto the unit square)."""
    if not (0.0 <= x1 <= x2 <= 1.0 and 0.0 <= y1 <= y2 <= 1.0):
        x1, y1, x2, y2 = _box(x1, y1, x2, y2)
    if not _FAST_BLOCKS:
        bbox = BBox.model_construct(x1=x1, y1=y1, x2=x2, y2=y2)
        return Block.model_construct(kind=kind, bbox=bbox, text=text)
    bbox = _new(BBox)
    _set_attr(bbox, "__dict__", {"x1": x1, "y1": y1, "x2": x2, "y2": y2})
    _set_attr(bbox, "__pydantic_fields_set__", _BBOX_FIELDS)
    _set_attr(bbox, "__pydantic_extra__", None)
    _set_attr(bbox, "__pydantic_private__", None)
    block = _new(Block)
    _set_attr(block, "__dict__", {"kind": kind, "bbox": bbox, "text": text})
    _set_attr(block, "__pydantic_fields_set__", _BLOCK_FIELDS)
    _set_attr(block, "__pydantic_extra__", None)
    _set_attr(block, "__pydantic_private__", None)
    return block


def block_row(kind: str, x1: float, y1: float, x2: float, y2: float, text: str) -> BlockRow:
    """A block as the page store keeps it (the box clamped like :func:`make_block`'s)."""
    if not (0.0 <= x1 <= x2 <= 1.0 and 0.0 <= y1 <= y2 <= 1.0):
        x1, y1, x2, y2 = _box(x1, y1, x2, y2)
    return (kind, x1, y1, x2, y2, text)


def build_layout(
    raw_blocks: Sequence[tuple[Any, ...]], tables: Sequence[Table]
) -> tuple[list[Block], str]:
    """Layout blocks in reading order and the page text (text blocks joined by newlines).

    Text blocks that belong to a detected table are replaced by one table block where the
    table's first member stood; their text still goes into the page text.
    """
    return _layout(raw_blocks, tables, make_block)


def layout_rows(
    raw_blocks: Sequence[tuple[Any, ...]], tables: Sequence[Table]
) -> tuple[list[BlockRow], str]:
    """:func:`build_layout` with each block as a stored row instead of a model."""
    return _layout(raw_blocks, tables, block_row)


def _layout(
    raw_blocks: Sequence[tuple[Any, ...]],
    tables: Sequence[Table],
    make: Callable[[str, float, float, float, float, str], T],
) -> tuple[list[T], str]:
    absorbed: dict[int, Table | None] = {}
    for table in tables:
        members = table[1]
        if members:
            absorbed[members[0]] = table
            for index in members[1:]:
                absorbed[index] = None
    blocks: list[T] = []
    texts: list[str] = []
    for index, raw in enumerate(raw_blocks):
        if raw[6] == 1:
            blocks.append(make("image", raw[0], raw[1], raw[2], raw[3], ""))
            continue
        text = raw[4].strip()
        if text:
            texts.append(text)
        if absorbed and index in absorbed:
            found = absorbed[index]
            if found is not None:
                (x1, y1, x2, y2), _, table_text = found
                blocks.append(make("table", x1, y1, x2, y2, table_text))
        elif text:
            blocks.append(make("text", raw[0], raw[1], raw[2], raw[3], text))
    # Tables found geometrically (full mode) may not coincide with any text block.
    for (x1, y1, x2, y2), members, table_text in tables:
        if not members:
            blocks.append(make("table", x1, y1, x2, y2, table_text))
    return blocks, "\n".join(texts)


def new_page(values: dict[str, Any]) -> Page:
    """A ``Page`` filled from trusted ``values`` (every field) without validation."""
    if not _FAST_PAGES:
        return Page.model_construct(**values)
    page = _new(Page)
    _set_attr(page, "__dict__", values)
    _set_attr(page, "__pydantic_fields_set__", set(values))
    _set_attr(page, "__pydantic_extra__", None)
    _set_attr(page, "__pydantic_private__", None)
    return page


def _tables(raw: RawPage, tables: TableMode) -> list[Table]:
    if raw.tables is not None:
        return raw.tables
    return find_tables_fast(raw.words, raw.blocks) if tables == "fast" else []


def _source(words: list[Word], raw: RawPage) -> str:
    return "none" if not words and raw.source == "text_layer" else raw.source


def assemble_page(raw: RawPage, number: int, label: str, tables: TableMode = "fast") -> Page:
    """Build the ``Page`` from what MuPDF read. ``label`` is the PDF page label ("" if none)."""
    words = normalize_words(raw.words, raw.blocks)
    blocks, text = build_layout(raw.blocks, _tables(raw, tables))
    return new_page(
        {
            "number": number,
            "doc_page": label or detect_printed_label(raw.blocks) or NO_LABEL,
            "width": raw.width,
            "height": raw.height,
            "text": text,
            "words": words,
            "blocks": blocks,
            "text_source": _source(words, raw),
            "error": raw.error,
        }
    )


def assemble_encoded(
    raw: RawPage, number: int, label: str, tables: TableMode = "fast"
) -> EncodedPage:
    """:func:`assemble_page` straight into the stored form (no models built): decoding it
    gives the page ``assemble_page`` builds, and encoding that page gives these bytes."""
    words = normalize_words(raw.words, raw.blocks)
    rows, text = layout_rows(raw.blocks, _tables(raw, tables))
    doc_page = label or detect_printed_label(raw.blocks) or NO_LABEL
    record = encode_record(doc_page, raw.width, raw.height, words, rows, raw.error)
    return number, _source(words, raw), text, record


def extract_page(fz_page: Any, number: int, label: str, options: PageOptions) -> Page:
    """Read and assemble one PyMuPDF page in one go."""
    return assemble_page(read_page(fz_page, options), number, label, options.tables)


def read_document_record(
    fz_doc: Any, index: int, label: str, options: PageOptions
) -> tuple[EncodedPage, str | None]:
    """:func:`read_document_page` in the stored form, with the page's error (or ``None``).
    The page store's writers (here and in ingestion workers) use this one function."""
    number = index + 1
    try:
        raw = read_page(fz_doc.load_page(index), options)
    except Exception as exc:  # one unreadable page must not cost the document
        width, height = page_size(fz_doc, index)
        page = failed_page(number, label, width, height, exc)
        return encode_page(page), page.error
    try:
        return assemble_encoded(raw, number, label, options.tables), raw.error
    except Exception as exc:
        page = failed_page(number, label, raw.width, raw.height, exc)
        return encode_page(page), page.error


def read_document_page(fz_doc: Any, index: int, label: str, options: PageOptions) -> Page:
    """Page ``index`` (0-based) of an open document, read and assembled; a page that cannot
    be read or assembled comes back as a page with ``error`` set (the reason as
    ``"Type: message"``). The same function runs here and in ingestion worker processes,
    which is what keeps their output identical."""
    number = index + 1
    try:
        raw = read_page(fz_doc.load_page(index), options)
    except Exception as exc:  # one unreadable page must not cost the document
        width, height = page_size(fz_doc, index)
        return failed_page(number, label, width, height, exc)
    try:
        return assemble_page(raw, number, label, options.tables)
    except Exception as exc:
        return failed_page(number, label, raw.width, raw.height, exc)


def failed_page(
    number: int, label: str, width: float, height: float, exc: BaseException | str
) -> Page:
    """A placeholder ``Page`` for a page that could not be read, with the reason recorded
    (an exception, or its ``"Type: message"`` text from a worker process)."""
    return Page(
        number=number,
        doc_page=label or NO_LABEL,
        width=width,
        height=height,
        text_source="none",
        error=exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}",
    )


_TEXT_SOURCES = frozenset({"text_layer", "ocr", "none"})
_BLOCK_KINDS = frozenset({"text", "image", "table", "drawing"})


def page_from_dict(data: dict[str, Any]) -> Page:
    """Rebuild a ``Page`` from its JSON form (as ``model_dump`` wrote it) without per-word
    validation: for our own cache files. Shape errors raise ``KeyError``/``TypeError``/
    ``ValueError``."""
    words = list(map(tuple, data["words"]))
    if words and set(map(len, words)) != {5}:
        raise ValueError(f"page {data['number']}: words must have 5 fields")
    blocks = []
    for block in data["blocks"]:
        box = block["bbox"]
        if block["kind"] not in _BLOCK_KINDS:
            raise ValueError(f"page {data['number']}: unknown block kind {block['kind']!r}")
        blocks.append(
            make_block(block["kind"], box["x1"], box["y1"], box["x2"], box["y2"], block["text"])
        )
    if data["text_source"] not in _TEXT_SOURCES:
        raise ValueError(f"page {data['number']}: unknown text source {data['text_source']!r}")
    return new_page(
        {
            "number": int(data["number"]),
            "doc_page": str(data["doc_page"]),
            "width": float(data["width"]),
            "height": float(data["height"]),
            "text": str(data["text"]),
            "words": words,
            "blocks": blocks,
            "text_source": data["text_source"],
            "error": data["error"],
        }
    )
