"""The embedded llama-cpp provider: message handling, and smollm2-135m end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from scanrag.llm import ChatRequest, ContextOverflowError, ImagePart, Message, ModelError, TextPart
from scanrag.llm.local import _constraints, _flatten, _schema_of, json_schema_grammar

SMOL = "local/smollm2-135m"


def test_flatten_joins_text_parts() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": None},
    ]
    assert _flatten(messages, SMOL) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "a\nb"},
        {"role": "assistant", "content": ""},
    ]


def test_flatten_refuses_images() -> None:
    msg = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]}
    with pytest.raises(ModelError, match="text-only"):
        _flatten([msg], SMOL)


def test_response_format_translation() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    openai_style = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    assert _schema_of(openai_style) == (True, schema)
    assert _schema_of({"type": "json_object", "schema": schema}) == (True, schema)
    assert _schema_of({"type": "json_object"}) == (True, None)
    assert _schema_of({"type": "text"}) == (False, None)
    assert _schema_of(None) == (False, None)


def test_schema_grammar_keeps_control_characters_out_of_strings() -> None:
    pytest.importorskip("llama_cpp")
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    grammar = json_schema_grammar(schema)
    assert grammar is json_schema_grammar(dict(schema))  # cached
    rules = grammar._grammar
    assert 'char ::= [^"\\\\\\x7F\\x00-\\x1F]' in rules
    assert _constraints({"type": "json_schema", "json_schema": {"schema": schema}}, SMOL) == {
        "grammar": grammar
    }
    assert _constraints({"type": "json_object"}, SMOL) == {
        "response_format": {"type": "json_object"}
    }
    assert _constraints(None, SMOL) == {}


# ----------------------------------------------------------------------------- real model


class PageAnswer(BaseModel):
    answer: str = Field(max_length=40)
    page: int


def _ask(text: str, **kw: object) -> ChatRequest:
    return ChatRequest(model=SMOL, messages=[Message(role="user", content=text)], **kw)  # type: ignore[arg-type]


@pytest.mark.model
async def test_smollm2_plain_text(make_client) -> None:
    client = make_client()
    response = await client.chat(
        _ask("What is the capital of France?", max_tokens=16, stage="reader")
    )
    assert response.text.strip()
    assert response.model == SMOL
    assert 0 < response.usage.completion_tokens <= 16
    assert response.usage.prompt_tokens > 5
    assert response.usage.cost_usd == 0.0
    assert client.ledger.snapshot()["by_stage"]["reader"]["calls"] == 1
    again = await make_client().chat(_ask("What is the capital of France?", max_tokens=16))
    assert again.cached and again.text == response.text


@pytest.mark.model
async def test_smollm2_json_schema(make_client) -> None:
    text = (
        "Page 4 of the report says: the plant produced 120 tonnes in 2021.\n"
        "Question: how many tonnes were produced in 2021, and on which page is it stated?"
    )
    request = _ask(text, max_tokens=80, json_schema=PageAnswer.model_json_schema())
    response = await make_client().chat(request)
    assert response.finish_reason == "stop"
    parsed = PageAnswer.model_validate(json.loads(response.text))  # strict JSON, valid schema
    assert isinstance(parsed.page, int)


@pytest.mark.model
async def test_smollm2_refuses_images(make_client, sleeps, tmp_path: Path) -> None:
    png = tmp_path / "p.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    content = [TextPart(text="Describe"), ImagePart.of(png)]
    request = ChatRequest(model=SMOL, messages=[Message(role="user", content=content)])
    with pytest.raises(ModelError, match="is text-only") as info:
        await make_client().chat(request)
    assert not isinstance(info.value, ContextOverflowError)
    assert sleeps.waits == []


@pytest.mark.model
async def test_smollm2_context_overflow(make_client, sleeps) -> None:
    request = _ask("page text " * 5000, max_tokens=8)
    with pytest.raises(ContextOverflowError, match="exceeds the context window of 8192"):
        await make_client().chat(request)
    assert sleeps.waits == []


@pytest.mark.model
def test_smollm2_a_call_cancelled_before_it_starts_is_skipped() -> None:
    import threading

    from scanrag.llm.local import RUNTIME

    messages = [{"role": "user", "content": "Count from 1 to 500, separated by commas."}]
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ModelError, match="cancelled before it started"):
        RUNTIME.generate("smollm2-135m", messages, max_tokens=8, cancel=cancel)
    again = RUNTIME.generate("smollm2-135m", messages, max_tokens=4)
    assert again.completion_tokens == 4


async def test_a_cancelled_call_tells_the_worker_thread_to_stop(monkeypatch) -> None:
    import asyncio
    import threading

    from scanrag.llm.local import LocalResult, LocalRuntime

    seen: list[threading.Event] = []

    def generate(self, name, messages, *, cancel=None, **kw):  # stands in for llama-cpp
        seen.append(cancel)
        reason = "cancelled" if cancel.wait(10) else "timeout"
        return LocalResult(text="", prompt_tokens=1, completion_tokens=0, finish_reason=reason)

    monkeypatch.setattr(LocalRuntime, "generate", generate)
    task = asyncio.create_task(LocalRuntime().agenerate("m", [], max_tokens=4))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(seen) == 1 and seen[0].is_set()
