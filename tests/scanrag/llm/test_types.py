"""ChatRequest.cache_key: what splits the response cache and what does not."""

from __future__ import annotations

import os
from pathlib import Path

from scanrag.llm import ChatRequest, ImagePart, Message, TextPart
from scanrag.llm.types import image_content_id


def _with_image(path: Path, **kw: object) -> ChatRequest:
    content = [TextPart(text="What does the chart show?"), ImagePart.of(path)]
    return ChatRequest(
        model="openai/gpt-4o", messages=[Message(role="user", content=content)], **kw
    )  # type: ignore[arg-type]


def test_key_ignores_stage_and_prompt_hash() -> None:
    msgs = [Message(role="user", content="q")]
    a = ChatRequest(model="m/x", messages=msgs, stage="reader", prompt_hash="p1")
    b = ChatRequest(model="m/x", messages=msgs, stage="judge", prompt_hash="p2")
    assert a.cache_key() == b.cache_key()


def test_key_changes_with_model_and_params() -> None:
    msgs = [Message(role="user", content="q")]
    base = ChatRequest(model="m/x", messages=msgs)
    variants = [
        ChatRequest(model="m/y", messages=msgs),
        ChatRequest(model="m/x", messages=msgs, temperature=0.3),
        ChatRequest(model="m/x", messages=msgs, max_tokens=7),
        ChatRequest(model="m/x", messages=msgs, seed=1),
        ChatRequest(model="m/x", messages=msgs, json_schema={"type": "object"}),
        ChatRequest(model="m/x", messages=msgs, extra={"top_p": 0.5}),
        ChatRequest(model="m/x", messages=[Message(role="system", content="q")]),
    ]
    keys = {base.cache_key(), *(v.cache_key() for v in variants)}
    assert len(keys) == len(variants) + 1


def test_image_counts_by_content_not_path(tmp_path: Path) -> None:
    first = tmp_path / "a" / "p1.png"
    moved = tmp_path / "b" / "elsewhere.png"
    for p in (first, moved):
        p.parent.mkdir()
        p.write_bytes(b"page one pixels")
    assert _with_image(first).cache_key() == _with_image(moved).cache_key()

    moved.write_bytes(b"page two pixels")
    st = moved.stat()
    os.utime(moved, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _with_image(first).cache_key() != _with_image(moved).cache_key()


def test_image_content_id(tmp_path: Path) -> None:
    png = tmp_path / "x.png"
    png.write_bytes(b"abc")
    assert image_content_id(str(png)) == (
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert image_content_id(str(tmp_path / "none.png")).startswith("missing:")


def test_non_json_extra_values_still_hash() -> None:
    req = ChatRequest(
        model="m/x", messages=[Message(role="user", content="q")], extra={"e": ValueError("x")}
    )
    assert req.cache_key() == req.model_copy().cache_key()
