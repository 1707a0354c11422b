"""Secret scrubbing, environment capture and usage accounting helpers of the runner."""

from __future__ import annotations

import asyncio

from scanrag.llm.scripted import ScriptedModel
from scanrag.llm.types import ChatRequest, ChatResponse, Message
from scanrag.runner.manifest import environment
from scanrag.runner.progress import RunProgress
from scanrag.runner.usage import Budget, MeteredModel, UsageTally
from scanrag.schemas import Usage
from scanrag.scrub import MASK, Scrubber, is_secret_name


def test_secret_names() -> None:
    for name in (
        "OPENAI_API_KEY",
        "api_key",
        "apiKey",
        "ANTHROPIC_AUTH_TOKEN",
        "db_password",
        "token",
        "client_secret",
    ):
        assert is_secret_name(name), name
    for name in ("max_tokens", "tokens", "prompt_tokens", "model", "keywords"):
        assert not is_secret_name(name), name


def test_scrubber_masks_env_values_key_shapes_and_secret_keys() -> None:
    scrubber = Scrubber({"OPENAI_API_KEY": "abcdefgh12345678", "HOME": "/root", "X_TOKEN": "short"})
    assert scrubber.text("key abcdefgh12345678 used") == f"key {MASK} used"
    assert scrubber.text("home /root") == "home /root"
    assert MASK in scrubber.text("Bearer sk-proj-ABCDEFGHIJKLMNOPQRSTUV")
    data = scrubber.data({"params": {"api_key": "anything", "k": 3, "note": ["abcdefgh12345678"]}})
    assert data == {"params": {"api_key": MASK, "k": 3, "note": [MASK]}}
    assert scrubber.data({"api_key": None}) == {"api_key": None}


def test_environment_lists_versions() -> None:
    env = environment()
    assert env["python"] and env["libraries"]["pydantic"]
    assert set(env["git"]) == {"commit", "dirty"}


def test_metered_model_counts_cached_calls_as_free() -> None:
    class Cached(ScriptedModel):
        async def chat(self, request: ChatRequest) -> ChatResponse:
            response = await super().chat(request)
            return response.model_copy(update={"cached": True})

    tally = UsageTally()
    fresh = MeteredModel(ScriptedModel(["a b c"], cost_per_token=0.01), [tally])
    cached = MeteredModel(Cached(["a b c"], cost_per_token=0.01), [tally])
    request = ChatRequest(model="scripted/x", messages=[Message(role="user", content="q q")])
    asyncio.run(fresh.chat(request))
    asyncio.run(cached.chat(request.model_copy(update={"stage": "judge.answer"})))
    by_stage = tally.snapshot()
    assert by_stage["default"].total_tokens == 5 and by_stage["default"].cost_usd > 0
    assert by_stage["judge.answer"] == Usage(calls=1, cached_calls=1)


def test_budget_limits() -> None:
    assert Budget().exceeded(Usage(prompt_tokens=10**9)) is None
    assert Budget(tokens=100).exceeded(Usage(prompt_tokens=60, completion_tokens=40))
    assert Budget(usd=1.0).exceeded(Usage(cost_usd=0.5)) is None
    assert "spent $1.5000 of $1.0000" in str(Budget(usd=1.0).exceeded(Usage(cost_usd=1.5)))


def test_progress_without_a_terminal_logs_one_line_per_stage() -> None:
    lines: list[str] = []
    progress = RunProgress(enabled=False, log=lines.append)
    with progress.stage("run", 3) as stage:
        for _ in range(3):
            stage.advance(usage=Usage(prompt_tokens=10, cost_usd=0.5))
    assert lines[0].startswith("run      3/3 in")
    assert "30 tok $1.5000" in lines[0]
    assert progress.stages["run"]["items"] == 3


def test_progress_bars_render_when_enabled(capsys) -> None:
    progress = RunProgress(enabled=True, log=None)
    with progress.stage("ingest", 2) as stage:
        stage.advance()
        stage.advance()
    assert progress.stages["ingest"]["items"] == 2
