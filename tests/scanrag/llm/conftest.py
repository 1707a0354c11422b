"""Fixtures of the LLM gateway tests: scripted models and clients that never really sleep."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scanrag.llm import ChatRequest, Message, ScriptedModel, clear_scripted, register_scripted
from scanrag.llm.gateway import LLMClient
from scanrag.llm.options import CacheOptions, CallLimits, RetryPolicy

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # fake_openai, the fake OpenAI-compatible server
    sys.path.insert(0, str(HERE))

from fake_openai import FakeOpenAIServer, server_factory  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_scripted() -> Iterator[None]:
    clear_scripted()
    yield
    clear_scripted()


class SleepRecorder:
    """Stands in for ``asyncio.sleep``: records the requested waits, yields control only."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


CACHE = {"cache_dir": "folder", "cache_scripted": "scripted", "origin": "origin"}
LIMITS = {"max_concurrency": "max_concurrency", "per_provider_concurrency": "per_provider"}
RETRIES = ("max_retries", "timeout_s", "backoff_base_s", "backoff_max_s", "jitter")
RETRIES += ("retry_after_max_s",)


def client_of(**settings: Any) -> LLMClient:
    """An ``LLMClient`` from flat settings (``cache_dir``, ``max_concurrency``,
    ``max_retries`` ...), each put into its option object."""
    cache = {CACHE[k]: settings.pop(k) for k in list(settings) if k in CACHE}
    limits = {LIMITS[k]: settings.pop(k) for k in list(settings) if k in LIMITS}
    retries = {k: settings.pop(k) for k in list(settings) if k in RETRIES}
    return LLMClient(
        cache=CacheOptions(**cache),
        limits=CallLimits(**limits),
        retries=RetryPolicy(**retries),
        **settings,
    )


@pytest.fixture
def make_client(tmp_path: Path, sleeps: SleepRecorder) -> Callable[..., LLMClient]:
    """``make_client(**overrides)``: a client with no jitter, recorded sleeps, cache in tmp."""

    def make(**kw: Any) -> LLMClient:
        params: dict[str, Any] = {
            "cache_dir": tmp_path / "llm-cache",
            "jitter": 0.0,
            "sleep": sleeps,
            "rng": random.Random(0),
        }
        params.update(kw)
        return client_of(**params)

    return make


@pytest.fixture
def scripted() -> Callable[..., ScriptedModel]:
    """``scripted(name, *replies, **kw)`` registers a ScriptedModel as ``scripted/<name>``."""

    def make(name: str, *replies: Any, **kw: Any) -> ScriptedModel:
        return register_scripted(name, ScriptedModel(replies, name=f"scripted/{name}", **kw))

    return make


def ask(model: str, text: str = "What is on page 3?", **kw: Any) -> ChatRequest:
    return ChatRequest(model=model, messages=[Message(role="user", content=text)], **kw)


@pytest.fixture
def request_for() -> Callable[..., ChatRequest]:
    return ask


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """``fake_server(*modes, **kw)``: a started FakeOpenAIServer, stopped after the test."""
    with server_factory() as make:
        yield make
