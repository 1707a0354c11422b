"""Request/response types of the LLM gateway and the protocol every chat model follows.

Agents and judges depend only on ``ChatModel``: the litellm-backed gateway, the embedded
local models and the scripted test model all implement it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from scanrag.hashing import file_sha256, stable_hash
from scanrag.llm.endpoints import ModelEntry, endpoint_label, env_base_url
from scanrag.schemas import Usage

_IMAGE_IDS: dict[tuple[str, int, int], str] = {}


def image_content_id(path: str) -> str:
    """``sha256:<hex>`` of an image file (memoised by path, size and mtime); ``missing:<path>``."""
    try:
        st = os.stat(path)
    except OSError:
        return f"missing:{path}"
    memo = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if memo not in _IMAGE_IDS:
        if len(_IMAGE_IDS) > 50_000:
            _IMAGE_IDS.clear()
        _IMAGE_IDS[memo] = f"sha256:{file_sha256(path)}"
    return _IMAGE_IDS[memo]


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """A page image given by file path (PNG). The gateway encodes it for the provider."""

    type: Literal["image"] = "image"
    path: str
    detail: str = "auto"

    @classmethod
    def of(cls, path: str | Path) -> ImagePart:
        return cls(path=str(path))


ContentPart = TextPart | ImagePart


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str | list[ContentPart]

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def images(self) -> list[str]:
        if isinstance(self.content, str):
            return []
        return [p.path for p in self.content if isinstance(p, ImagePart)]


class ChatRequest(BaseModel):
    """One model call.

    ``stage`` names the pipeline stage for usage accounting (``reader``, ``planner``,
    ``judge.answer`` ...). ``prompt_hash`` identifies the prompt template that produced the
    messages; ``json_schema`` asks for constrained JSON output where the provider supports it.
    ``temperature`` ``None`` sends none (the server's default); ``token_param`` names the
    token cap on the wire: ``max_tokens``, or ``max_completion_tokens`` as a released
    benchmark script sends it.
    ``model`` is a model string or the ``ref`` of a :class:`ModelEntry` the gateway knows; the
    gateway resolves it into the entry's model, sampling and ``endpoint`` before calling.
    """

    model: str
    messages: list[Message]
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int = 512
    token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    json_schema: dict[str, Any] | None = None
    stage: str = "default"
    prompt_hash: str | None = None
    seed: int | None = 0
    extra: dict[str, Any] = Field(default_factory=dict, description="Provider-specific params.")
    endpoint: ModelEntry | None = Field(
        default=None, description="The resolved model entry (server, extra_body, output mode)."
    )

    def cache_key(self) -> str:
        """Key of the on-disk response cache: model, messages, every sampling parameter and
        the server (host, path, body extras, output mode) the call goes to.

        Images count by content (SHA-256 of the file), not by path, so a page rendered again
        into another folder hits the same entry, and a changed file misses it. Values in
        ``extra`` that are not JSON count by their ``repr``. Fields left at their neutral
        value (no ``top_p``, no endpoint) are not written, so keys of plain calls stay stable.
        """
        exclude = {"stage", "prompt_hash", "endpoint"}
        payload = self.model_dump(mode="json", exclude=exclude, fallback=repr)
        if payload.get("top_p") is None:
            payload.pop("top_p", None)
        if payload.get("token_param") == "max_tokens":
            payload.pop("token_param")
        identity = self.endpoint.cache_identity() if self.endpoint is not None else {}
        if "endpoint" not in identity and (url := env_base_url(self.model)) is not None:
            identity["endpoint"] = endpoint_label(url)
        if identity:
            payload["endpoint"] = identity
        for message in payload["messages"]:
            if isinstance(message["content"], list):
                for part in message["content"]:
                    if part.get("type") == "image":
                        part["path"] = image_content_id(part["path"])
        return stable_hash(payload, length=40)


class ChatResponse(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    cached_from: str | None = Field(
        default=None,
        description="For a cache hit: the run that stored the reply (when the cache knows).",
    )
    latency_s: float = Field(
        default=0.0,
        description="Seconds the provider worked on the attempt that succeeded, once the call "
        "held its concurrency slots (queueing, failed attempts and back-off excluded).",
    )
    prompt_hash: str | None = None
    finish_reason: str | None = None


class ContextWindow(BaseModel):
    """A model's context window in tokens and where that number came from."""

    tokens: int = Field(ge=1)
    source: str


class TokenCount(BaseModel):
    """Tokens of a request's prompt, how they were counted, whether the count is exact."""

    tokens: int = Field(ge=0)
    method: str
    exact: bool = False


class ModelError(RuntimeError):
    """A model call failed for good (after retries), or the model name is unknown."""

    def __init__(self, model: str, message: str, *, retryable: bool = False) -> None:
        self.model = model
        self.message = message
        self.retryable = retryable
        super().__init__(f"{model}: {message}")


class ContextOverflowError(ModelError):
    """The prompt does not fit in the model's context window."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers a ``ChatRequest``."""

    async def chat(self, request: ChatRequest) -> ChatResponse: ...
