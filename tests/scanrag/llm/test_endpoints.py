"""Model entries: validation, what they keep out of files, and how they shape the cache key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scanrag.llm import ChatRequest, Message
from scanrag.llm.endpoints import EndpointError, ModelEntry, endpoint_label, entry_of
from scanrag.llm.gateway import LLMClient
from scanrag.llm.providers import default_output_mode, describe_model

SERVER = "http://127.0.0.1:8080/v1"


def _request(model: str = "reader-srv", **kw: object) -> ChatRequest:
    return ChatRequest(model=model, messages=[Message(role="user", content="q")], **kw)  # type: ignore[arg-type]


def test_entry_from_a_string_or_a_mapping() -> None:
    assert entry_of("openai/gpt-4o-mini") == ModelEntry(model="openai/gpt-4o-mini")
    entry = entry_of({"model": "openai/smol", "name": "smol", "api_base": SERVER + "/"})
    assert entry.ref == "smol" and entry.api_base == SERVER  # trailing slash dropped
    assert ModelEntry(model="openai/smol").ref == "openai/smol"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"api_key_env": "sk-proj-abcdefghijklmnopqrstuv"}, "name of an environment variable"),
        ({"api_base": "http://user:pw@127.0.0.1:8080/v1"}, "must not hold credentials"),
        ({"api_base": "127.0.0.1:8080/v1"}, "http(s) URL"),
        ({"extra_headers": {"Authorization": "Bearer abc"}}, "looks like a credential"),
        ({"temperature": -1}, "greater than or equal"),
        ({"output_mode": "grammar"}, "json_schema"),
        ({"surprise": 1}, "Extra inputs"),
    ],
)
def test_entry_rejects_bad_fields(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        ModelEntry(model="openai/smol", **fields)  # type: ignore[arg-type]


def test_in_process_models_take_no_server() -> None:
    with pytest.raises(ValidationError, match="run in this process"):
        ModelEntry(model="local/smollm2-135m", api_base=SERVER)
    ModelEntry(model="local/smollm2-135m", extra_body={"repeat_penalty": 1.0})  # sampling is fine


def test_key_comes_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = ModelEntry(model="openai/smol", api_base=SERVER, api_key_env="SMOL_KEY")
    monkeypatch.delenv("SMOL_KEY", raising=False)
    with pytest.raises(EndpointError, match="SMOL_KEY \\(api_key_env\\) is not set"):
        entry.api_key()
    monkeypatch.setenv("SMOL_KEY", "k-123")
    assert entry.api_key() == "k-123"
    # a self-hosted server named without a key gets a placeholder, never a provider's key
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-travel")
    assert ModelEntry(model="openai/smol", api_base=SERVER).api_key() == "not-needed"
    assert ModelEntry(model="openai/gpt-4o").api_key() is None  # litellm's own lookup


def test_header_values_expand_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = ModelEntry(model="openai/smol", extra_headers={"X-Api-Key": "${SMOL_HEADER}"})
    monkeypatch.setenv("SMOL_HEADER", "h-1")
    assert entry.headers() == {"X-Api-Key": "h-1"}
    monkeypatch.delenv("SMOL_HEADER")
    with pytest.raises(EndpointError, match="SMOL_HEADER is not set"):
        entry.headers()


def test_describe_keeps_credentials_out() -> None:
    entry = ModelEntry(
        model="hosted_vllm/qwen",
        api_base="https://gpu-box.lab:8000/v1",
        api_key_env="VLLM_KEY",
        extra_headers={"X-Token": "${SECRET_TOKEN}"},
        temperature=0.2,
        extra_body={"repetition_penalty": 1.05},
    )
    described = describe_model("qwen", entry)
    assert described == {
        "model": "hosted_vllm/qwen",
        "endpoint": "gpu-box.lab:8000/v1",
        "sampling": {"temperature": 0.2, "repetition_penalty": 1.05},
        "output_mode": "json_schema",
        "api_key_env": "VLLM_KEY",
        "header_names": ["X-Token"],
    }
    assert "SECRET_TOKEN" not in str(described) and "https" not in str(described)


def test_default_output_modes() -> None:
    def knows(model: str) -> bool:
        return model == "openai/gpt-4o-mini"

    def mode(**kw: object) -> str:
        return default_output_mode(ModelEntry(**kw), knows)  # type: ignore[arg-type]

    assert mode(model="local/smollm2-135m") == "json_schema"
    assert mode(model="hosted_vllm/qwen") == "json_schema"
    assert mode(model="openai/smol", api_base=SERVER) == "json_schema"
    assert mode(model="openai/gpt-4o-mini") == "json_schema"
    assert mode(model="anthropic/claude-x") == "prompt"
    assert mode(model="openai/smol", api_base=SERVER, output_mode="json_object") == "json_object"


def test_endpoint_label() -> None:
    assert endpoint_label("http://user:pw@Host.example:8000/v1/?q=1") == "host.example:8000/v1"


# ----------------------------------------------------------------------------- cache key


def _key(client: LLMClient, request: ChatRequest) -> str:
    return client.resolve(request).cache_key()


def test_cache_key_covers_server_model_and_sampling() -> None:
    base = ModelEntry(model="openai/smol", name="reader-srv", api_base=SERVER)

    def key_with(**changes: object) -> str:
        entry = base.model_copy(update=changes)
        return _key(LLMClient(endpoints={"reader-srv": entry}), _request())

    reference = key_with()
    different = {
        "api_base": "http://127.0.0.1:8081/v1",  # another port
        "model": "openai/smol-2",
        "temperature": 0.7,
        "top_p": 0.5,
        "max_tokens": 17,
        "seed": 3,
        "extra_body": {"repeat_penalty": 1.0},
        "output_mode": "json_object",
    }
    for field, value in different.items():
        assert key_with(**{field: value}) != reference, field
    path_moved = ModelEntry(
        model="openai/smol", name="reader-srv", api_base="http://127.0.0.1:8080/v2"
    )
    assert _key(LLMClient(endpoints={"reader-srv": path_moved}), _request()) != reference
    # what cannot change an answer does not change the key
    for field, value in {"api_key_env": "K", "timeout_s": 3.0, "max_concurrency": 2}.items():
        assert key_with(**{field: value}) == reference, field


def test_plain_calls_keep_their_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    plain = _request("openai/gpt-4o-mini")
    entry = ModelEntry(model="openai/gpt-4o-mini")
    client = LLMClient(endpoints={"openai/gpt-4o-mini": entry})
    assert _key(client, plain) == plain.cache_key() == _key(LLMClient(), plain)


def test_server_from_the_environment_is_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:8080/v1")
    first = _request("openai/smol").cache_key()
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:9/v1")
    assert _request("openai/smol").cache_key() != first


def test_entry_sampling_overrides_the_request() -> None:
    entry = ModelEntry(model="openai/smol", name="reader-srv", temperature=0.3, max_tokens=99)
    call = LLMClient(endpoints={"reader-srv": entry}).resolve(_request(max_tokens=10, seed=5))
    assert (call.model, call.temperature, call.max_tokens, call.seed) == ("openai/smol", 0.3, 99, 5)
    assert call.endpoint == entry


def test_variable_references_survive_scrubbing_and_reload() -> None:
    """Run folders are scrubbed by key name; a ``${VAR}`` header value is a reference, kept,
    so the saved config still validates on resume (the variable's value is never written)."""
    import yaml

    from scanrag.config import config_from_dict
    from scanrag.scrub import Scrubber

    data = {
        "name": "t",
        "datasets": [{"synthetic": {"docs": 1}}],
        "strategies": [{"name": "full_doc"}],
        "models": {
            "agents": {
                "reader": {
                    "model": "openai/smol",
                    "api_base": SERVER,
                    "api_key_env": "SMOL_API_KEY",
                    "extra_headers": {"X-Team-Token": "${TEAM_TOKEN}"},
                }
            }
        },
    }
    scrubber = Scrubber({"TEAM_TOKEN": "team-secret-value", "SMOL_API_KEY": "smol-secret-1"})
    saved = scrubber.text(config_from_dict(data).to_yaml())
    assert "${TEAM_TOKEN}" in saved and "SMOL_API_KEY" in saved
    reloaded = config_from_dict(yaml.safe_load(saved))
    (entry,) = reloaded.model_entries().values()
    assert entry.extra_headers == {"X-Team-Token": "${TEAM_TOKEN}"}
    assert entry.api_key_env == "SMOL_API_KEY"
    assert scrubber.data({"X-Team-Token": "literal-token-value"}) == {"X-Team-Token": "***"}
