"""Prompts planned against the model's context window before any call, every cut recorded as
a reduction, and ``runner.on_degraded: fail`` stopping a reduced input from being sent."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scanrag.agents.common import call_model, parse_context
from scanrag.agents.context import ContextOptions, PageRef
from scanrag.agents.planning import ReaderSpec
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.reader import read_pages
from scanrag.graphs.full_doc import FullDocStrategy
from scanrag.graphs.topk_rag import TopKRagStrategy
from scanrag.llm import ContextOverflowError
from scanrag.llm.fit import PlannedOverflowError
from scanrag.schemas import Status, Trajectory
from scanrag.tasks import task_spec

REPLY = 'Page 3 says 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'
LONG = "word " * 300  # 300 scripted tokens a page


async def _read(kit: SimpleNamespace, model, doc, pages, *, spec=None, settings=None, **kw):
    ctx = kit.make_context(model, [doc], settings=settings)
    trajectory = Trajectory(sample_id="q1", strategy="test")
    result = await read_pages(
        ctx,
        trajectory,
        [PageRef(doc, p) for p in pages],
        question="What value?",
        task=task_spec("qa"),
        spec=spec or ReaderSpec(max_tokens=50),
        options=ContextOptions(),
        parse_ctx=parse_context(doc, []),
        **kw,
    )
    return result, trajectory


async def test_truncate_plans_to_the_window_and_records_the_cut(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6, texts=[LONG] * 6)
    model = kit.ScriptedModel([REPLY], context_window=1200)
    result, trajectory = await _read(kit, model, doc, range(1, 7))
    assert result.parsed is not None and len(model.requests) == 1  # no refused call
    assert model.prompt_tokens(model.requests[0]) + 50 <= 1200
    plan = trajectory.steps[0].data
    assert (plan["trigger"], plan["window_tokens"], plan["count_method"]) == (
        "planned",
        1200,
        "scripted",
    )
    [reduction] = trajectory.reductions
    assert reduction.kind == "context" and reduction.limit == 1200 and trajectory.degraded
    assert "context window of 1200 tokens (scripted model)" in reduction.cause
    shown = trajectory.steps[-1].data["pages"]
    assert reduction.pages_dropped == [p for p in range(1, 7) if p not in shown]
    assert set(reduction.pages_cut) <= set(shown) and reduction.chars_dropped > 0


async def test_drop_keeps_the_best_ranked_pages(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4, texts=[LONG] * 4)
    model = kit.ScriptedModel([REPLY], context_window=1000)
    spec = ReaderSpec(max_tokens=50, fallback="drop")
    _, trajectory = await _read(kit, model, doc, [1, 2, 3, 4], spec=spec, priority=[4, 3, 2, 1])
    [reduction] = trajectory.reductions
    kept = trajectory.steps[-1].data["pages"]
    assert 4 in kept and 1 in reduction.pages_dropped and not reduction.pages_cut


async def test_a_fitting_prompt_is_sent_whole(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3)
    model = kit.ScriptedModel([REPLY], context_window=5000)
    _, trajectory = await _read(kit, model, doc, [1, 2, 3])
    assert trajectory.reductions == [] and not trajectory.degraded
    assert [s.kind for s in trajectory.steps] == ["read"]


async def test_a_refusal_naming_the_window_is_planned_again(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4, texts=[LONG] * 4)
    refusal = ContextOverflowError("m", "This model's maximum context length is 900 tokens.")
    model = kit.ScriptedModel([refusal, REPLY])
    result, trajectory = await _read(kit, model, doc, [1, 2, 3, 4])
    assert result.parsed is not None and len(model.requests) == 2
    assert model.prompt_tokens(model.requests[1]) + 50 <= 900
    [reduction] = trajectory.reductions  # one record, for the call that went through
    assert "the model refused the prompt" in reduction.cause
    assert "context window of 900 tokens (the model's overflow message)" in reduction.cause


async def test_a_window_too_small_for_any_page_fails_without_a_call(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2, texts=[LONG] * 2)
    model = kit.ScriptedModel([REPLY], context_window=200)
    result, trajectory = await _read(kit, model, doc, [1, 2])
    assert result.parsed is None and model.requests == []
    assert trajectory.status == Status.MODEL_ERROR
    assert "the input cannot fit" in trajectory.errors[0]


async def test_raise_overflow_hands_a_planned_overflow_to_the_caller(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4, texts=[LONG] * 4)
    model = kit.ScriptedModel([REPLY], context_window=1000)
    with pytest.raises(PlannedOverflowError, match="context window of 1000 tokens"):
        await _read(kit, model, doc, [1, 2, 3, 4], on_failure="raise_overflow")
    assert model.requests == []


async def test_on_degraded_fail_sends_nothing_reduced(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6, texts=[LONG] * 6)
    model = kit.ScriptedModel([REPLY], context_window=1200)
    result, trajectory = await _read(kit, model, doc, range(1, 7), settings={"on_degraded": "fail"})
    assert result.parsed is None and model.requests == []
    assert trajectory.status == Status.DEGRADED and trajectory.reductions
    assert trajectory.errors[0].startswith("input reduced below the strategy's promise")


async def test_call_model_refuses_what_cannot_fit(kit: SimpleNamespace) -> None:
    doc = kit.make_document()
    model = kit.ScriptedModel(["ok"], context_window=20)
    ctx = kit.make_context(model, [doc])
    trajectory = Trajectory(sample_id="q1", strategy="test")
    with pytest.raises(PlannedOverflowError, match=r"plus max_tokens=16 exceeds"):
        await call_model(
            ctx,
            trajectory,
            prompt=reader_prompt("citations", task_spec("qa")),
            user="a b c",
            role="reader",
            stage="planner",
            max_tokens=16,
        )
    assert model.requests == [] and trajectory.calls == []


async def test_configured_caps_are_reductions_too(kit: SimpleNamespace, renderer) -> None:
    doc = kit.make_document(num_pages=4, texts=["x" * 500] * 4)
    model = kit.ScriptedModel([REPLY, REPLY])
    ctx = kit.make_context(model, [doc], renderer=renderer, settings={"max_chars_per_page": 300})
    trajectory = await FullDocStrategy(modality="both", max_images=2).run(kit.make_sample(), ctx)
    kinds = {r.kind: r for r in trajectory.reductions}
    assert kinds["char_cap"].pages_cut == [1, 2, 3, 4] and kinds["char_cap"].chars_dropped == 800
    assert kinds["char_cap"].cause == "max_chars_per_page=300"
    assert kinds["image_cap"].images_merged == 4 and kinds["image_cap"].limit == 2
    assert trajectory.degraded


async def test_topk_page_cap_records_the_hits_it_left_out(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever([5, 2, 7, 1])
    ctx = kit.make_context(kit.ScriptedModel([REPLY]), [doc], retriever=retriever)
    trajectory = await TopKRagStrategy(k=4).run(kit.make_sample(), ctx)
    assert trajectory.reductions == [] and not trajectory.degraded  # no cap below k
