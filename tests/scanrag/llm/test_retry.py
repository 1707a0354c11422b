"""Error classification and the backoff schedule."""

from __future__ import annotations

import random

import pytest

from scanrag.llm import ContextOverflowError, ModelError
from scanrag.llm.retry import Backoff, ErrorKind, classify, describe


def test_own_and_builtin_errors() -> None:
    assert classify(ContextOverflowError("m", "long")) is ErrorKind.OVERFLOW
    assert classify(ModelError("m", "x", retryable=True)) is ErrorKind.RETRY
    assert classify(ModelError("m", "x")) is ErrorKind.FATAL
    assert classify(TimeoutError()) is ErrorKind.RETRY
    assert classify(ConnectionResetError()) is ErrorKind.RETRY
    assert classify(ValueError("bug")) is ErrorKind.FATAL


def test_litellm_errors() -> None:
    import litellm

    kw = {"llm_provider": "openai", "model": "gpt-4o-mini"}
    retry = [
        litellm.RateLimitError("r", **kw),
        litellm.InternalServerError("i", **kw),
        litellm.ServiceUnavailableError("s", **kw),
        litellm.BadGatewayError("b", **kw),
        litellm.Timeout("t", **kw),
        litellm.APIConnectionError("c", **kw),
        litellm.APIError(502, "upstream", **kw),
    ]
    for exc in retry:
        assert classify(exc) is ErrorKind.RETRY, type(exc).__name__
    fatal = [
        litellm.AuthenticationError("a", **kw),
        litellm.BadRequestError("bad", **kw),
        litellm.APIError(418, "teapot", **kw),
    ]
    for exc in fatal:
        assert classify(exc) is ErrorKind.FATAL, type(exc).__name__
    assert classify(litellm.ContextWindowExceededError("c", **kw)) is ErrorKind.OVERFLOW
    assert classify(litellm.NotFoundError("n", **kw)) is ErrorKind.UNKNOWN_MODEL
    missing = litellm.BadRequestError("LLM Provider NOT provided. You passed model=x", **kw)
    assert classify(missing) is ErrorKind.UNKNOWN_MODEL


def test_describe_strips_prefixes() -> None:
    import litellm

    exc = litellm.RateLimitError("m/x: quota gone\nTraceback ...", llm_provider="o", model="x")
    assert describe(exc, "m/x") == "rate limited (HTTP 429): quota gone"
    assert describe(ValueError()) == "ValueError"


def test_backoff_schedule() -> None:
    plain = Backoff(base_s=0.5, max_s=3.0, jitter=0.0)
    assert [plain.delay(i) for i in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    jittered = Backoff(base_s=1.0, max_s=100.0, jitter=0.2, rng=random.Random(1))
    ref = random.Random(1)
    assert [jittered.delay(i) for i in range(3)] == pytest.approx(
        [b * (1 + 0.2 * ref.random()) for b in (1.0, 2.0, 4.0)]
    )
