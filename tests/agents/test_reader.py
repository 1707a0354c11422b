"""The reader node: model call, parse, usage and hashes, context fallbacks, failures."""

from __future__ import annotations

from types import SimpleNamespace

from scanrag.agents.common import parse_context
from scanrag.agents.context import TRUNCATION_MARK, ContextOptions, PageRef
from scanrag.agents.planning import ReaderSpec
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.reader import read_pages
from scanrag.llm import ContextOverflowError, ModelError
from scanrag.schemas import Status, Trajectory
from scanrag.tasks import task_spec

REPLY = 'Page 3 reports 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'


def _run(kit: SimpleNamespace, model, doc, refs, spec=None, options=None, **kw):
    ctx = kit.make_context(model, [doc])
    trajectory = Trajectory(sample_id="q1", strategy="test")
    coro = read_pages(
        ctx,
        trajectory,
        refs,
        question="What value?",
        task=task_spec("qa"),
        spec=spec or ReaderSpec(),
        options=options or ContextOptions(),
        parse_ctx=parse_context(doc, []),
        **kw,
    )
    return coro, trajectory


async def test_reads_parses_and_records(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([REPLY])
    coro, trajectory = _run(kit, model, doc, [PageRef(doc, 2), PageRef(doc, 3)])
    result = await coro
    assert result.parsed is not None and result.parsed.answer == "30"
    assert result.parsed.pages == [3] and result.raw == REPLY
    request = model.requests[0]
    assert request.stage == "reader" and request.model == "scripted/reader"
    assert request.prompt_hash == reader_prompt("citations", task_spec("qa")).hash
    assert "=== Page 2 (printed: 2) ===" in request.messages[1].text
    assert request.messages[1].text.rstrip().endswith("Question: What value?")
    assert trajectory.prompt_hashes == {"reader": reader_prompt("citations", task_spec("qa")).hash}
    assert trajectory.models == {"reader": "scripted/reader"}
    assert trajectory.usage["reader"].calls == 1
    assert [(s.kind, s.data["pages"]) for s in trajectory.steps] == [("read", [2, 3])]


async def test_json_output_sends_the_schema(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3)
    model = kit.ScriptedModel(['{"pages": [1], "facts": [], "answer": "10"}'])
    coro, _ = _run(kit, model, doc, [PageRef(doc, 1)], spec=ReaderSpec(output="json"))
    result = await coro
    assert result.parsed is not None and result.parsed.answer == "10"
    assert model.requests[0].json_schema is not None
    assert model.requests[0].json_schema["required"] == ["answer", "pages", "facts"]


async def test_overflow_triggers_truncation_and_retry(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2, texts=["a " * 2000, "b " * 2000])
    model = kit.ScriptedModel([ContextOverflowError("scripted/reader", "too long"), REPLY])
    coro, trajectory = _run(kit, model, doc, [PageRef(doc, 1), PageRef(doc, 2)])
    result = await coro
    assert result.parsed is not None and trajectory.status == Status.OK
    first, second = (r.messages[1].text for r in model.requests)
    assert len(second) < len(first) and TRUNCATION_MARK in second
    kinds = [s.kind for s in trajectory.steps]
    assert kinds == ["fallback", "read"]
    fallback = trajectory.steps[0].data
    assert fallback["trigger"] == "overflow" and fallback["mode"] == "truncate"
    [reduction] = trajectory.reductions
    assert reduction.kind == "context" and reduction.pages_cut == [1, 2]
    assert "refused the prompt as too long" in reduction.cause and trajectory.degraded
    assert trajectory.steps[1].data["truncated_pages"] == [1, 2]


async def test_estimate_over_window_shrinks_before_calling(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3, texts=["w " * 3000] * 3)
    model = kit.ScriptedModel([REPLY])
    spec = ReaderSpec(context_tokens=2500, max_tokens=200)
    coro, trajectory = _run(kit, model, doc, [PageRef(doc, p) for p in (1, 2, 3)], spec=spec)
    await coro
    assert len(model.requests) == 1
    assert trajectory.steps[0].kind == "fallback"
    assert trajectory.steps[0].data["trigger"] == "planned"
    assert trajectory.steps[0].data["window_tokens"] == 2500
    assert model.prompt_tokens(model.requests[0]) + 200 <= 2500


async def test_drop_mode_drops_the_lowest_priority_pages(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4, texts=["z " * 1500] * 4)
    model = kit.ScriptedModel([ContextOverflowError("m", "too long"), REPLY])
    refs = [PageRef(doc, p) for p in (1, 2, 3, 4)]
    spec = ReaderSpec(fallback="drop")
    # Page order 1..4 but rank priority says page 4 is best, page 1 worst.
    coro, trajectory = _run(kit, model, doc, refs, spec=spec, priority=[3, 2, 1, 0])
    await coro
    dropped = trajectory.steps[0].data["dropped_pages"]
    assert dropped and 4 not in dropped and 1 in dropped
    assert trajectory.steps[1].data["pages"] == sorted(set((1, 2, 3, 4)) - set(dropped))


async def test_persistent_overflow_is_a_model_error(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    overflow = ContextOverflowError("m", "too long")
    model = kit.ScriptedModel([overflow] * 4)
    coro, trajectory = _run(kit, model, doc, [PageRef(doc, 1), PageRef(doc, 2)])
    result = await coro
    assert result.parsed is None and trajectory.status == Status.MODEL_ERROR
    assert "context overflow after 3 fallbacks" in trajectory.errors[0]
    assert [s.kind for s in trajectory.steps] == ["fallback"] * 3


async def test_model_error_is_recorded_not_raised(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    model = kit.ScriptedModel([ModelError("m", "provider down")])
    coro, trajectory = _run(kit, model, doc, [PageRef(doc, 1)])
    result = await coro
    assert result.parsed is None and result.error == "m: provider down"
    assert trajectory.status == Status.MODEL_ERROR
    assert trajectory.steps[0].kind == "model_error"


async def test_composites_are_recorded_on_the_trajectory(kit: SimpleNamespace, renderer) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([REPLY])
    ctx = kit.make_context(model, [doc], renderer=renderer)
    trajectory = Trajectory(sample_id="q1", strategy="test")
    await read_pages(
        ctx,
        trajectory,
        [PageRef(doc, p) for p in (1, 2, 3, 4)],
        question="Q?",
        task=task_spec("qa"),
        spec=ReaderSpec(),
        options=ContextOptions(modality="image", max_images=2),
        parse_ctx=None,
    )
    assert [c["pages"] for c in trajectory.metadata["composites"]] == [[1, 2], [3, 4]]
    assert len(model.requests[0].messages[1].images) == 2
