"""Judge calls are planned against the judge model's context window before they are sent."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.llm import LLMClient, Message, ScriptedModel
from scanrag.llm.scripted import register_scripted


class Verdict(BaseModel):
    consistent: bool


LONG = [Message(role="user", content=" ".join(["word"] * 120))]
SHORT = [Message(role="user", content="is it consistent?")]


def _context(llm: object, model: str = "scripted/judge") -> JudgeContext:
    return JudgeContext(llm=llm, config=JudgeConfig(default_model=model, max_tokens=16))  # type: ignore[arg-type]


def test_an_oversized_judge_prompt_is_a_judge_error_without_a_call() -> None:
    model = ScriptedModel(['{"consistent": true}'], context_window=100)
    record, parsed = asyncio.run(_context(model).judge("answer", LONG, Verdict, "h"))
    assert parsed is None
    assert record.status == "judge_error" and record.failed
    assert record.attempts == 0 and record.cause == "not_sent"
    assert record.error is not None and record.error.startswith("not sent: prompt of 120 tokens")
    assert "context window of 100 tokens (scripted model)" in record.error
    assert model.requests == []


def test_a_free_text_judge_call_is_planned_too() -> None:
    model = ScriptedModel(["yes"], context_window=100)
    record = asyncio.run(_context(model).ask("extractor", LONG, "h", max_tokens=8))
    assert (record.status, record.attempts, model.requests) == ("judge_error", 0, [])
    assert "max_tokens=8" in (record.error or "")


def test_the_reply_budget_counts_against_the_window() -> None:
    model = ScriptedModel(['{"consistent": true}'], context_window=100)
    ctx = _context(model)
    fits, _ = asyncio.run(ctx.judge("answer", SHORT, Verdict, "h", max_tokens=90))
    assert fits.status == "ok" and len(model.requests) == 1
    over, _ = asyncio.run(ctx.judge("answer", SHORT, Verdict, "h", max_tokens=99))
    assert over.status == "judge_error" and len(model.requests) == 1


def test_a_judge_without_a_known_window_is_sent_as_before() -> None:
    model = ScriptedModel(["yes"])
    record = asyncio.run(_context(model).ask("extractor", LONG, "h"))
    assert record.status == "ok" and record.raw == "yes" and len(model.requests) == 1


def test_the_gateway_plans_a_judge_call_for_a_served_model() -> None:
    model = register_scripted("judge-small", ScriptedModel(["yes"], context_window=64))
    client = LLMClient()
    record = asyncio.run(_context(client, "scripted/judge-small").ask("answer", LONG, "h"))
    assert record.status == "judge_error" and record.attempts == 0
    assert model.requests == []


def test_the_token_cap_is_sized_to_the_reply_schema() -> None:
    """No fixed 1,024: the cap of a verdict call is sized to its schema, a labelling call's to
    its number of items, and a configured ``max_tokens`` still wins."""
    from scanrag.evaluation.docscope.fact import FactJudgment
    from scanrag.evaluation.reply_budget import reply_tokens

    model = ScriptedModel(responder=lambda r: '{"consistent": true}')
    ctx = JudgeContext(llm=model, config=JudgeConfig(default_model="scripted/j"))
    asyncio.run(ctx.judge("answer", SHORT, Verdict, "h"))
    asyncio.run(ctx.judge("fact", SHORT, FactJudgment, "h", items=2))
    facts = reply_tokens(FactJudgment.model_json_schema(), 2)
    sized = [r.max_tokens for r in model.requests[:2]]  # (the fact reply is retried)
    assert sized == [reply_tokens(Verdict.model_json_schema()), facts] and sized[0] < 1024
    assert reply_tokens(FactJudgment.model_json_schema(), 1) < facts
    fixed = JudgeContext(llm=model, config=JudgeConfig(default_model="scripted/j", max_tokens=300))
    asyncio.run(fixed.judge("answer", SHORT, Verdict, "h"))
    assert model.requests[-1].max_tokens == 300
