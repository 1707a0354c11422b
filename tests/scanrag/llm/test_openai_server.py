"""The gateway against a real HTTP server: the OpenAI-compatible fake on 127.0.0.1.

Each test starts its own server (port 0) and stops it. These go through litellm and the
OpenAI SDK exactly as a self-hosted vLLM, SGLang, Ollama or llama.cpp server would be reached.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest
from fake_openai import PROSE

from scanrag.llm import ChatRequest, ImagePart, Message, ModelError, TextPart
from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.gateway import LLMClient
from scanrag.llm.options import RetryPolicy

SCHEMA = {
    "title": "Answer",
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


def _entry(server, **kw) -> ModelEntry:  # type: ignore[no-untyped-def]
    return ModelEntry(model="openai/fake-model", name="srv", api_base=server.api_base, **kw)


def _ask(content: str | list = "What is on page 3?", **kw) -> ChatRequest:  # type: ignore[no-untyped-def]
    messages = [Message(role="system", content="Be brief."), Message(role="user", content=content)]
    return ChatRequest(model="srv", messages=messages, **kw)


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again: nothing listens there


# ----------------------------------------------------------------------------- request shape


async def test_text_only_content_is_a_plain_string(fake_server, make_client) -> None:
    server = fake_server()
    client = make_client(endpoints={"srv": _entry(server)})
    parts = [TextPart(text="Page 1: revenue 5."), TextPart(text="Question: revenue?")]
    await client.chat(_ask(parts))
    (body,) = server.requests
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Page 1: revenue 5.\nQuestion: revenue?"},
    ]


async def test_images_keep_content_parts(fake_server, make_client, tmp_path: Path) -> None:
    image = tmp_path / "page.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    server = fake_server()
    client = make_client(endpoints={"srv": _entry(server)})
    await client.chat(_ask([TextPart(text="What is shown?"), ImagePart.of(image)]))
    content = server.requests[0]["messages"][1]["content"]
    assert [p["type"] for p in content] == ["text", "image_url"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_entry_settings_reach_the_server(fake_server, make_client, monkeypatch) -> None:
    monkeypatch.setenv("SRV_KEY", "key-from-env")
    monkeypatch.setenv("SRV_HEADER", "header-from-env")
    server = fake_server()
    entry = _entry(
        server,
        api_key_env="SRV_KEY",
        extra_headers={"X-Team-Token": "${SRV_HEADER}", "X-Route": "blue"},
        temperature=0.0,
        top_p=0.9,
        max_tokens=33,
        seed=7,
        extra_body={"repeat_penalty": 1.0, "top_k": 1},
    )
    client = make_client(endpoints={"srv": entry})
    await client.chat(_ask(max_tokens=500))
    body, headers = server.requests[0], server.headers[0]
    assert body["model"] == "fake-model"
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.0,
        0.9,
        33,
        7,
    )
    assert (body["repeat_penalty"], body["top_k"]) == (1.0, 1)
    assert headers["authorization"] == "Bearer key-from-env"
    assert headers["x-team-token"] == "header-from-env" and headers["x-route"] == "blue"


async def test_provider_key_never_goes_to_a_self_hosted_server(
    fake_server, make_client, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-0123456789")
    server = fake_server()
    await make_client(endpoints={"srv": _entry(server)}).chat(_ask())
    assert server.headers[0]["authorization"] == "Bearer not-needed"


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "prompt"])
async def test_output_modes(fake_server, make_client, mode: str) -> None:
    server = fake_server()
    client = make_client(endpoints={"srv": _entry(server, output_mode=mode)})
    response = await client.chat(_ask(json_schema=SCHEMA))
    body = server.requests[0]
    system = body["messages"][0]["content"]
    if mode == "json_schema":
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "Answer", "schema": SCHEMA},
        }
        assert system == "Be brief."
    elif mode == "json_object":  # the schema rides along where llama.cpp's servers read it
        assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
        assert system == "Be brief."
    else:
        assert "response_format" not in body
        assert system.startswith("Be brief.") and '"answer"' in system
    expected = json.dumps({"answer": "fake answer"}) if mode != "prompt" else "ok"
    assert response.text == expected


async def test_two_entries_two_servers(fake_server, make_client) -> None:
    reader, judge = fake_server(), fake_server()
    client = make_client(
        endpoints={
            "reader-srv": ModelEntry(model="openai/m", name="reader-srv", api_base=reader.api_base),
            "judge-srv": ModelEntry(model="openai/m", name="judge-srv", api_base=judge.api_base),
        }
    )
    await client.chat(_ask().model_copy(update={"model": "reader-srv"}))
    await client.chat(_ask().model_copy(update={"model": "judge-srv", "stage": "judge"}))
    await client.chat(_ask("again").model_copy(update={"model": "judge-srv"}))
    assert (len(reader.requests), len(judge.requests)) == (1, 2)
    assert set(client.ledger.by_model()) == {"reader-srv", "judge-srv"}


async def test_max_concurrency_per_entry(fake_server, make_client) -> None:
    server = fake_server(delay_s=0.2)
    client = make_client(endpoints={"srv": _entry(server, max_concurrency=1)}, cache_dir=None)
    await asyncio.gather(*(client.chat(_ask(f"q{i}")) for i in range(3)))
    assert len(server.requests) == 3 and server.max_in_flight == 1


# ----------------------------------------------------------------------------- cache


async def test_dead_endpoint_with_a_warm_cache_is_a_miss(fake_server, make_client) -> None:
    server = fake_server()
    warm = make_client(endpoints={"srv": _entry(server)})
    first = await warm.chat(_ask())
    again = await warm.chat(_ask())
    assert again.cached and again.text == first.text and len(server.requests) == 1

    dead = ModelEntry(
        model="openai/fake-model", name="srv", api_base=f"http://127.0.0.1:{_dead_port()}/v1"
    )
    client = make_client(endpoints={"srv": dead}, max_retries=1)
    with pytest.raises(ModelError) as info:
        await client.chat(_ask())
    assert "gave up after 2 attempt(s)" in str(info.value)
    assert client.ledger.records()[0].cached is False


async def test_a_refused_connection_says_so_not_http_500(make_client) -> None:
    port = _dead_port()
    dead = ModelEntry(model="openai/fake-model", name="srv", api_base=f"http://127.0.0.1:{port}/v1")
    client = make_client(endpoints={"srv": dead}, max_retries=0)
    with pytest.raises(ModelError) as info:
        await client.chat(_ask())
    message = str(info.value)
    assert f"connection refused by 127.0.0.1:{port} (is the server running?)" in message
    assert "HTTP 500" not in message and "server error" not in message


async def test_a_host_that_does_not_resolve_is_a_dns_failure(make_client) -> None:
    entry = ModelEntry(
        model="openai/fake-model", name="srv", api_base="http://no-such-host.invalid:8000/v1"
    )
    client = make_client(endpoints={"srv": entry}, max_retries=0)
    with pytest.raises(ModelError) as info:
        await client.chat(_ask())
    assert "DNS lookup failed for no-such-host.invalid:8000" in str(info.value)
    assert "HTTP 500" not in str(info.value)


async def test_dead_environment_server_is_a_miss(fake_server, make_client, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "placeholder")
    server = fake_server()
    monkeypatch.setenv("OPENAI_API_BASE", server.api_base)
    request = ChatRequest(model="openai/fake-model", messages=[Message(role="user", content="q")])
    client = make_client(max_retries=0)
    await client.chat(request)
    assert (await client.chat(request)).cached
    monkeypatch.setenv("OPENAI_API_BASE", f"http://127.0.0.1:{_dead_port()}/v1")
    with pytest.raises(ModelError, match="gave up after 1 attempt"):
        await client.chat(request)


# ----------------------------------------------------------------------------- fault modes


async def test_retry_after_is_honoured(fake_server, make_client, sleeps) -> None:
    server = fake_server("rate_limit", retry_after="2")
    client = make_client(endpoints={"srv": _entry(server)}, backoff_base_s=0.5)
    response = await client.chat(_ask())
    assert response.text == "ok" and len(server.requests) == 2
    assert sleeps.waits == [2.0]  # the server's 2 s, not the 0.5 s backoff


async def test_retry_after_in_real_time(fake_server) -> None:
    server = fake_server("rate_limit", retry_after="1")
    retries = RetryPolicy(jitter=0.0, backoff_base_s=0.1)
    client = LLMClient(endpoints={"srv": _entry(server)}, retries=retries)
    await client.chat(_ask())
    assert server.arrivals[1] - server.arrivals[0] >= 1.0


async def test_retry_after_is_capped(fake_server, make_client, sleeps) -> None:
    server = fake_server(default="rate_limit", retry_after="3600")
    client = make_client(endpoints={"srv": _entry(server)}, max_retries=2, retry_after_max_s=5)
    with pytest.raises(ModelError) as info:
        await client.chat(_ask())
    assert sleeps.waits == [5.0, 5.0]
    message = str(info.value)
    assert message == (
        f"openai/fake-model at 127.0.0.1:{server.port}/v1: rate limited (HTTP 429): Rate limit "
        "reached, slow down; gave up after 3 attempt(s) (max_retries=2, timeout_s=120, server "
        "asked to wait 3600 s, capped at 5 s)"
    )


async def test_server_error_is_one_clean_line(fake_server, make_client) -> None:
    server = fake_server(default="server_error")
    client = make_client(endpoints={"srv": _entry(server)}, max_retries=1)
    with pytest.raises(ModelError) as info:
        await client.chat(_ask())
    message = str(info.value)
    assert message == (
        f"openai/fake-model at 127.0.0.1:{server.port}/v1: server error (HTTP 500): the model "
        "crashed; gave up after 2 attempt(s) (max_retries=1, timeout_s=120)"
    )
    assert "\n" not in message and "Error:" not in message and "Exception" not in message
    assert len(server.requests) == 2


async def test_hang_past_the_timeout_states_the_limit(fake_server, make_client) -> None:
    server = fake_server(default="hang", hang_s=10)
    client = make_client(endpoints={"srv": _entry(server, timeout_s=0.5)}, max_retries=1)
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        await client.chat(_ask())
    assert time.monotonic() - started < 5
    assert "timed out after 0.5 s (timeout_s); gave up after 2 attempt(s)" in str(info.value)
    assert "timeout_s=0.5" in str(info.value)


async def test_a_body_that_is_not_json_is_not_retried(fake_server, make_client) -> None:
    server = fake_server(default="not_json")
    client = make_client(endpoints={"srv": _entry(server)})
    with pytest.raises(ModelError, match="invalid response from LLM endpoint") as info:
        await client.chat(_ask())
    assert len(server.requests) == 1
    assert "\n" not in str(info.value)


async def test_empty_content_and_prose_come_back_as_text(fake_server, make_client) -> None:
    server = fake_server("empty", "prose", "length")
    client = make_client(endpoints={"srv": _entry(server)}, cache_dir=None)
    empty = await client.chat(_ask(json_schema=SCHEMA))
    prose = await client.chat(_ask(json_schema=SCHEMA))
    cut = await client.chat(_ask(json_schema=SCHEMA))
    assert (empty.text, empty.finish_reason) == ("", "stop")
    assert prose.text == PROSE  # parsing decides what prose is worth, not the transport
    assert cut.finish_reason == "length"
