"""The option objects of :class:`scanrag.llm.gateway.LLMClient`: its disk cache of replies,
its concurrency limits and its retry policy (the config's ``runner.llm`` and ``runner``
settings reach the client through them, :func:`scanrag.runner.components.build_llm`)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scanrag.llm.retry import Backoff

DEFAULT_PER_PROVIDER: dict[str, int] = {"local": 1}
"""A local model runs one call at a time anyway; waiting calls should not hold global slots."""


@dataclass(frozen=True)
class CacheOptions:
    """The disk cache of replies: its folder (``None``: no cache), whether replies of
    scripted test models are cached too (tests expect a fresh answer per call), and the name
    stored with each reply (``origin``: the run folder's, shown when a later run replays it)."""

    folder: Path | None = None
    scripted: bool = False
    origin: str | None = None


@dataclass(frozen=True)
class CallLimits:
    """Calls in flight at once: in all, and per provider prefix (over
    :data:`DEFAULT_PER_PROVIDER`; a model entry's own ``max_concurrency`` bounds its calls
    too)."""

    max_concurrency: int = 4
    per_provider: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if any(v < 1 for v in self.providers().values()):
            raise ValueError(f"per-provider concurrency must be at least 1: {self.providers()}")

    def providers(self) -> dict[str, int]:
        """The per-provider bounds in force: the defaults, then the given ones."""
        return {**DEFAULT_PER_PROVIDER, **self.per_provider}


@dataclass(frozen=True)
class RetryPolicy:
    """How long a call may take (``timeout_s``, unless its model entry sets one) and how often
    a retryable failure is tried again (``max_retries``), waiting an exponential backoff
    (:class:`~scanrag.llm.retry.Backoff`: ``backoff_base_s`` doubling up to ``backoff_max_s``,
    with ``jitter``); a server's ``Retry-After`` is honored up to ``retry_after_max_s``."""

    max_retries: int = 4
    timeout_s: float = 120
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    jitter: float = 0.25
    retry_after_max_s: float = 60.0

    def backoff(self, rng: random.Random | None = None) -> Backoff:
        """The waits between tries (``rng``: seed it for reproducible waits)."""
        return Backoff(
            self.backoff_base_s,
            self.backoff_max_s,
            self.jitter,
            rng or random.Random(),
            self.retry_after_max_s,
        )


__all__ = ["DEFAULT_PER_PROVIDER", "CacheOptions", "CallLimits", "RetryPolicy"]
