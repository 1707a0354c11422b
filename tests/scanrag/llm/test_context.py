"""The model's context window and the request's size, known before any call: from the model
entry, the server (``/models``, ``/props``), litellm's table, a refusal; counted by the
server's tokenizer, litellm or the estimate."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAIServer

from scanrag.llm import ChatRequest, ContextOverflowError, Message, ScriptedModel
from scanrag.llm.context import (
    estimate_request,
    server_root,
    window_from_models,
    window_from_props,
    window_in_error,
)
from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.gateway import LLMClient
from scanrag.llm.options import RetryPolicy
from scanrag.llm.scripted import clear_scripted, register_scripted


def _request(model: str, text: str = "one two three four", max_tokens: int = 16) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=[Message(role="system", content="sys"), Message(role="user", content=text)],
        max_tokens=max_tokens,
    )


def _entry(server: FakeOpenAIServer, **kw: object) -> ModelEntry:
    return ModelEntry(model="openai/fake-model", name="srv", api_base=server.api_base, **kw)


async def test_the_model_entry_names_the_window() -> None:
    client = LLMClient(endpoints={"e": ModelEntry(model="openai/x", name="e", context_window=900)})
    window = await client.context_window_of("e")
    assert window is not None and (window.tokens, window.source) == (
        900,
        "model entry context_window",
    )


async def test_an_embedded_model_knows_its_n_ctx() -> None:
    from scanrag.llm.local_models import get_local_spec

    window = await LLMClient().context_window_of("local/smollm2-135m")
    assert window is not None and window.tokens == get_local_spec("smollm2-135m").n_ctx
    assert "n_ctx" in window.source


async def test_a_vllm_style_server_reports_max_model_len() -> None:
    with FakeOpenAIServer(model_meta={"max_model_len": 4096}) as server:
        client = LLMClient(endpoints={"srv": _entry(server)})
        window = await client.context_window_of("srv")
    assert window is not None and window.tokens == 4096 and window.source.endswith("/models")


async def test_llama_server_reports_n_ctx_in_props() -> None:
    props = {"default_generation_settings": {"n_ctx": 2048}}
    with FakeOpenAIServer(props=props) as server:
        window = await LLMClient(endpoints={"srv": _entry(server)}).context_window_of("srv")
    assert window is not None and window.tokens == 2048 and window.source.endswith("/props")


async def test_litellm_table_for_a_known_provider_model() -> None:
    window = await LLMClient().context_window_of("openai/gpt-4o-mini")
    assert window is not None and window.tokens >= 100_000 and "litellm" in window.source


async def test_a_refusal_teaches_the_window_once() -> None:
    with FakeOpenAIServer(["overflow"], context_window=1500) as server:
        client = LLMClient(endpoints={"srv": _entry(server)}, retries=RetryPolicy(max_retries=0))
        assert await client.context_window_of("srv") is None  # this server tells nothing
        with pytest.raises(ContextOverflowError):
            await client.chat(_request("srv"))
        window = await client.context_window_of("srv")
    assert window is not None and window.tokens == 1500
    assert window.source == "the server's overflow message"


async def test_counting_with_the_servers_tokenizer() -> None:
    with FakeOpenAIServer(tokenize=True) as server:
        client = LLMClient(endpoints={"srv": _entry(server)})
        count = await client.count_prompt_tokens(_request("srv", "a b c d e"))
    assert server.tokenized == ["sys\na b c d e"]
    assert count.tokens == 6 + 16  # the pieces, plus 8 per message for the chat template
    assert count.method.startswith("server tokenizer /extras/tokenize/count")


async def test_a_request_is_counted_once_per_model_and_content() -> None:
    """Planning counts a prompt, the gateway may count it again before sending: the server's
    tokenizer is asked once per model and text."""
    with FakeOpenAIServer(tokenize=True) as server:
        client = LLMClient(endpoints={"srv": _entry(server)})
        first = await client.count_prompt_tokens(_request("srv", "a b c d e"))
        again = await client.count_prompt_tokens(_request("srv", "a b c d e"))
        other = await client.count_prompt_tokens(_request("srv", "a b c"))
    assert server.tokenized == ["sys\na b c d e", "sys\na b c"]
    assert first == again and other.tokens == first.tokens - 2


async def test_a_server_without_a_tokenizer_falls_back_on_the_estimate() -> None:
    with FakeOpenAIServer() as server:
        client = LLMClient(endpoints={"srv": _entry(server)})
        request = _request("srv", "x" * 400)
        count = await client.count_prompt_tokens(request)
    assert count.tokens == estimate_request(request) and not count.exact
    assert count.method.startswith("estimate")


async def test_scripted_models_count_and_refuse_like_a_server() -> None:
    clear_scripted()
    model = register_scripted("small", ScriptedModel(["fine"], context_window=10))
    client = LLMClient()
    window = await client.context_window_of("scripted/small")
    assert window is not None and window.tokens == 10
    count = await client.count_prompt_tokens(_request("scripted/small", "a b c", max_tokens=2))
    assert (count.tokens, count.exact) == (4, True)
    with pytest.raises(ContextOverflowError, match="context window of 10 tokens"):
        await model.chat(_request("scripted/small", "a b c d e f g h i", max_tokens=4))
    clear_scripted()


def test_parsing_helpers() -> None:
    assert window_in_error("This model's maximum context length is 8192 tokens.") == 8192
    assert window_in_error("Requested tokens (3000) exceed context window of 2048") == 2048
    assert window_in_error("the request is too long") is None
    assert server_root("http://h:8000/v1") == "http://h:8000"
    assert server_root("http://h:8000/api/v1/") == "http://h:8000/api"
    payload = {"data": [{"id": "a", "max_model_len": 10}, {"id": "b", "meta": {"n_ctx": 20}}]}
    assert window_from_models(payload, "b") == 20 and window_from_models(payload, "c") is None
    assert window_from_props({"n_ctx": 512}) == 512 and window_from_props([]) is None
