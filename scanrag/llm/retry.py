"""Which provider errors are worth another try, and how long to wait before it.

Retried: rate limits, 5xx / overloaded servers, timeouts and connection failures.
Not retried: authentication, bad requests, unknown models, content policy, and context-window
overflows (which become :class:`ContextOverflowError`). Classification never imports litellm:
litellm's exception classes are checked only when litellm is already loaded.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass, field
from enum import StrEnum

from scanrag.llm.types import ContextOverflowError, ModelError


class ErrorKind(StrEnum):
    RETRY = "retry"
    OVERFLOW = "overflow"
    UNKNOWN_MODEL = "unknown_model"
    FATAL = "fatal"


_RETRYABLE_LITELLM = (
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "Timeout",
    "APIConnectionError",
)
_UNKNOWN_MODEL_LITELLM = ("NotFoundError",)
_PROVIDER_MISSING = "LLM Provider NOT provided"


def _litellm_kind(exc: BaseException) -> ErrorKind | None:
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return None
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ErrorKind.OVERFLOW
    if isinstance(exc, tuple(getattr(litellm, n) for n in _RETRYABLE_LITELLM)):
        return ErrorKind.RETRY
    if isinstance(exc, tuple(getattr(litellm, n) for n in _UNKNOWN_MODEL_LITELLM)):
        return ErrorKind.UNKNOWN_MODEL
    if isinstance(exc, litellm.BadRequestError) and _PROVIDER_MISSING in str(exc):
        return ErrorKind.UNKNOWN_MODEL
    if isinstance(exc, litellm.APIError):
        status = getattr(exc, "status_code", None)
        return ErrorKind.RETRY if isinstance(status, int) and status >= 500 else ErrorKind.FATAL
    return None


def classify(exc: BaseException) -> ErrorKind:
    """How the gateway treats an exception raised by a provider."""
    if isinstance(exc, ContextOverflowError):
        return ErrorKind.OVERFLOW
    if isinstance(exc, ModelError):
        return ErrorKind.RETRY if exc.retryable else ErrorKind.FATAL
    kind = _litellm_kind(exc)
    if kind is not None:
        return kind
    if isinstance(exc, TimeoutError | ConnectionError):
        return ErrorKind.RETRY
    return ErrorKind.FATAL


_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+:\s*)+")


def describe(exc: BaseException, model: str | None = None) -> str:
    """A one-line account of an error, without litellm's class-name prefixes or the model name
    repeated (the ``ModelError`` raised from it names the model already)."""
    text = _LITELLM_PREFIX.sub("", str(exc).strip()).split("\n", 1)[0].strip()
    if model and text.startswith(f"{model}: "):
        text = text[len(model) + 2 :]
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


@dataclass
class Backoff:
    """Exponential backoff with multiplicative jitter.

    The wait before retry ``i`` (0-based) is ``min(max_s, base_s * 2**i) * (1 + jitter * u)``
    with ``u`` uniform in [0, 1) from ``rng`` (seed it for reproducible waits).
    """

    base_s: float = 1.0
    max_s: float = 60.0
    jitter: float = 0.25
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry_index: int) -> float:
        raw = min(self.max_s, self.base_s * (2.0**retry_index))
        return raw * (1.0 + self.jitter * self.rng.random())
