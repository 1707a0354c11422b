"""Providers behind the gateway, chosen by the model string's prefix.

``scripted/<name>`` goes to a registered :class:`ScriptedModel`; every other model string goes
to litellm (``local/<name>`` reaches the embedded llama-cpp models through litellm's custom
provider mechanism). New prefixes plug in with :func:`register_provider`.
"""

from __future__ import annotations

import base64
import json
import logging
import mimetypes
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from scanrag.llm.endpoints import EndpointError, ModelEntry, OutputMode
from scanrag.llm.scripted import get_scripted
from scanrag.llm.types import ChatRequest, ChatResponse, ImagePart, Message, ModelError, TextPart
from scanrag.schemas import Usage


class Provider(Protocol):
    """One way of answering chat requests. ``cacheable`` says whether the gateway caches it."""

    cacheable: bool

    def concurrency_key(self, model: str) -> str: ...

    def call_timeout(self, model: str, timeout_s: float) -> float | None:
        """The gateway's per-call timeout for ``model``, or ``None`` when a call cannot be
        interrupted (timing it out would only orphan work that keeps running)."""
        ...

    async def complete(self, request: ChatRequest, timeout_s: float) -> ChatResponse: ...


def prefix_of(model: str) -> str | None:
    head, sep, _ = model.partition("/")
    return head if sep else None


_FACTORIES: dict[str, Callable[[], Provider]] = {}
_INSTANCES: dict[str, Provider] = {}
_LOCK = threading.Lock()
DEFAULT = "*"


def register_provider(prefix: str, factory: Callable[[], Provider]) -> None:
    """Route ``<prefix>/...`` model strings to the provider ``factory()`` builds (once)."""
    with _LOCK:
        _FACTORIES[prefix] = factory
        _INSTANCES.pop(prefix, None)


def provider_prefixes() -> list[str]:
    """The prefixes routed to a provider of their own (the rest go to litellm)."""
    with _LOCK:
        return sorted(p for p in _FACTORIES if p != DEFAULT)


def provider_for(model: str) -> Provider:
    prefix = prefix_of(model)
    key = prefix if prefix in _FACTORIES else DEFAULT
    with _LOCK:
        if key not in _INSTANCES:
            _INSTANCES[key] = _FACTORIES[key]()
        return _INSTANCES[key]


# ----------------------------------------------------------------------------- scripted


class ScriptedProvider:
    """``scripted/<name>``: the :class:`ScriptedModel` registered under ``name``."""

    cacheable = False

    def concurrency_key(self, model: str) -> str:
        return "scripted"

    def call_timeout(self, model: str, timeout_s: float) -> float | None:
        return timeout_s

    async def complete(self, request: ChatRequest, timeout_s: float) -> ChatResponse:
        name = request.model.partition("/")[2]
        return await get_scripted(name).chat(request)


# ----------------------------------------------------------------------------- litellm

SCHEMA_INSTRUCTION = (
    "Answer with one JSON object and nothing else (no prose, no code fences). "
    "It must validate against this JSON schema:\n{schema}"
)


def image_data_url(part: ImagePart, model: str) -> str:
    path = Path(part.path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(model, f"cannot read image {path}: {exc.strerror or exc}") from exc
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def to_openai_messages(messages: list[Message], model: str) -> list[dict[str, Any]]:
    """Our messages in the OpenAI chat format litellm takes.

    Text-only content is one plain string (text parts joined by newlines, as the in-process
    models join them): many self-hosted servers accept nothing else. Only a message with an
    image becomes a list of content parts, its images as data URLs.
    """
    out: list[dict[str, Any]] = []
    for msg in messages:
        if isinstance(msg.content, str) or all(isinstance(p, TextPart) for p in msg.content):
            out.append({"role": msg.role, "content": msg.text})
            continue
        parts: list[dict[str, Any]] = []
        for part in msg.content:
            if isinstance(part, ImagePart):
                url = {"url": image_data_url(part, model), "detail": part.detail}
                parts.append({"type": "image_url", "image_url": url})
            else:
                parts.append({"type": "text", "text": part.text})
        out.append({"role": msg.role, "content": parts})
    return out


def with_schema_instruction(
    messages: list[dict[str, Any]], schema: dict[str, Any]
) -> list[dict[str, Any]]:
    """Ask for schema-shaped JSON in the system message (for providers without JSON mode)."""
    note = SCHEMA_INSTRUCTION.format(schema=json.dumps(schema, sort_keys=True))
    if messages and messages[0]["role"] == "system" and isinstance(messages[0]["content"], str):
        first = {"role": "system", "content": f"{messages[0]['content']}\n\n{note}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


# Providers that serve open models on your own machines and accept an OpenAI-style
# ``response_format`` with a JSON schema (vLLM, Ollama; SGLang and TGI through ``openai/``).
SELF_HOSTED_PREFIXES = frozenset(
    {"hosted_vllm", "ollama", "ollama_chat", "openai_like", "lm_studio"}
)


def default_output_mode(entry: ModelEntry, supports_schema: Any = None) -> OutputMode:
    """How a model is asked for JSON when its entry does not say.

    ``json_schema`` for the in-process models, for any server named by ``api_base`` (vLLM,
    SGLang, Ollama and llama.cpp's ``llama-server`` accept it) and for the self-hosted
    providers; otherwise ``json_schema`` when litellm knows the model supports it, else
    ``prompt`` (the schema goes into the system message). llama-cpp-python's own server wants
    ``json_object`` (it reads the schema from ``response_format.schema``).
    """
    if entry.output_mode is not None:
        return entry.output_mode
    prefix = entry.prefix
    if prefix in ("local", "scripted") or prefix in SELF_HOSTED_PREFIXES:
        return "json_schema"
    if entry.base_url() is not None:
        return "json_schema"
    if supports_schema is None:
        return "prompt"
    try:
        return "json_schema" if supports_schema(model=entry.model) else "prompt"
    except Exception:  # a model litellm does not know
        return "prompt"


def _litellm_supports_schema(model: str) -> bool:
    return bool(_setup_litellm().supports_response_schema(model=model))


def describe_model(ref: str, entry: ModelEntry | None = None) -> dict[str, Any]:
    """What a run manifest records about one model a role uses: the model string, the server
    (host and path, never credentials), sampling and the output mode it will be asked in."""
    entry = entry or ModelEntry(model=ref)
    return entry.describe(default_output_mode(entry, _litellm_supports_schema))


def response_format_for(mode: OutputMode, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` of an output mode (``None``: ask in the prompt only).

    ``json_object`` carries the schema under ``schema``, the form llama.cpp's servers turn
    into a grammar; other servers answer plain JSON and the caller's prompt gives the shape.
    """
    if mode == "json_schema":
        name = str(schema.get("title") or "response")
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _setup_litellm() -> Any:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm

    # litellm's response types trigger a harmless pydantic warning on first use
    warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return litellm


class LiteLLMProvider:
    """Any model string litellm accepts, plus ``local/<name>`` (embedded llama-cpp models)."""

    cacheable = True

    def __init__(self) -> None:
        self.litellm = _setup_litellm()
        self._local_installed: set[str] = set()
        self._lock = threading.Lock()

    def call_timeout(self, model: str, timeout_s: float) -> float | None:
        # ``local/`` models run in this process (llama-cpp on the CPU): a generation cannot be
        # stopped midway, so a timeout would leave it holding the model while the retry waits
        # behind it. ``max_tokens`` bounds such a call instead.
        return None if prefix_of(model) == "local" else timeout_s

    def concurrency_key(self, model: str) -> str:
        prefix = prefix_of(model)
        if prefix:
            return prefix
        try:
            return str(self.litellm.get_llm_provider(model)[1])
        except Exception:  # an unknown bare name: its call will fail with a clear error
            return model

    def _ensure_local(self, model: str) -> None:
        from scanrag.llm.local_models import LOCAL_MODELS

        with self._lock:
            if not set(LOCAL_MODELS) <= self._local_installed:
                from scanrag.llm import local_litellm

                local_litellm.install()
                self._local_installed = set(LOCAL_MODELS)

    def output_mode(self, request: ChatRequest) -> OutputMode:
        entry = request.endpoint or ModelEntry(model=request.model)
        return default_output_mode(entry, self.litellm.supports_response_schema)

    def build_kwargs(self, request: ChatRequest, timeout_s: float) -> dict[str, Any]:
        """litellm's keyword arguments: messages, sampling (no temperature when the request
        sets none; the token cap under the request's ``token_param``), output format, and the
        entry's server, key, headers and body extras."""
        messages = to_openai_messages(request.messages, request.model)
        kwargs: dict[str, Any] = {
            "model": request.model,
            request.token_param: request.max_tokens,
            "timeout": timeout_s,
            "drop_params": True,
            "max_retries": 0,  # the gateway retries; the provider SDK must not retry as well
        }
        if request.temperature is not None:  # None: the server's own default
            kwargs["temperature"] = request.temperature
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.top_p is not None:
            kwargs["top_p"] = request.top_p
        schema = request.json_schema
        if schema is not None:
            mode = self.output_mode(request)
            response_format = response_format_for(mode, schema)
            if response_format is not None:
                kwargs["response_format"] = response_format
            if mode == "prompt":
                messages = with_schema_instruction(messages, schema)
        kwargs["messages"] = messages
        kwargs.update(self._endpoint_kwargs(request))
        kwargs.update(request.extra)
        return kwargs

    @staticmethod
    def _endpoint_kwargs(request: ChatRequest) -> dict[str, Any]:
        entry = request.endpoint
        if entry is None:
            return {}
        out: dict[str, Any] = {}
        try:
            if entry.api_base is not None:
                out["api_base"] = entry.api_base
            key = entry.api_key()
            if key is not None:
                out["api_key"] = key
            if entry.extra_headers:
                out["extra_headers"] = entry.headers()
        except EndpointError as exc:
            raise ModelError(request.model, str(exc)) from exc
        if entry.extra_body:
            out["extra_body"] = dict(entry.extra_body)
        return out

    def cost(self, response: Any) -> float:
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        if cost is None:
            try:
                cost = self.litellm.completion_cost(completion_response=response)
            except Exception:  # a model without a known price
                cost = 0.0
        return float(cost or 0.0)

    async def complete(self, request: ChatRequest, timeout_s: float) -> ChatResponse:
        if prefix_of(request.model) == "local":
            self._ensure_local(request.model)
        kwargs = self.build_kwargs(request, timeout_s)
        response = await self.litellm.acompletion(**kwargs)
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return ChatResponse(
            text=choice.message.content or "",
            model=request.model,
            usage=Usage(
                calls=1,
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                cost_usd=self.cost(response),
            ),
            finish_reason=choice.finish_reason,
        )


register_provider("scripted", ScriptedProvider)
register_provider(DEFAULT, LiteLLMProvider)
