"""LLMClient with scripted models: retries, errors, cache, concurrency, accounting."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from scanrag.llm import ChatRequest, ContextOverflowError, ModelError, ScriptedModel
from scanrag.llm.gateway import LLMClient, prompt_hash_of
from scanrag.llm.ledger import UsageLedger
from scanrag.llm.options import CacheOptions, CallLimits
from scanrag.llm.scripted import register_scripted


def _retryable(msg: str = "overloaded") -> ModelError:
    return ModelError("scripted/flaky", msg, retryable=True)


# ----------------------------------------------------------------------------- retries


async def test_retries_then_succeeds_with_exponential_backoff(
    make_client, scripted, sleeps, request_for
):
    model = scripted("flaky", _retryable(), TimeoutError("slow"), ConnectionError("reset"), "42")
    client = make_client(backoff_base_s=0.5)
    response = await client.chat(request_for("scripted/flaky"))
    assert response.text == "42"
    assert len(model.requests) == 4
    assert sleeps.waits == [0.5, 1.0, 2.0]
    (record,) = client.ledger.records()
    assert record.attempts == 4 and record.error is None


async def test_backoff_jitter_is_bounded_and_reproducible(
    make_client, scripted, sleeps, request_for
):
    scripted("flaky", _retryable(), _retryable(), _retryable(), "ok")
    client = make_client(jitter=0.5, rng=random.Random(7), backoff_base_s=1.0)
    await client.chat(request_for("scripted/flaky"))
    rng = random.Random(7)
    expected = [base * (1 + 0.5 * rng.random()) for base in (1.0, 2.0, 4.0)]
    assert sleeps.waits == pytest.approx(expected)
    assert all(b <= w < 1.5 * b for w, b in zip(sleeps.waits, (1.0, 2.0, 4.0), strict=True))


async def test_backoff_is_capped(make_client, scripted, sleeps, request_for):
    scripted("flaky", *[_retryable() for _ in range(4)], "ok")
    client = make_client(backoff_base_s=10.0, backoff_max_s=15.0)
    await client.chat(request_for("scripted/flaky"))
    assert sleeps.waits == [10.0, 15.0, 15.0, 15.0]


async def test_gives_up_after_max_retries(make_client, scripted, sleeps, request_for):
    model = scripted("down", *[_retryable("503 from upstream") for _ in range(10)])
    client = make_client(max_retries=2)
    with pytest.raises(ModelError) as info:
        await client.chat(request_for("scripted/down", stage="reader"))
    assert "gave up after 3 attempt(s) (max_retries=2" in str(info.value)
    assert "503 from upstream" in str(info.value)
    assert info.value.model == "scripted/down"
    assert len(model.requests) == 3
    assert len(sleeps.waits) == 2
    snap = client.ledger.snapshot()
    assert snap["errors_by_stage"] == {"reader": 1}


async def test_non_retryable_error_is_not_retried(make_client, scripted, sleeps, request_for):
    model = scripted("strict", ModelError("scripted/strict", "invalid api key"), "never")
    client = make_client()
    with pytest.raises(ModelError, match="invalid api key"):
        await client.chat(request_for("scripted/strict"))
    assert len(model.requests) == 1
    assert sleeps.waits == []


async def test_unexpected_exception_becomes_model_error(make_client, scripted, request_for):
    scripted("buggy", KeyError("choices"))
    with pytest.raises(ModelError, match="KeyError") as info:
        await make_client().chat(request_for("scripted/buggy"))
    assert isinstance(info.value.__cause__, KeyError)


async def test_context_overflow_is_raised_without_retry(make_client, scripted, sleeps, request_for):
    scripted("small", ContextOverflowError("scripted/small", "prompt too long"), "never")
    with pytest.raises(ContextOverflowError):
        await make_client().chat(request_for("scripted/small"))
    assert sleeps.waits == []


async def test_litellm_rate_limit_is_retried(make_client, scripted, sleeps, request_for):
    import litellm

    limited = litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4o-mini")
    broken = litellm.InternalServerError("boom", llm_provider="openai", model="gpt-4o-mini")
    scripted("api", limited, broken, "fine")
    response = await make_client().chat(request_for("scripted/api"))
    assert response.text == "fine"
    assert sleeps.waits == [1.0, 2.0]


async def test_timeout_per_attempt_is_retried(make_client, scripted, sleeps, request_for):
    slow = scripted("slow", "late", delay_s=5.0)
    slow.queue("late again")
    client = make_client(timeout_s=0.05, max_retries=1)
    with pytest.raises(ModelError, match=r"timed out after 0\.05 s \(timeout_s\); gave up after 2"):
        await client.chat(request_for("scripted/slow"))
    assert len(slow.requests) == 2
    assert sleeps.waits == [1.0]


async def test_in_process_models_get_no_call_timeout(make_client, sleeps, request_for, monkeypatch):
    # A local generation cannot be interrupted; timing it out would orphan it and queue the
    # retry behind it. The call runs to its end instead.
    import scanrag.llm.gateway as gateway_module
    from scanrag.llm.providers import LiteLLMProvider
    from scanrag.llm.types import ChatResponse

    class SlowLocal:
        cacheable = False
        calls = 0
        call_timeout = LiteLLMProvider.call_timeout  # the real rule for local/ models

        def concurrency_key(self, model: str) -> str:
            return "local"

        async def complete(self, request, timeout_s):
            SlowLocal.calls += 1
            await asyncio.sleep(0.2)
            return ChatResponse(text="done", model=request.model)

    monkeypatch.setattr(gateway_module, "provider_for", lambda model: SlowLocal())
    client = make_client(timeout_s=0.05, max_retries=1)
    response = await client.chat(request_for("local/qwen2.5-0.5b"))
    assert response.text == "done" and SlowLocal.calls == 1 and sleeps.waits == []
    assert LiteLLMProvider.call_timeout(SlowLocal(), "openai/gpt-4o", 5.0) == 5.0  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- unknown models


async def test_unknown_scripted_model_names_it(make_client, request_for):
    with pytest.raises(ModelError, match=r"scripted/ghost: no scripted model registered"):
        await make_client().chat(request_for("scripted/ghost"))


async def test_empty_model_name(make_client, request_for):
    with pytest.raises(ModelError, match="unknown model"):
        await make_client().chat(request_for(" "))


# ----------------------------------------------------------------------------- cache


async def test_scripted_bypasses_cache_by_default(make_client, scripted, request_for):
    model = scripted("fresh", "one", "two")
    client = make_client()
    first = await client.chat(request_for("scripted/fresh"))
    second = await client.chat(request_for("scripted/fresh"))
    assert (first.text, second.text) == ("one", "two")
    assert not second.cached
    assert len(model.requests) == 2
    assert client.cache is not None and len(client.cache) == 0


async def test_cache_hit_and_persistence_across_clients(make_client, scripted, request_for):
    model = scripted("paid", "the answer", cost_per_token=0.01)
    client = make_client(cache_scripted=True)
    first = await client.chat(request_for("scripted/paid", stage="reader"))
    second = await client.chat(request_for("scripted/paid", stage="reader"))
    assert not first.cached and second.cached
    assert second.text == first.text == "the answer"
    assert len(model.requests) == 1
    assert first.usage.cost_usd > 0
    assert second.usage.cost_usd == 0.0
    assert second.usage.calls == 1 and second.usage.cached_calls == 1
    assert second.usage.prompt_tokens == first.usage.prompt_tokens
    assert second.prompt_hash == first.prompt_hash

    other = make_client(cache_scripted=True)
    third = await other.chat(request_for("scripted/paid", stage="judge.answer"))
    assert third.cached and third.text == "the answer"
    assert len(model.requests) == 1
    snap = other.ledger.snapshot()
    assert snap["by_stage"]["judge.answer"]["cached_calls"] == 1
    assert snap["saved_usd"] == pytest.approx(first.usage.cost_usd)


async def test_cache_misses_when_params_change(make_client, scripted, request_for):
    model = scripted("paid", responder=lambda r: f"t={r.temperature} n={r.max_tokens}")
    client = make_client(cache_scripted=True)
    await client.chat(request_for("scripted/paid"))
    await client.chat(request_for("scripted/paid", temperature=0.7))
    await client.chat(request_for("scripted/paid", max_tokens=64))
    await client.chat(request_for("scripted/paid", json_schema={"type": "object"}))
    await client.chat(request_for("scripted/paid", text="another question"))
    assert len(model.requests) == 5
    again = await client.chat(request_for("scripted/paid", temperature=0.7))
    assert again.cached and again.text == "t=0.7 n=512"


async def test_stage_and_prompt_hash_do_not_split_the_cache(make_client, scripted, request_for):
    model = scripted("paid", "x")
    client = make_client(cache_scripted=True)
    await client.chat(request_for("scripted/paid", stage="a", prompt_hash="p1"))
    hit = await client.chat(request_for("scripted/paid", stage="b", prompt_hash="p2"))
    assert hit.cached and hit.prompt_hash == "p2"
    assert len(model.requests) == 1


async def test_no_cache_dir_means_no_cache(make_client, scripted, request_for):
    model = scripted("paid", "a", "b")
    client = make_client(cache_dir=None, cache_scripted=True)
    await client.chat(request_for("scripted/paid"))
    assert not (await client.chat(request_for("scripted/paid"))).cached
    assert len(model.requests) == 2


async def test_failed_calls_are_not_cached(make_client, scripted, request_for):
    model = scripted("once", ModelError("scripted/once", "bad"), "good")
    client = make_client(cache_scripted=True)
    with pytest.raises(ModelError):
        await client.chat(request_for("scripted/once"))
    response = await client.chat(request_for("scripted/once"))
    assert response.text == "good" and not response.cached
    assert len(model.requests) == 2


# ----------------------------------------------------------------------------- accounting


async def test_usage_per_stage_and_model(make_client, scripted, request_for):
    scripted("a", responder=lambda r: "one two three", cost_per_token=0.5)
    scripted("b", responder=lambda r: "four", cost_per_token=1.0)
    ledger = UsageLedger()
    client = make_client(ledger=ledger)
    await client.chat(request_for("scripted/a", text="x y", stage="reader"))
    await client.chat(request_for("scripted/a", text="x", stage="reader"))
    await client.chat(request_for("scripted/b", text="x y z", stage="judge.answer"))
    snap = ledger.snapshot()
    reader = snap["by_stage"]["reader"]
    assert reader["calls"] == 2
    assert reader["prompt_tokens"] == 3 and reader["completion_tokens"] == 6
    assert reader["cost_usd"] == pytest.approx((2 + 3 + 1 + 3) * 0.5)
    assert snap["by_stage"]["judge.answer"]["cost_usd"] == pytest.approx(4.0)
    assert snap["by_model"]["scripted/a"]["calls"] == 2
    assert snap["total"]["calls"] == 3
    assert snap["total"]["cost_usd"] == pytest.approx(8.5)


async def test_every_call_records_model_and_prompt_hash(make_client, scripted, request_for):
    scripted("m", "ok", "ok")
    client = make_client()
    given = await client.chat(request_for("scripted/m", prompt_hash="reader-v1"))
    derived = await client.chat(request_for("scripted/m"))
    assert given.prompt_hash == "reader-v1"
    assert derived.prompt_hash == prompt_hash_of(request_for("scripted/m"))
    records = client.ledger.records()
    assert [(r.model, r.prompt_hash) for r in records] == [
        ("scripted/m", "reader-v1"),
        ("scripted/m", derived.prompt_hash),
    ]


# ----------------------------------------------------------------------------- concurrency


class CountingModel(ScriptedModel):
    """Tracks how many calls are inside ``chat`` at once."""

    def __init__(self, name: str, delay_s: float = 0.02) -> None:
        super().__init__(responder=lambda r: "ok", name=name, delay_s=delay_s)
        self.in_flight = 0
        self.max_in_flight = 0

    async def chat(self, request: ChatRequest):  # type: ignore[override]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await super().chat(request)
        finally:
            self.in_flight -= 1


async def test_global_concurrency_bound(make_client, request_for):
    model = register_scripted("slow", CountingModel("scripted/slow"))
    client = make_client(max_concurrency=3)
    texts = [f"q{i}" for i in range(12)]
    await asyncio.gather(*(client.chat(request_for("scripted/slow", text=t)) for t in texts))
    assert model.max_in_flight == 3
    assert len(model.requests) == 12


async def test_per_provider_concurrency_bound(make_client, request_for):
    model = register_scripted("slow", CountingModel("scripted/slow"))
    client = make_client(max_concurrency=10, per_provider_concurrency={"scripted": 2})
    await asyncio.gather(
        *(client.chat(request_for("scripted/slow", text=str(i))) for i in range(8))
    )
    assert model.max_in_flight == 2


def test_client_works_across_event_loops(tmp_path: Path, request_for) -> None:
    model = register_scripted("slow", CountingModel("scripted/slow", delay_s=0.0))
    client = LLMClient(cache=CacheOptions(tmp_path), limits=CallLimits(max_concurrency=2))

    async def burst() -> None:
        await asyncio.gather(
            *(client.chat(request_for("scripted/slow", text=str(i))) for i in range(4))
        )

    asyncio.run(burst())
    asyncio.run(burst())
    assert len(model.requests) == 8
    assert model.max_in_flight <= 2


def test_invalid_concurrency_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        LLMClient(limits=CallLimits(max_concurrency=0))
    with pytest.raises(ValueError, match="per-provider"):
        LLMClient(limits=CallLimits(per_provider={"openai": 0}))


async def test_latency_is_the_calls_own_time_not_its_queueing(make_client, request_for) -> None:
    register_scripted("slowone", ScriptedModel(replies=["a", "b", "c"], delay_s=0.2))
    client = make_client(per_provider_concurrency={"scripted": 1})
    started = asyncio.get_running_loop().time()
    responses = await asyncio.gather(
        *(client.chat(request_for("scripted/slowone")) for _ in range(3))
    )
    wall = asyncio.get_running_loop().time() - started
    assert wall >= 0.6  # one at a time
    for response in responses:  # each waited up to 0.4 s for its slot, worked 0.2 s
        assert 0.19 <= response.latency_s < 0.35
