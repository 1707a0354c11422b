"""How large a model's context window is, and how many tokens a request takes, before sending.

Strategies plan their prompts against the window instead of learning it from a refused call.
:class:`ContextProbe` answers both questions for the gateway (:class:`~scanrag.llm.gateway.
LLMClient`), each answer with where it came from:

The window, first found of:

1. the model entry's ``context_window``;
2. an embedded model's ``n_ctx`` (``local/<name>``) or a scripted model's ``context_window``;
3. what the model's server reports — ``GET <api_base>/models`` (vLLM's ``max_model_len``,
   LM Studio's ``loaded_context_length``/``max_context_length``, llama.cpp ``llama-server``'s
   ``meta.n_ctx``), then ``GET <root>/props`` (``llama-server``:
   ``default_generation_settings.n_ctx``). llama-cpp-python's own server reports no window:
   give its entry a ``context_window``;
4. litellm's model table (``max_input_tokens``) for a model without a server of its own;
5. the window a refused call named (``"maximum context length is 2048 tokens"``), learned
   once per model so later items are planned against it.

Token counts, first available of: the embedded model's tokenizer with its chat template
(exact); a server's tokenizer (llama-cpp-python ``/extras/tokenize/count``, ``llama-server``
and vLLM ``/tokenize``) plus a margin for the chat template; litellm's ``token_counter``; the
estimate of ``len(text) / 2`` (:data:`CHARS_PER_TOKEN`). Images count :data:`IMAGE_TOKENS` each.

Counts are kept per model and request content (:func:`request_fingerprint`: a hash of every
message's role, text and image count), so a prompt counted while planning is not sent to a
server's tokenizer again (a strategy re-planning the same pages, the gateway counting what a
strategy already counted); at most :data:`COUNT_CACHE_SIZE` counts are kept.

The estimate is deliberately high: the page text readers get (blocks with their boxes) takes
about 2.1 characters a token with Qwen2.5's and SmolLM2's tokenizers on mmlb-dev (plain text
3.1–3.4), so a quarter of the characters would undercount it twice over and send prompts the
model refuses; an overestimate only cuts a little early, and the cut is recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.types import ChatRequest, ContextWindow, ImagePart, TextPart, TokenCount

CHARS_PER_TOKEN = 2  # see the module docstring: measured 2.1 on boxed page text
IMAGE_TOKENS = 800
TEMPLATE_TOKENS_PER_MESSAGE = 8  # role markers a chat template adds around each message
PROBE_TIMEOUT_S = 5.0
COUNT_CACHE_SIZE = 4096

_WINDOW_IN_ERROR = (
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"context window of (\d+)", re.IGNORECASE),
    re.compile(r"context length of (\d+)", re.IGNORECASE),
    re.compile(r"n_ctx[\"']?\s*[:=]\s*(\d+)", re.IGNORECASE),
    re.compile(r"context size \((\d+)", re.IGNORECASE),
)
_MODEL_WINDOW_KEYS = ("max_model_len", "loaded_context_length", "max_context_length", "n_ctx")


def window_in_error(message: str) -> int | None:
    """The window a provider's overflow message names, if it names one."""
    for pattern in _WINDOW_IN_ERROR:
        found = pattern.search(message)
        if found:
            return int(found.group(1))
    return None


def estimate_request(request: ChatRequest, image_tokens: int = IMAGE_TOKENS) -> int:
    """``len(text) / CHARS_PER_TOKEN`` over every message, the template margin, images at a
    flat cost."""
    chars, images = 0, 0
    for message in request.messages:
        if isinstance(message.content, str):
            chars += len(message.content)
            continue
        for part in message.content:
            if isinstance(part, TextPart):
                chars += len(part.text)
            elif isinstance(part, ImagePart):
                images += 1
    margin = TEMPLATE_TOKENS_PER_MESSAGE * len(request.messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + images * image_tokens + margin


def request_text(request: ChatRequest) -> tuple[str, int]:
    """All text of a request, joined as text-only servers receive it, and its image count."""
    texts, images = [], 0
    for message in request.messages:
        texts.append(message.text)
        if not isinstance(message.content, str):
            images += sum(1 for p in message.content if isinstance(p, ImagePart))
    return "\n".join(texts), images


def request_fingerprint(request: ChatRequest) -> str:
    """A hash of what a token count depends on: each message's role, text and images."""
    shape = [[m.role, m.text, m.images] for m in request.messages]
    return hashlib.sha256(json.dumps(shape, ensure_ascii=False).encode()).hexdigest()


def server_root(base: str) -> str:
    """``http://h:8000`` of ``http://h:8000/v1``: where a server's own (non-OpenAI) routes are."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def window_from_models(payload: Any, model: str) -> int | None:
    """The window ``GET /models`` reports for ``model`` (or its only model), if any."""
    data = payload.get("data") if isinstance(payload, Mapping) else None
    if not isinstance(data, list):
        return None
    entries = [d for d in data if isinstance(d, Mapping)]
    named = [d for d in entries if d.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in named:
        for source in (entry, entry.get("meta") or {}):
            for key in _MODEL_WINDOW_KEYS:
                value = source.get(key) if isinstance(source, Mapping) else None
                if isinstance(value, int) and value > 0:
                    return value
    return None


def window_from_props(payload: Any) -> int | None:
    """``llama-server``'s runtime window from ``GET /props``."""
    if not isinstance(payload, Mapping):
        return None
    settings = payload.get("default_generation_settings") or {}
    value = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    if value is None:
        value = payload.get("n_ctx")
    return value if isinstance(value, int) and value > 0 else None


class ContextProbe:
    """Window sizes and token counts per model entry; every answer computed once and kept
    (server probes, tokenizer routes), safe to share across threads and event loops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, str | None], ContextWindow | None] = {}
        self._learned: dict[str, ContextWindow] = {}
        self._routes: dict[str, str | None] = {}
        self._counts: OrderedDict[tuple[str, str | None, str], TokenCount] = OrderedDict()

    # ------------------------------------------------------------------ window

    def learn(self, entry: ModelEntry, message: str) -> ContextWindow | None:
        """Remember the window an overflow ``message`` names for ``entry``."""
        tokens = window_in_error(message)
        if tokens is None:
            return None
        window = ContextWindow(tokens=tokens, source="the server's overflow message")
        with self._lock:
            self._learned[entry.ref] = window
        return window

    async def window(self, entry: ModelEntry) -> ContextWindow | None:
        """The window of ``entry``'s model (see the module docstring for the order)."""
        if entry.context_window is not None:
            return ContextWindow(tokens=entry.context_window, source="model entry context_window")
        key = (entry.model, entry.base_url())
        with self._lock:
            known = key in self._windows
            found = self._windows.get(key)
        if not known:
            found = await self._discover(entry)
            with self._lock:
                self._windows[key] = found
        if found is None:
            with self._lock:
                return self._learned.get(entry.ref)
        return found

    async def _discover(self, entry: ModelEntry) -> ContextWindow | None:
        prefix, _, name = entry.model.partition("/")
        if prefix == "local":
            from scanrag.llm.local_models import get_local_spec

            try:
                spec = get_local_spec(name)
            except Exception:  # an unknown local model: its call fails with a clear error
                return None
            return ContextWindow(tokens=spec.n_ctx, source=f"local model {name} (n_ctx)")
        if prefix == "scripted":
            from scanrag.llm.scripted import get_scripted

            try:
                tokens = get_scripted(name).context_window
            except Exception:
                return None
            return ContextWindow(tokens=tokens, source="scripted model") if tokens else None
        base = entry.base_url()
        if base is not None:
            return await asyncio.to_thread(self._ask_server, entry, base)
        return _litellm_window(entry.model)

    def _ask_server(self, entry: ModelEntry, base: str) -> ContextWindow | None:
        name = entry.model.partition("/")[2] or entry.model
        payload = _get_json(f"{base.rstrip('/')}/models", entry)
        tokens = window_from_models(payload, name)
        if tokens is not None:
            return ContextWindow(tokens=tokens, source=f"server {entry.endpoint()} /models")
        tokens = window_from_props(_get_json(f"{server_root(base)}/props", entry))
        if tokens is not None:
            return ContextWindow(tokens=tokens, source=f"server {entry.endpoint()} /props")
        return None

    # ------------------------------------------------------------------ tokens

    async def count(self, entry: ModelEntry, request: ChatRequest) -> TokenCount:
        """Tokens ``request`` takes for ``entry``'s model (see the module docstring); a
        request counted before for the same model is answered from the kept counts."""
        prefix, _, name = entry.model.partition("/")
        if prefix == "scripted":
            from scanrag.llm.scripted import get_scripted

            try:
                return await get_scripted(name).count_prompt_tokens(request)
            except Exception:  # not registered: its call fails with a clear error
                pass
        key = (entry.model, entry.base_url(), request_fingerprint(request))
        with self._lock:
            kept = self._counts.get(key)
            if kept is not None:
                self._counts.move_to_end(key)
                return kept
        counted = await self._count(entry, request, prefix, name)
        with self._lock:
            self._counts[key] = counted
            while len(self._counts) > COUNT_CACHE_SIZE:
                self._counts.popitem(last=False)
        return counted

    async def _count(
        self, entry: ModelEntry, request: ChatRequest, prefix: str, name: str
    ) -> TokenCount:
        if prefix == "local":
            counted = await asyncio.to_thread(_count_local, name, request)
            if counted is not None:
                return counted
        base = entry.base_url()
        if base is not None:
            counted = await asyncio.to_thread(self._count_on_server, entry, base, request)
            if counted is not None:
                return counted
        elif prefix not in ("local", "scripted"):
            counted = _litellm_count(entry.model, request)
            if counted is not None:
                return counted
        method = f"estimate (characters / {CHARS_PER_TOKEN})"
        return TokenCount(tokens=estimate_request(request), method=method)

    def _count_on_server(
        self, entry: ModelEntry, base: str, request: ChatRequest
    ) -> TokenCount | None:
        text, images = request_text(request)
        root = server_root(base)
        name = entry.model.partition("/")[2] or entry.model
        with self._lock:
            known = root in self._routes
            route = self._routes.get(root)
        routes = [route] if known else list(_TOKENIZE_ROUTES)
        for candidate in routes:
            if candidate is None:
                return None
            tokens = _tokenize(root, candidate, text, name, entry)
            if tokens is not None:
                with self._lock:
                    self._routes[root] = candidate
                margin = TEMPLATE_TOKENS_PER_MESSAGE * len(request.messages)
                return TokenCount(
                    tokens=tokens + margin + images * IMAGE_TOKENS,
                    method=f"server tokenizer {candidate} (+{margin} template margin)",
                    exact=False,
                )
        with self._lock:
            self._routes[root] = None
        return None


# --------------------------------------------------------------------------- helpers

_TOKENIZE_ROUTES = ("/extras/tokenize/count", "/tokenize")


def _headers(entry: ModelEntry) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    try:
        key = entry.api_key()
        headers |= entry.headers()
    except Exception:  # a missing key variable: the probe goes without it
        key = None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _get_json(url: str, entry: ModelEntry) -> Any:
    import httpx

    try:
        reply = httpx.get(url, headers=_headers(entry), timeout=PROBE_TIMEOUT_S)
        return reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def _tokenize(root: str, route: str, text: str, model: str, entry: ModelEntry) -> int | None:
    """Tokens of ``text`` from a server's tokenizer route (``None``: no such route)."""
    import httpx

    body = {"input": text, "content": text, "prompt": text, "model": model}
    try:
        reply = httpx.post(
            f"{root}{route}", json=body, headers=_headers(entry), timeout=PROBE_TIMEOUT_S
        )
        data = reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(data, Mapping):
        return None
    if isinstance(data.get("count"), int):
        return int(data["count"])
    tokens = data.get("tokens")
    return len(tokens) if isinstance(tokens, list) else None


def _count_local(name: str, request: ChatRequest) -> TokenCount | None:
    from scanrag.llm.local import RUNTIME
    from scanrag.llm.providers import to_openai_messages

    try:
        loaded = RUNTIME.load(name)
        messages = to_openai_messages(request.messages, f"local/{name}")
        with loaded.lock:
            tokens = RUNTIME.count_prompt_tokens(loaded, messages)
    except Exception:  # the model cannot load: its call will say why
        return None
    images = sum(len(m.images) for m in request.messages)
    return TokenCount(
        tokens=tokens + images * IMAGE_TOKENS,
        method="model tokenizer and chat template",
        exact=True,
    )


def _litellm_window(model: str) -> ContextWindow | None:
    from scanrag.llm.providers import _setup_litellm

    try:
        info = _setup_litellm().get_model_info(model)
    except Exception:  # a model litellm's table does not list
        return None
    tokens = info.get("max_input_tokens") or info.get("max_tokens")
    if not isinstance(tokens, int) or tokens <= 0:
        return None
    return ContextWindow(tokens=tokens, source="litellm's model table (max_input_tokens)")


def _litellm_count(model: str, request: ChatRequest) -> TokenCount | None:
    from scanrag.llm.providers import _setup_litellm

    text, images = request_text(request)
    try:
        tokens = int(_setup_litellm().token_counter(model=model, text=text))
    except Exception:
        return None
    margin = TEMPLATE_TOKENS_PER_MESSAGE * len(request.messages)
    return TokenCount(
        tokens=tokens + margin + images * IMAGE_TOKENS, method="litellm token_counter"
    )


__all__ = [
    "CHARS_PER_TOKEN",
    "COUNT_CACHE_SIZE",
    "IMAGE_TOKENS",
    "ContextProbe",
    "estimate_request",
    "request_fingerprint",
    "server_root",
    "window_from_models",
    "window_from_props",
    "window_in_error",
]
