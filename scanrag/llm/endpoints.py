"""Model entries: where a role's model is served and how it is sampled.

A role (an agent's ``reader``, a judge's ``default`` ...) names a model by a string — a litellm
model string, ``local/<name>``, ``scripted/<name>`` — or by a :class:`ModelEntry`, which adds
the server (``api_base``, the *name* of the environment variable holding its key, extra
headers, timeout, concurrency, the context window when the server does not report it),
sampling (``temperature``, ``top_p``, ``max_tokens``, ``seed``, server-specific knobs in
``extra_body``) and how structured output is asked for
(``output_mode``). The gateway looks entries up by :attr:`ModelEntry.ref`, the string roles
carry through the run (``name`` when given, else ``model``).

Unset sampling fields keep what the caller asks for (agents and judges choose their own token
budgets); set ones override it for every call to that entry. Entries hold no secrets: a key is
read from the named variable at call time, and header values may be written ``${VAR}``.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scanrag.bounds import INT64_MAX, INT64_MIN, MAX_CONCURRENCY, MAX_CONTEXT
from scanrag.counts import Count
from scanrag.scrub import register_secret, register_secrets

OutputMode = Literal["json_schema", "json_object", "prompt"]

SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens", "seed")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_HEADER = re.compile(r"(authorization|api[-_]?key|token|secret|cookie)", re.IGNORECASE)

# Where litellm reads a provider's server address when a call names none: the cache key must
# see it too, or a server moved by the environment would be served from the old one's cache.
BASE_URL_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "hosted_vllm": ("HOSTED_VLLM_API_BASE",),
    "ollama": ("OLLAMA_API_BASE",),
    "ollama_chat": ("OLLAMA_API_BASE",),
    "openai_like": ("OPENAI_LIKE_API_BASE",),
    "lm_studio": ("LM_STUDIO_API_BASE",),
}


class EndpointError(ValueError):
    """An entry cannot be used as configured (e.g. its key variable is not set)."""


def expand_env(value: str) -> str:
    """``value`` with every ``${VAR}`` replaced by the variable's value (``EndpointError`` when
    a variable is not set)."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise EndpointError(f"environment variable {name} is not set")
        return os.environ[name]

    return _ENV_REF.sub(sub, value)


def env_base_url(model: str) -> str | None:
    """The server address litellm would take from the environment for ``model``'s provider."""
    prefix = model.partition("/")[0] if "/" in model else ""
    for name in BASE_URL_ENV.get(prefix, ()):
        if os.environ.get(name):
            return os.environ[name]
    return None


def endpoint_label(url: str) -> str:
    """``host[:port]/path`` of a URL: no scheme, no credentials, no query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return f"{host}{parts.path.rstrip('/')}"


class ModelEntry(BaseModel):
    """One model as a role uses it: the model string plus its server, sampling, output mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="litellm model string, local/<name> or scripted/<name>.")
    name: str | None = Field(
        default=None, description="What roles and run keys call it (default: the model string)."
    )
    api_base: str | None = Field(default=None, description="Server URL, e.g. http://h:8000/v1.")
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the key."
    )
    extra_headers: dict[str, str] = Field(
        default_factory=dict, description="Sent with every call; values may use ${VAR}."
    )
    timeout_s: float | None = Field(default=None, gt=0, description="Per-call timeout.")
    max_concurrency: Count | None = Field(
        default=None, ge=1, le=MAX_CONCURRENCY, description="Calls in flight."
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: Count | None = Field(default=None, ge=1, le=MAX_CONTEXT)
    seed: Count | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Merged into the request body (server knobs: repeat_penalty, top_k ...).",
    )
    output_mode: OutputMode | None = Field(
        default=None, description="json_schema | json_object | prompt (None: provider default)."
    )
    context_window: Count | None = Field(
        default=None,
        ge=1,
        le=MAX_CONTEXT,
        description="The model's context window in tokens, for servers that do not report it "
        "(llama-cpp-python's server); prompts are planned to fit it.",
    )

    @field_validator("model")
    @classmethod
    def _model_named(cls, model: str) -> str:
        if not model.strip():
            raise ValueError("empty model name")
        return model.strip()

    @field_validator("name")
    @classmethod
    def _name_ok(cls, name: str | None) -> str | None:
        if name is not None and (not name.strip() or name != name.strip()):
            raise ValueError(f"name {name!r} must be non-empty without outer spaces")
        return name

    @field_validator("api_base")
    @classmethod
    def _url_ok(cls, url: str | None) -> str | None:
        if url is None:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"api_base {url!r} must be an http(s) URL such as http://host:8000/v1")
        if parts.username or parts.password:
            raise ValueError("api_base must not hold credentials; name a variable in api_key_env")
        return url.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, name: str | None) -> str | None:
        if name is not None and not _ENV_NAME.match(name):
            raise ValueError(
                f"api_key_env takes the name of an environment variable (e.g. VLLM_API_KEY), "
                f"not the key itself; got a value of {len(name)} characters"
            )
        return name

    @field_validator("extra_headers")
    @classmethod
    def _no_literal_secrets(cls, headers: dict[str, str]) -> dict[str, str]:
        for header, value in headers.items():
            if _SECRET_HEADER.search(header) and not _ENV_REF.search(value):
                raise ValueError(
                    f"header {header!r} looks like a credential: write its value as ${{VAR}} "
                    "so the key stays out of config files and run folders"
                )
        return headers

    @model_validator(mode="after")
    def _server_only_for_remote(self) -> ModelEntry:
        prefix = self.prefix
        if prefix in ("local", "scripted") and self.api_base is not None:
            raise ValueError(f"{prefix}/ models run in this process; api_base does not apply")
        return self

    # ------------------------------------------------------------------ views

    @property
    def ref(self) -> str:
        """The string roles carry: ``name``, else the model string."""
        return self.name or self.model

    @property
    def prefix(self) -> str | None:
        head, sep, _ = self.model.partition("/")
        return head if sep else None

    def sampling(self) -> dict[str, Any]:
        """The sampling fields this entry sets (unset ones are left to the caller)."""
        return {k: getattr(self, k) for k in SAMPLING_FIELDS if getattr(self, k) is not None}

    def base_url(self) -> str | None:
        """The server address calls go to: ``api_base``, else the provider's environment one."""
        return self.api_base or env_base_url(self.model)

    def endpoint(self) -> str | None:
        """``host[:port]/path`` of the server, or ``None`` for the provider's own."""
        url = self.base_url()
        return endpoint_label(url) if url else None

    def api_key(self) -> str | None:
        """The key from ``api_key_env``; a placeholder for a self-hosted server named without
        one (so a provider key from the environment is never sent to another server)."""
        if self.api_key_env is not None:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise EndpointError(
                    f"environment variable {self.api_key_env} (api_key_env) is not set"
                )
            register_secret(value)  # masked wherever it appears, whatever the variable's name
            return value
        return "not-needed" if self.api_base is not None else None

    def headers(self) -> dict[str, str]:
        values = {k: expand_env(v) for k, v in self.extra_headers.items()}
        self.register_secrets()
        return values

    def register_secrets(self) -> None:
        """Register with the scrubber what this entry sends that may be secret, as the
        environment holds it now: the ``api_key_env`` key, every variable a header value
        reads (``${VAR}``) and the whole value of a secret-named header (unset variables are
        skipped: calls report them)."""
        if self.api_key_env and os.environ.get(self.api_key_env):
            register_secret(os.environ[self.api_key_env])
        for name, value in self.extra_headers.items():
            register_secrets(os.environ.get(ref, "") for ref in _ENV_REF.findall(value))
            if _SECRET_HEADER.search(name):
                with contextlib.suppress(EndpointError):
                    register_secret(expand_env(value))

    def cache_identity(self) -> dict[str, Any]:
        """What about the server changes an answer: where it is and what the body carries.
        Keys, timeouts and concurrency do not; header values may hold secrets (names only)."""
        identity: dict[str, Any] = {}
        if (endpoint := self.endpoint()) is not None:
            identity["endpoint"] = endpoint
        if self.extra_body:
            identity["extra_body"] = self.extra_body
        if self.output_mode is not None:
            identity["output_mode"] = self.output_mode
        if self.extra_headers:
            identity["header_names"] = sorted(h.lower() for h in self.extra_headers)
        return identity

    def describe(self, output_mode: str | None = None) -> dict[str, Any]:
        """For the run manifest: model, endpoint host and path, sampling, output mode, limits.
        No key, no header values."""
        out: dict[str, Any] = {
            "model": self.model,
            "endpoint": self.endpoint(),
            "sampling": {**self.sampling(), **self.extra_body},
            "output_mode": output_mode or self.output_mode,
        }
        if self.api_key_env:
            out["api_key_env"] = self.api_key_env  # a name, never the key
        if self.extra_headers:
            out["header_names"] = sorted(self.extra_headers)
        if self.timeout_s is not None:
            out["timeout_s"] = self.timeout_s
        if self.max_concurrency is not None:
            out["max_concurrency"] = self.max_concurrency
        if self.context_window is not None:
            out["context_window"] = self.context_window
        return out


def entry_of(value: str | ModelEntry | dict[str, Any]) -> ModelEntry:
    """A model entry from a plain model string, a mapping or an entry."""
    if isinstance(value, ModelEntry):
        return value
    if isinstance(value, str):
        return ModelEntry(model=value)
    return ModelEntry.model_validate(value)


def is_plain(entry: ModelEntry) -> bool:
    """True when the entry is just a model string (nothing else set)."""
    return entry == ModelEntry(model=entry.model, name=entry.name)


__all__ = [
    "BASE_URL_ENV",
    "SAMPLING_FIELDS",
    "EndpointError",
    "ModelEntry",
    "OutputMode",
    "endpoint_label",
    "entry_of",
    "env_base_url",
    "expand_env",
    "is_plain",
]
