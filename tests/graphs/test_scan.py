"""``scan``: one map call per window, then a reduce call; chunking; issues; cross-paper."""

from __future__ import annotations

import re
from types import SimpleNamespace

from scanrag.graphs.scan import ScanStrategy
from scanrag.llm import ContextOverflowError, ModelError
from scanrag.llm.types import ChatRequest
from scanrag.schemas import Status

FINAL = 'The value is 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'
NOTE_3 = 'Page three gives 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]].'


def _pages(request: ChatRequest) -> list[int]:
    return [int(m) for m in re.findall(r"Page (\d+) \(printed", request.messages[1].text)]


def responder(map_reply: dict[int, str | Exception], final: str = FINAL):
    """Map replies keyed by the first page of the window; the reduce call gets ``final``."""

    def reply(request: ChatRequest) -> str:
        if request.stage == "map":
            answer = map_reply.get(_pages(request)[0], "NOTHING")
            if isinstance(answer, Exception):
                raise answer
            return answer
        return final

    return reply


def _kinds(trajectory) -> list[str]:
    return [s.kind for s in trajectory.steps]


async def test_maps_every_window_then_reduces(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=5)
    model = kit.ScriptedModel(responder=responder({3: NOTE_3}))
    trajectory = await ScanStrategy(window=2).run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.status == Status.OK
    assert _kinds(trajectory) == ["prepare", "select", "map", "map", "map", "reduce"]
    assert [s.index for s in trajectory.steps] == list(range(6))
    assert trajectory.steps[1].data["windows"] == [[1, 2], [3, 4], [5]]
    assert [s.data["pages"] for s in trajectory.steps[2:5]] == [[1, 2], [3, 4], [5]]
    assert [s.data["window"] for s in trajectory.steps[2:5]] == [0, 1, 2]
    assert sorted(_pages(r) for r in model.requests if r.stage == "map") == [[1, 2], [3, 4], [5]]
    reduce_text = model.requests[-1].messages[1].text
    assert "--- Notes from page(s) 3, 4 ---" in reduce_text
    assert "Notes from page(s) 1, 2" not in reduce_text  # empty windows are left out
    assert trajectory.metadata["map"] == {"windows": 3, "failed": [], "empty": [0, 2]}
    assert trajectory.pages == [3] and trajectory.answer == "30"
    assert trajectory.usage["map"].calls == 3 and trajectory.usage["reduce"].calls == 1
    assert set(trajectory.prompt_hashes) == {"map", "reduce"}


async def test_window_stride_and_max_windows(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6)
    model = kit.ScriptedModel(responder=responder({}))
    strategy = ScanStrategy(window=3, stride=2, max_windows=2)
    trajectory = await strategy.run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.steps[1].data["windows"] == [[1, 2, 3], [3, 4, 5]]
    assert trajectory.steps[1].data["skipped_windows"] == 1
    [cut] = trajectory.reductions  # page 6 was in no mapped window
    assert (cut.kind, cut.pages_dropped, cut.cause) == ("windows", [6], "max_windows=2")


async def test_overflowing_window_is_split(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    calls: list[list[int]] = []

    def reply(request: ChatRequest) -> str:
        if request.stage == "reduce":
            return FINAL
        pages = _pages(request)
        calls.append(pages)
        if len(pages) > 2:
            raise ContextOverflowError("m", "too long")
        return NOTE_3 if 3 in pages else "NOTHING"

    model = kit.ScriptedModel(responder=reply)
    trajectory = await ScanStrategy(window=4).run(kit.make_sample(), kit.make_context(model, [doc]))
    assert calls == [[1, 2, 3, 4], [1, 2], [3, 4]]
    assert _kinds(trajectory) == ["prepare", "select", "fallback", "map", "map", "reduce"]
    assert trajectory.steps[2].data["split"] == [[1, 2], [3, 4]]
    assert trajectory.steps[2].data["mode"] == "chunk"
    assert trajectory.pages == [3]


async def test_failed_window_is_skipped(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel(responder=responder({1: ModelError("m", "flaky"), 3: NOTE_3}))
    trajectory = await ScanStrategy(window=2).run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.status == Status.OK
    assert _kinds(trajectory) == ["prepare", "select", "model_error", "map", "reduce"]
    assert trajectory.metadata["map"]["failed"] == [0]


async def test_every_window_failing_is_a_model_error(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    model = kit.ScriptedModel(responder=responder({1: ModelError("m", "down")}))
    trajectory = await ScanStrategy(window=2).run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.status == Status.MODEL_ERROR
    assert trajectory.errors == ["every map window failed"]
    assert "reduce" not in [r.stage for r in model.requests]


async def test_reduce_overflow_trims_the_notes(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    long_note = "Fact " + "detail " * 300 + '[page=1, doc_page="1", bbox=[0, 0, 1, 1]].'
    seen: list[int] = []

    def reply(request: ChatRequest) -> str:
        if request.stage == "map":
            return long_note
        seen.append(len(request.messages[1].text))
        if len(seen) == 1:
            raise ContextOverflowError("m", "too long")
        return FINAL

    model = kit.ScriptedModel(responder=reply)
    trajectory = await ScanStrategy(window=1).run(kit.make_sample(), kit.make_context(model, [doc]))
    assert _kinds(trajectory)[-2:] == ["fallback", "reduce"]
    assert trajectory.steps[-2].data["mode"] == "truncate_notes"
    assert seen[1] < seen[0]


async def test_error_detection_reports_issues(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    issue = (
        '<issue family="CF">The total does not match its rows '
        '[page=2, doc_page="2", bbox=[0.1, 0.3, 0.9, 0.5]].\nReasoning:\n1. rows sum to 10\n'
        "2. total says 12\n</issue>\n<answer>One error found.</answer>"
    )
    model = kit.ScriptedModel(responder=responder({1: issue}, final=issue))
    sample = kit.make_sample(task="error_detection", question="Check the tables for errors.")
    trajectory = await ScanStrategy(window=2).run(sample, kit.make_context(model, [doc]))
    assert len(trajectory.issues) == 1
    found = trajectory.issues[0]
    assert found.family == "CF" and found.pages == [2]
    assert found.reasoning_steps == ["rows sum to 10", "total says 12"]
    assert "<issue" in model.requests[0].messages[0].text
    assert (
        "Possible error [CF] The total does not match its rows"
        in model.requests[-1].messages[1].text
    )


async def test_issues_from_map_when_reduce_reports_none(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    issue = '<issue family="IC">Overclaimed causality [page=1]. Reasoning: no intervention.</issue>'
    model = kit.ScriptedModel(responder=responder({1: issue}, final="<answer>See above.</answer>"))
    sample = kit.make_sample(task="error_detection", question="Any errors?")
    trajectory = await ScanStrategy(window=2).run(sample, kit.make_context(model, [doc]))
    assert [i.family for i in trajectory.issues] == ["IC"]
    assert trajectory.metadata["issues_source"] == "map steps"
    assert trajectory.metadata["evidence_source"] == "map steps" and trajectory.pages == [1]


async def test_cross_paper_scans_only_the_citing_paper(kit: SimpleNamespace) -> None:
    citing = kit.make_document("citing.pdf", num_pages=4)
    cited = kit.make_document("cited.pdf", num_pages=2)
    model = kit.ScriptedModel(responder=responder({}))
    sample = kit.make_sample(doc_ids=["citing.pdf"], cited_doc_ids=["cited.pdf"])
    trajectory = await ScanStrategy(window=2).run(sample, kit.make_context(model, [citing, cited]))
    assert trajectory.steps[1].data["windows"] == [[1, 2], [3, 4]]
    maps = [r for r in model.requests if r.stage == "map"]
    assert len(maps) == 2
    for request in maps:
        assert "=== cited.pdf — Page 1" in request.messages[1].text
        assert "=== cited.pdf — Page 2" in request.messages[1].text
    assert "cited.pdf" not in model.requests[-1].messages[1].text


async def test_sin_bench_find_builds_the_chain(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    final = (
        '<evidence anchor="Fig. 2" page="1">Accuracy plateaus '
        "[page=1, bbox=[0, 0, 1, 0.5]].</evidence>\n"
        '<evidence anchor="Table 1">Baseline is 71% [page=2].</evidence>\n<answer>done</answer>'
    )
    model = kit.ScriptedModel(responder=responder({}, final=final))
    sample = kit.make_sample(task="find", question="Which evidence shows the plateau?")
    trajectory = await ScanStrategy(window=2).run(sample, kit.make_context(model, [doc]))
    assert [(e.anchor, e.page) for e in trajectory.evidence_chain] == [
        ("Fig. 2", 1),
        ("Table 1", 2),
    ]
    assert "<evidence" in model.requests[-1].messages[0].text


async def test_a_window_planned_too_long_is_split_before_any_call(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4, texts=["word " * 300] * 4)
    model = kit.ScriptedModel(responder=responder({}), context_window=1500)
    strategy = ScanStrategy(window=4, map_max_tokens=64, max_tokens=64)
    trajectory = await strategy.run(kit.make_sample(), kit.make_context(model, [doc]))
    chunks = [s.data for s in trajectory.steps if s.data.get("mode") == "chunk"]
    assert chunks and chunks[0]["split"] == [[1, 2], [3, 4]]
    assert all(model.prompt_tokens(r) + r.max_tokens <= 1500 for r in model.requests)
    assert not any(r.kind == "context" and r.pages_dropped for r in trajectory.reductions)


async def test_map_calls_are_recorded_with_their_steps_and_replay_sources(
    kit: SimpleNamespace,
) -> None:
    class Replaying(kit.ScriptedModel):  # type: ignore[name-defined, misc]
        async def chat(self, request: ChatRequest):  # type: ignore[no-untyped-def]
            response = await super().chat(request)
            if request.stage != "map":
                return response
            return response.model_copy(update={"cached": True, "cached_from": "run-A"})

    doc = kit.make_document(num_pages=5)
    model = Replaying(responder=responder({3: NOTE_3}))
    trajectory = await ScanStrategy(window=2).run(kit.make_sample(), kit.make_context(model, [doc]))
    calls = trajectory.calls
    assert [c.index for c in calls] == list(range(4))
    assert [c.stage for c in calls] == ["map", "map", "map", "reduce"]
    for call in calls[:3]:  # each map call points at its own window's step
        step = trajectory.steps[call.step]
        assert step.kind == "map" and f"Page {step.data['pages'][0]} " in call.user[0].text
    assert trajectory.steps[calls[3].step].kind == "reduce"
    assert all(c.system_of in (None, *range(c.index)) for c in calls)
    assert [c.cached_from for c in calls] == ["run-A", "run-A", "run-A", None]
    assert trajectory.replayed_from == ["run-A"]
