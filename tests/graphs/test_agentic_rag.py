"""``agentic_rag``: the plan/retrieve/read/assess loop, its budget, and checkpoint resume."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from scanrag.graphs.agentic_rag import AgenticRagStrategy
from scanrag.llm import ContextOverflowError, ModelError
from scanrag.schemas import Status

READ_3 = 'Page 3 lists 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'
READ_EMPTY = "Nothing relevant here. <answer>Unanswerable</answer>"
FINAL = 'The value is 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'


def plan(query: str) -> str:
    return json.dumps({"query": query})


def assess(decision: str, query: str | None = None) -> str:
    return json.dumps({"decision": decision, "query": query})


def _kinds(trajectory) -> list[str]:
    return [s.kind for s in trajectory.steps]


def _read_pages(trajectory) -> list[list[int]]:
    return [s.data["pages"] for s in trajectory.steps if s.kind == "read"]


async def test_neighbors_then_answer(kit: SimpleNamespace, tmp_path: Path) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever([3, 5])
    model = kit.ScriptedModel(
        [plan("value table"), READ_3, assess("neighbors"), READ_EMPTY, assess("answer"), FINAL]
    )
    ctx = kit.make_context(model, [doc], retriever=retriever, checkpoint_dir=tmp_path)
    strategy = AgenticRagStrategy(k=2, pages_per_step=1, max_steps=3)
    trajectory = await strategy.run(kit.make_sample(), ctx)
    assert trajectory.status == Status.OK
    assert _kinds(trajectory) == [
        "prepare", "plan", "retrieve", "read", "assess", "neighbors", "read", "assess", "answer",
    ]  # fmt: skip
    assert _read_pages(trajectory) == [[3], [4]]
    assert trajectory.steps[2].data["new_pages"] == [3]
    assert trajectory.steps[5].data == {"pages": [4]}
    assert trajectory.steps[8].data["forced"] is False
    assert [r.stage for r in model.requests] == [
        "planner", "reader", "assessor", "reader", "assessor", "answer",
    ]  # fmt: skip
    assert retriever.searches == [("value table", 2, [doc.id])]
    assert trajectory.pages == [3] and trajectory.answer == "30"
    assert trajectory.metadata["pages_read"] == [3, 4]
    assert set(trajectory.prompt_hashes) == {"planner", "reader", "assessor", "answer"}
    assert {k: u.calls for k, u in trajectory.usage.items()} == {
        "planner": 1, "reader": 2, "assessor": 2, "answer": 1,
    }  # fmt: skip
    # The final answer is written from the notes, which carry the page-3 citation.
    assert '- Page 3 lists 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]' in (
        model.requests[-1].messages[1].text
    )


async def test_refined_query_skips_the_planner_and_seen_pages(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever(by_query={"first": [2, 3], "second": [3, 6, 7]})
    model = kit.ScriptedModel(
        [plan("first"), READ_EMPTY, assess("refine", "second"), READ_3, assess("answer"), FINAL]
    )
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await AgenticRagStrategy(k=3, pages_per_step=2).run(kit.make_sample(), ctx)
    assert _kinds(trajectory) == [
        "prepare", "plan", "retrieve", "read", "assess", "retrieve", "read", "assess", "answer",
    ]  # fmt: skip
    assert _read_pages(trajectory) == [[2, 3], [6, 7]]
    assert [q for q, _, _ in retriever.searches] == ["first", "second"]
    assert trajectory.metadata["queries"] == ["first", "second"]


async def test_budget_forces_an_answer(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=5)
    retriever = kit.FakeRetriever([1, 2])
    model = kit.ScriptedModel([plan("q"), READ_EMPTY, "<answer>Unanswerable</answer>"])
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await AgenticRagStrategy(max_steps=1).run(kit.make_sample(), ctx)
    assert _kinds(trajectory) == ["prepare", "plan", "retrieve", "read", "answer"]
    assert trajectory.steps[-1].data["forced"] is True
    assert "assessor" not in [r.stage for r in model.requests]
    assert trajectory.answer == "Unanswerable"


async def test_no_new_pages_goes_back_to_planning(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=5)
    retriever = kit.FakeRetriever(by_query={"a": [2], "b": [2], "c": [4]})
    model = kit.ScriptedModel(
        [
            plan("a"),
            READ_EMPTY,
            assess("refine"),
            plan("b"),
            plan("c"),
            READ_3,
            assess("answer"),
            FINAL,
        ]
    )
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await AgenticRagStrategy(k=1, max_steps=3).run(kit.make_sample(), ctx)
    assert _kinds(trajectory) == [
        "prepare", "plan", "retrieve", "read", "assess", "plan", "retrieve", "plan", "retrieve",
        "read", "assess", "answer",
    ]  # fmt: skip
    assert trajectory.steps[6].data["new_pages"] == []
    assert _read_pages(trajectory) == [[2], [4]]


async def test_fruitless_searches_end_in_a_forced_answer(kit: SimpleNamespace) -> None:
    # A two-page document: once both pages are read, every search finds nothing new. The
    # searches spend the budget (2 × max_steps = 4), so the agent answers instead of looping.
    doc = kit.make_document(num_pages=2)
    retriever = kit.FakeRetriever([1, 2])
    model = kit.ScriptedModel(
        [plan("a"), READ_3, assess("refine"), plan("b"), plan("c"), plan("d"), FINAL]
    )
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await AgenticRagStrategy(k=2, pages_per_step=2, max_steps=2).run(
        kit.make_sample(), ctx
    )
    assert trajectory.status == Status.OK
    assert _kinds(trajectory) == [
        "prepare", "plan", "retrieve", "read", "assess", "plan", "retrieve", "plan", "retrieve",
        "plan", "retrieve", "answer",
    ]  # fmt: skip
    assert len(retriever.searches) == 4
    assert trajectory.steps[-1].data["forced"] is True
    assert trajectory.answer == "30"


async def test_overflowing_notes_are_trimmed_not_fatal(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever([3])
    overflow = ContextOverflowError("scripted/reader", "prompt too long")
    long_read = f"Page 3 lists 30 {'and much more ' * 40}{READ_3[len('Page 3 lists 30') :]}"
    model = kit.ScriptedModel(
        [plan("q"), long_read, overflow, assess("answer"), overflow, overflow, FINAL]
    )
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await AgenticRagStrategy(k=1, max_steps=2).run(kit.make_sample(), ctx)
    assert trajectory.status == Status.OK and trajectory.answer == "30"
    fallbacks = [s.data for s in trajectory.steps if s.kind == "fallback"]
    assert [(f["stage"], f["mode"]) for f in fallbacks] == [
        ("assessor", "truncate_notes"), ("answer", "truncate_notes"), ("answer", "truncate_notes"),
    ]  # fmt: skip
    limits = [f["max_chars_per_step"] for f in fallbacks[1:]]
    assert limits[0] > limits[1] >= 80  # halved each time


async def test_unusable_planner_reply_searches_the_question(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    retriever = kit.FakeRetriever([1])
    model = kit.ScriptedModel(["", READ_3, FINAL])
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await AgenticRagStrategy(max_steps=1).run(kit.make_sample(), ctx)
    assert trajectory.steps[1].data["source"] == "question (planner reply unusable)"
    assert retriever.searches[0][0] == "What value does page 3 report?"


async def test_answer_without_citations_keeps_the_evidence_read(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([plan("q"), READ_3, "<answer>30</answer>"])
    ctx = kit.make_context(model, [doc], retriever=kit.FakeRetriever([3]))
    trajectory = await AgenticRagStrategy(max_steps=1).run(kit.make_sample(), ctx)
    assert trajectory.answer == "30" and trajectory.pages == [3]
    assert trajectory.metadata["evidence_source"] == "reading steps"
    assert [f.text for f in trajectory.facts] == ["Page 3 lists 30"]


async def test_retriever_error_stops_the_item(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([plan("q")])
    ctx = kit.make_context(model, [doc], retriever=kit.FakeRetriever(error=RuntimeError("gone")))
    trajectory = await AgenticRagStrategy().run(kit.make_sample(), ctx)
    assert trajectory.status == Status.RETRIEVER_ERROR
    assert _kinds(trajectory) == ["prepare", "plan", "retrieve"]


async def test_plan_first_false_uses_the_question(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([READ_3, FINAL])
    ctx = kit.make_context(model, [doc], retriever=kit.FakeRetriever([3]))
    trajectory = await AgenticRagStrategy(max_steps=1, plan_first=False).run(kit.make_sample(), ctx)
    assert trajectory.steps[1].data == {
        "query": "What value does page 3 report?",
        "source": "question",
    }
    assert [r.stage for r in model.requests] == ["reader", "answer"]


async def test_missing_document_is_an_input_error(kit: SimpleNamespace, tmp_path: Path) -> None:
    ctx = kit.make_context(kit.ScriptedModel([]), [], checkpoint_dir=tmp_path)
    trajectory = await AgenticRagStrategy().run(kit.make_sample(), ctx)
    assert trajectory.status == Status.INPUT_ERROR


async def test_interrupted_question_resumes_from_its_checkpoint(
    kit: SimpleNamespace, tmp_path: Path
) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever([3])
    sample = kit.make_sample()
    strategy = AgenticRagStrategy(k=1, max_steps=3)
    # First run: planner and reader answer (steps 1-2), then the assessor call dies.
    first = kit.ScriptedModel([plan("value"), READ_3, ModelError("scripted/reader", "killed")])
    ctx1 = kit.make_context(first, [doc], retriever=retriever, checkpoint_dir=tmp_path)
    broken = await strategy.run(sample, ctx1)
    assert broken.status == Status.MODEL_ERROR and broken.metadata["resumable"] is True
    assert _kinds(broken) == ["prepare", "plan", "retrieve", "read"]
    assert [r.stage for r in first.requests] == ["planner", "reader", "assessor"]
    # Second run: only the steps after the last saved node run again.
    second = kit.ScriptedModel([assess("answer"), FINAL])
    ctx2 = kit.make_context(second, [doc], retriever=retriever, checkpoint_dir=tmp_path)
    resumed = await strategy.run(sample, ctx2)
    assert resumed.status == Status.OK and resumed.errors == []
    assert [r.stage for r in second.requests] == ["assessor", "answer"]
    assert len(retriever.searches) == 1
    assert _kinds(resumed) == ["prepare", "plan", "retrieve", "read", "assess", "answer"]
    assert resumed.metadata["resumed_at"] == ["assess"]
    assert {k: u.calls for k, u in resumed.usage.items()} == {
        "planner": 1, "reader": 1, "assessor": 1, "answer": 1,
    }  # fmt: skip
    # Third run: the question is finished; its stored trajectory comes back without calls.
    third = kit.ScriptedModel([])
    ctx3 = kit.make_context(third, [doc], retriever=retriever, checkpoint_dir=tmp_path)
    again = await strategy.run(sample, ctx3)
    assert third.requests == [] and again.answer == "30"
    assert again.metadata["from_checkpoint"] is True


async def test_threads_are_keyed_by_run_key_and_sample(
    kit: SimpleNamespace, tmp_path: Path
) -> None:
    doc = kit.make_document(num_pages=4)
    strategy = AgenticRagStrategy(max_steps=1)
    for run_key in ("cell-a", "cell-b"):
        model = kit.ScriptedModel([plan("q"), READ_3, FINAL])
        ctx = kit.make_context(
            model,
            [doc],
            retriever=kit.FakeRetriever([3]),
            checkpoint_dir=tmp_path,
            settings={"run_key": run_key},
        )
        trajectory = await strategy.run(kit.make_sample(), ctx)
        assert len(model.requests) == 3
        assert trajectory.metadata["checkpoint_thread"] == f"{run_key}/q1"
    assert (tmp_path / "agentic_rag.sqlite").is_file()


async def test_model_error_without_checkpointing(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([plan("q"), ModelError("m", "down")])
    ctx = kit.make_context(model, [doc], retriever=kit.FakeRetriever([3]))
    trajectory = await AgenticRagStrategy().run(kit.make_sample(), ctx)
    assert trajectory.status == Status.MODEL_ERROR and trajectory.errors == ["m: down"]
    assert trajectory.metadata["resumable"] is False
