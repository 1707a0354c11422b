"""judge_json: JSON extraction, validation, one retry, and the failure statuses."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from scanrag.evaluation.judging import (
    JudgeConfig,
    JudgeContext,
    JudgeParseError,
    judge_json,
    parse_json,
)
from scanrag.llm import Message, ModelError, ScriptedModel
from scanrag.parsing import json_values


class Verdict(BaseModel):
    consistent: bool
    reason: str = ""


class Item(BaseModel):
    id: str
    label: Literal["covered", "imprecise", "not_covered"]


class Items(BaseModel):
    items: list[Item]


MESSAGES = [Message(role="user", content="judge this")]


@pytest.mark.parametrize(
    "text",
    [
        '{"consistent": true, "reason": "same"}',
        'Sure! Here it is:\n```json\n{"consistent": true, "reason": "same"}\n```\nDone.',
        'I think {"consistent": true, "reason": "a {braced} string"} is right',
        '```\n{"consistent": true}\n```',
        'prefix {"broken": } then {"consistent": true}',
    ],
)
def test_parse_json_finds_the_object(text: str) -> None:
    parsed, raw = parse_json(text, Verdict)
    assert parsed.consistent is True
    assert isinstance(raw, dict)


def test_parse_json_wraps_a_bare_list_for_a_single_list_field() -> None:
    parsed, _ = parse_json('[{"id": "GOLD[1]", "label": "covered"}]', Items)
    assert parsed.items[0].label == "covered"


def test_parse_json_rejects_prose_and_wrong_shapes() -> None:
    with pytest.raises(JudgeParseError, match="no JSON"):
        parse_json("the answer is consistent", Verdict)
    with pytest.raises(JudgeParseError, match="consistent"):
        parse_json('{"verdict": "yes"}', Verdict)


def test_parse_json_applies_the_check() -> None:
    def needs_two(items: Items) -> None:
        if len(items.items) != 2:
            raise ValueError("need two labels")

    with pytest.raises(JudgeParseError, match="need two labels"):
        parse_json('{"items": [{"id": "1", "label": "covered"}]}', Items, needs_two)


def test_json_values_prefers_whole_text_then_fences() -> None:
    found = json_values('```json\n{"a": 1}\n```')
    assert found[0] == {"a": 1}


async def test_judge_json_ok_records_everything() -> None:
    llm = ScriptedModel(['{"consistent": false, "reason": "differs"}'])
    record, parsed = await judge_json(
        llm, role="answer", model="m", messages=MESSAGES, schema=Verdict, prompt_hash="h1"
    )
    assert record.status == "ok" and record.attempts == 1
    assert parsed is not None and parsed.consistent is False
    assert record.parsed == {"consistent": False, "reason": "differs"}
    assert record.model == "m" and record.prompt_hash == "h1" and record.role == "answer"
    assert record.usage.calls == 1
    request = llm.requests[0]
    assert request.json_schema == Verdict.model_json_schema()
    assert request.temperature == 0.0 and request.stage == "judge.answer"
    assert request.prompt_hash == "h1"


async def test_judge_json_retries_once_after_malformed_json() -> None:
    llm = ScriptedModel(['{"consistent": tru', '{"consistent": true}'])
    record, parsed = await judge_json(
        llm, role="answer", model="m", messages=MESSAGES, schema=Verdict, prompt_hash="h"
    )
    assert record.status == "ok" and record.attempts == 2 and parsed is not None
    assert record.usage.calls == 2
    retry = llm.requests[1].messages
    assert retry[-2].role == "assistant" and retry[-2].text == '{"consistent": tru'
    assert retry[-1].role == "user" and "could not be used" in retry[-1].text


async def test_judge_json_gives_parse_error_after_two_bad_replies() -> None:
    llm = ScriptedModel(["not json", "still not json"])
    record, parsed = await judge_json(
        llm, role="fact", model="m", messages=MESSAGES, schema=Verdict, prompt_hash="h"
    )
    assert parsed is None
    assert record.status == "judge_parse_error" and record.attempts == 2
    assert record.raw == "still not json" and "no JSON" in (record.error or "")
    assert len(llm.requests) == 2


async def test_judge_json_model_error_is_judge_error_without_retry() -> None:
    llm = ScriptedModel([ModelError("m", "provider down")])
    record, parsed = await judge_json(
        llm, role="answer", model="m", messages=MESSAGES, schema=Verdict, prompt_hash="h"
    )
    assert parsed is None and record.status == "judge_error"
    assert "provider down" in (record.error or "") and len(llm.requests) == 1


async def test_judge_json_model_error_on_retry_is_judge_error() -> None:
    llm = ScriptedModel(["garbage", ModelError("m", "timeout")])
    record, _ = await judge_json(
        llm, role="answer", model="m", messages=MESSAGES, schema=Verdict, prompt_hash="h"
    )
    assert record.status == "judge_error" and record.attempts == 2
    assert record.usage.calls == 1  # the failed call reported no usage


async def test_any_client_failure_is_a_judge_error_not_a_crash() -> None:
    llm = ScriptedModel([RuntimeError("connection pool exhausted")])
    record, parsed = await judge_json(
        llm, role="answer", model="m", messages=MESSAGES, schema=Verdict, prompt_hash="h"
    )
    assert parsed is None and record.status == "judge_error"
    assert record.error == "RuntimeError: connection pool exhausted"


def test_judge_config_roles_and_vision() -> None:
    config = JudgeConfig(default_model="local/qwen2.5-0.5b")
    assert config.model_for("answer") == "local/qwen2.5-0.5b"
    assert config.model_for("region") is None  # local models read no images
    assert "vision" in config.why_not("region")
    config = JudgeConfig.from_options("local/qwen2.5-0.5b", ["region=openai/gpt-4o"])
    assert config.model_for("region") == "openai/gpt-4o"
    assert JudgeConfig(default_model="openai/gpt-4o").model_for("region") == "openai/gpt-4o"
    assert JudgeConfig(default_model="local/x", vision_models=["local/x"]).model_for("region")
    assert JudgeConfig().model_for("fact") is None
    with pytest.raises(ValueError, match="unknown judge roles"):
        JudgeConfig(models={"regoin": "m"})
    with pytest.raises(ValueError, match="ROLE=MODEL"):
        JudgeConfig.from_options(None, ["region"])


def test_judge_config_from_run_mapping() -> None:
    config = JudgeConfig.from_mapping({"default": "openai/gpt-4o-mini", "fact": "m2"})
    assert config.model_for("fact") == "m2" and config.model_for("answer") == "openai/gpt-4o-mini"
    assert JudgeConfig.from_mapping({}).default_model == "local/qwen2.5-0.5b"


async def test_context_skips_roles_without_a_model() -> None:
    ctx = JudgeContext(llm=ScriptedModel([]), config=JudgeConfig(default_model="local/m"))
    record, parsed = await ctx.judge("region", MESSAGES, Verdict, "h", key="page=1")
    assert parsed is None and record.status == "skipped" and record.attempts == 0
    assert record.key == "page=1" and "vision" in (record.error or "")
    no_llm = JudgeContext(config=JudgeConfig(default_model="m"))
    record, _ = await no_llm.judge("answer", MESSAGES, Verdict, "h")
    assert record.status == "skipped"


def test_context_works_across_event_loops() -> None:
    import asyncio

    ctx = JudgeContext(
        llm=ScriptedModel(responder=lambda r: '{"consistent": true}', delay_s=0.01),
        config=JudgeConfig(default_model="m", concurrency=1),
    )

    async def two() -> list[str]:
        results = await asyncio.gather(
            *(ctx.judge("answer", MESSAGES, Verdict, "h") for _ in range(2))
        )
        return [record.status for record, _ in results]

    assert asyncio.run(two()) == ["ok", "ok"]
    assert asyncio.run(two()) == ["ok", "ok"]  # a new loop gets its own semaphore
