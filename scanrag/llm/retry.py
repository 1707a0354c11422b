"""Which provider errors are worth another try, and how long to wait before it.

Retried: rate limits, 5xx / overloaded servers, timeouts and connection failures.
Not retried: authentication, bad requests, unknown models, content policy, an HTTP 200 whose
body is no chat completion, and context-window overflows (which become
:class:`ContextOverflowError`). A server's ``Retry-After`` (or ``retry-after-ms``) sets the
wait, capped by :attr:`Backoff.retry_after_max_s`. Classification never imports litellm:
litellm's exception classes are checked only when litellm is already loaded.
"""

from __future__ import annotations

import random
import re
import sys
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any

from scanrag.llm.causes import chain, network_cause
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
# An HTTP 200 whose body is no chat completion (a proxy's HTML page, a wrong path): retrying
# the same misconfigured address cannot help.
_NOT_A_COMPLETION = "invalid response from LLM endpoint"


def _litellm_kind(exc: BaseException) -> ErrorKind | None:
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return None
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ErrorKind.OVERFLOW
    if _NOT_A_COMPLETION in str(exc):
        return ErrorKind.FATAL
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


# What litellm and the OpenAI SDK put before the server's own words: class names
# ("RateLimitError: "), provider tags ("OpenAIException - "), repeated as often as wrapped.
_NOISE = re.compile(r"^((litellm\.)?\w*(Error|Exception|Timeout)\b\s*[:-]\s*)+")
_TIMEOUT_TEXT = re.compile(r"timeout value=([\d.]+)")

_STATUS_WORDS = {
    400: "bad request",
    401: "not authorised",
    403: "forbidden",
    404: "not found",
    408: "timed out",
    413: "request too large",
    422: "request rejected",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
}


def status_code_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _server_words(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0].strip()
    text = _NOISE.sub("", text).strip()
    # litellm appends its own timing notes to a timeout; the limit is reported separately
    return text.split(" Error_str:", 1)[0].strip()


def describe(exc: BaseException, model: str | None = None, timeout_s: float | None = None) -> str:
    """One line about an error: what happened — a refused connection, a failed DNS lookup, a
    timeout and its limit, or the HTTP status in words with the server's own message —
    without class names repeated by each wrapper. A connection that never reached a server
    is never reported as an HTTP status (litellm labels it 500)."""
    if _is_timeout(exc):
        limit = timeout_s
        found = _TIMEOUT_TEXT.search(str(exc))
        if limit is None and found:
            limit = float(found.group(1))
        return f"timed out after {limit:g} s (timeout_s)" if limit else "timed out"
    if isinstance(exc, ModelError):  # its message, without the model name it starts with
        return exc.message.strip().split("\n", 1)[0] or type(exc).__name__
    cause = network_cause(exc)
    if cause is not None:
        return cause
    text = _server_words(exc)
    if model and text.startswith(f"{model}: "):
        text = text[len(model) + 2 :]
    status = status_code_of(exc)
    if status is not None:
        head = f"{_STATUS_WORDS.get(status, 'error')} (HTTP {status})"
        return f"{head}: {text}" if text and text.lower() != head.lower() else head
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _is_timeout(exc: BaseException) -> bool:
    """A timeout anywhere in the chain (litellm's, httpx's, asyncio's)."""
    litellm = sys.modules.get("litellm")
    for cause in chain(exc):
        if isinstance(cause, TimeoutError):
            return True
        if litellm is not None and isinstance(cause, litellm.Timeout):
            return True
        if type(cause).__name__ in ("ReadTimeout", "ConnectTimeout", "APITimeoutError"):
            return True
    return False


# ----------------------------------------------------------------------------- Retry-After


def _headers_of(exc: BaseException) -> Any:
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            return headers
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def retry_after_s(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, or ``Retry-After`` in seconds
    or as an HTTP date), or ``None`` when it did not say."""
    headers = _headers_of(exc)
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000.0)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(str(value)).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


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

    retry_after_max_s: float = 60.0

    def delay(self, retry_index: int, retry_after: float | None = None) -> float:
        """The wait before retry ``retry_index``. A server's ``Retry-After`` is honoured (the
        wait is at least that long, plus the jitter, so clients told the same time spread
        out), capped at ``retry_after_max_s``."""
        raw = min(self.max_s, self.base_s * (2.0**retry_index))
        if retry_after is not None:
            raw = min(max(raw, retry_after), self.retry_after_max_s)
            return min(raw * (1.0 + self.jitter * self.rng.random()), self.retry_after_max_s)
        return raw * (1.0 + self.jitter * self.rng.random())
