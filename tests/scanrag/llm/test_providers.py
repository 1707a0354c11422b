"""The litellm route, offline: ``mock_response``, message conversion, structured output."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from scanrag.llm import ChatRequest, ImagePart, Message, ModelError, TextPart
from scanrag.llm.providers import (
    LiteLLMProvider,
    prefix_of,
    provider_for,
    to_openai_messages,
    with_schema_instruction,
)

SCHEMA = {
    "title": "Answer",
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


@pytest.fixture(scope="module")
def litellm_provider() -> LiteLLMProvider:
    provider = provider_for("openai/gpt-4o-mini")
    assert isinstance(provider, LiteLLMProvider)
    return provider


def _png(path: Path, payload: bytes = b"\x89PNG\r\n\x1a\nfake") -> Path:
    path.write_bytes(payload)
    return path


def test_routing_by_prefix() -> None:
    assert prefix_of("local/smollm2-135m") == "local"
    assert prefix_of("gpt-4o-mini") is None
    assert type(provider_for("scripted/x")).__name__ == "ScriptedProvider"
    assert type(provider_for("gpt-4o-mini")).__name__ == "LiteLLMProvider"
    assert provider_for("local/qwen2.5-0.5b") is provider_for("anthropic/claude-3-5-haiku-latest")


def test_concurrency_key(litellm_provider: LiteLLMProvider) -> None:
    assert litellm_provider.concurrency_key("anthropic/claude-x") == "anthropic"
    assert litellm_provider.concurrency_key("gpt-4o-mini") == "openai"
    assert litellm_provider.concurrency_key("no-such-model-abc") == "no-such-model-abc"


def test_images_become_data_urls(tmp_path: Path) -> None:
    png = _png(tmp_path / "page-3.png")
    msg = Message(role="user", content=[TextPart(text="Read this page"), ImagePart.of(png)])
    (converted,) = to_openai_messages([msg], "openai/gpt-4o")
    text, image = converted["content"]
    assert text == {"type": "text", "text": "Read this page"}
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png.read_bytes()
    assert image["image_url"]["detail"] == "auto"


def test_missing_image_is_a_model_error(tmp_path: Path) -> None:
    msg = Message(role="user", content=[ImagePart.of(tmp_path / "gone.png")])
    with pytest.raises(ModelError, match="cannot read image"):
        to_openai_messages([msg], "openai/gpt-4o")


def test_schema_instruction_joins_the_system_message() -> None:
    plain = [{"role": "user", "content": "q"}]
    out = with_schema_instruction(plain, SCHEMA)
    assert out[0]["role"] == "system" and '"answer"' in out[0]["content"]
    with_system = [{"role": "system", "content": "You read PDFs."}, *plain]
    out = with_schema_instruction(with_system, SCHEMA)
    assert len(out) == 2 and out[0]["content"].startswith("You read PDFs.")


def test_structured_output_request(litellm_provider: LiteLLMProvider) -> None:
    msgs = [Message(role="user", content="q")]
    native = litellm_provider.build_kwargs(
        ChatRequest(model="gpt-4o-mini", messages=msgs, json_schema=SCHEMA, seed=3), 30
    )
    fmt = native["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"] == {"name": "Answer", "schema": SCHEMA}
    assert native["seed"] == 3 and native["timeout"] == 30
    assert native["max_retries"] == 0
    assert native["messages"] == [{"role": "user", "content": "q"}]

    fallback = litellm_provider.build_kwargs(
        ChatRequest(
            model="replicate/meta/llama-2-70b-chat", messages=msgs, json_schema=SCHEMA, seed=None
        ),
        30,
    )
    assert "response_format" not in fallback and "seed" not in fallback
    assert fallback["messages"][0]["role"] == "system"
    assert "JSON schema" in fallback["messages"][0]["content"]

    local = litellm_provider.build_kwargs(
        ChatRequest(model="local/smollm2-135m", messages=msgs, json_schema=SCHEMA), 30
    )
    assert local["response_format"]["json_schema"]["schema"] == SCHEMA


def test_extra_params_pass_through(litellm_provider: LiteLLMProvider) -> None:
    req = ChatRequest(
        model="openai/x", messages=[Message(role="user", content="q")], extra={"api_base": "u"}
    )
    assert litellm_provider.build_kwargs(req, 5)["api_base"] == "u"


# ----------------------------------------------------------------------------- end to end


def _mock(text: str, **kw: object) -> ChatRequest:
    return ChatRequest(
        model="gpt-4o-mini",
        messages=[Message(role="user", content="Say hi")],
        extra={"mock_response": text},
        **kw,  # type: ignore[arg-type]
    )


async def test_mock_response_cost_accounting(make_client) -> None:
    client = make_client()
    reader = await client.chat(_mock("hello there", stage="reader"))
    judge = await client.chat(_mock("yes", stage="judge.answer"))
    assert reader.text == "hello there" and not reader.cached
    assert reader.usage.calls == 1
    assert reader.usage.prompt_tokens > 0 and reader.usage.completion_tokens > 0
    assert reader.usage.cost_usd > 0
    snap = client.ledger.snapshot()
    assert snap["by_stage"]["reader"]["cost_usd"] == pytest.approx(reader.usage.cost_usd)
    assert snap["by_stage"]["judge.answer"]["cost_usd"] == pytest.approx(judge.usage.cost_usd)
    assert snap["by_model"]["gpt-4o-mini"]["calls"] == 2
    total = reader.usage.cost_usd + judge.usage.cost_usd
    assert snap["total"]["cost_usd"] == pytest.approx(total)


async def test_mock_response_is_cached_and_rerun_costs_nothing(make_client) -> None:
    first = await make_client().chat(_mock("cached text", stage="reader"))
    rerun = make_client()
    again = await rerun.chat(_mock("cached text", stage="reader"))
    assert again.cached and again.text == "cached text"
    assert again.usage.cost_usd == 0.0 and again.usage.cached_calls == 1
    assert rerun.ledger.snapshot()["saved_usd"] == pytest.approx(first.usage.cost_usd)


async def test_mock_rate_limit_is_retried_then_fails(make_client, sleeps) -> None:
    import litellm

    err = litellm.RateLimitError("quota", llm_provider="openai", model="gpt-4o-mini")
    client = make_client(max_retries=2)
    expected = r"rate limited \(HTTP 429\): quota; gave up after 3 attempt\(s\)"
    with pytest.raises(ModelError, match=expected):
        await client.chat(_mock(err))  # type: ignore[arg-type]
    assert sleeps.waits == [1.0, 2.0]


async def test_unknown_litellm_model_error_names_it(make_client, sleeps) -> None:
    req = ChatRequest(model="definitely-not-a-model", messages=[Message(role="user", content="q")])
    with pytest.raises(ModelError) as info:
        await make_client().chat(req)
    text = str(info.value)
    assert text.startswith("definitely-not-a-model: unknown model")
    assert "local/smollm2-135m" in text
    assert sleeps.waits == []


async def test_unknown_local_model_lists_known_names(make_client, sleeps) -> None:
    req = ChatRequest(model="local/nope", messages=[Message(role="user", content="q")])
    with pytest.raises(ModelError) as info:
        await make_client().chat(req)
    assert str(info.value) == (
        "local/nope: unknown local model; known local models: "
        "local/qwen2.5-0.5b, local/smollm2-135m"
    )
    assert sleeps.waits == []
