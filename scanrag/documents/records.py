"""The stored form of a page: what the page store keeps and ingestion workers send back.

A page is ``(number, text source, text, record)`` (:data:`EncodedPage`), ``record`` being the
rest of the page as compact JSON: ``[printed label, width, height, words, blocks, error]``
with words as ``[x1, y1, x2, y2, text]`` and blocks as ``[kind, x1, y1, x2, y2, text]``.
Decoding lives with the store (:func:`scanrag.documents.pagestore.decode_page`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from scanrag.schemas import Page

# number, text source, text, record (JSON bytes): one page as stored.
EncodedPage = tuple[int, str, str, bytes]
# A layout block as stored: kind, x1, y1, x2, y2, text.
BlockRow = tuple[str, float, float, float, float, str]

try:  # orjson ships with langgraph; several times faster than json for word boxes
    import orjson as _orjson

    def dumps(value: Any) -> bytes:
        return _orjson.dumps(value)

    loads: Any = _orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency

    def dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode("utf-8")

    loads = json.loads


def encode_record(
    doc_page: str,
    width: float,
    height: float,
    words: Sequence[Sequence[Any]],
    blocks: Sequence[Sequence[Any]],
    error: str | None,
) -> bytes:
    """The stored form of a page's fields besides number, text source and text."""
    return dumps([doc_page, width, height, words, blocks, error])


def encode_page(page: Page) -> EncodedPage:
    blocks = [(b.kind, b.bbox.x1, b.bbox.y1, b.bbox.x2, b.bbox.y2, b.text) for b in page.blocks]
    record = encode_record(page.doc_page, page.width, page.height, page.words, blocks, page.error)
    return page.number, page.text_source, page.text, record
