"""``full_doc`` driven by the scripted model: pages read, steps, caps, fallbacks, failures."""

from __future__ import annotations

from types import SimpleNamespace

from scanrag.graphs.full_doc import FullDocStrategy
from scanrag.llm import ContextOverflowError, ModelError
from scanrag.schemas import Status

CITED = 'Page 3 lists 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'


def _kinds(trajectory) -> list[str]:
    return [s.kind for s in trajectory.steps]


async def test_reads_the_whole_document_once(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([CITED])
    trajectory = await FullDocStrategy().run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.status == Status.OK and trajectory.strategy == "full_doc"
    assert _kinds(trajectory) == ["prepare", "select", "read"]
    assert trajectory.steps[2].data["pages"] == [1, 2, 3, 4]
    assert trajectory.pages == [3] and trajectory.answer == "30"
    assert [(r.page, r.bbox.as_list()) for r in trajectory.regions] == [(3, [0.1, 0.3, 0.9, 0.5])]
    assert [f.text for f in trajectory.facts] == ["Page 3 lists 30"]
    assert trajectory.raw_output == CITED and trajectory.usage["reader"].calls == 1
    assert len(model.requests) == 1


async def test_page_cap_from_param_or_settings(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6)
    model = kit.ScriptedModel([CITED, CITED])
    t1 = await FullDocStrategy(page_cap=2).run(kit.make_sample(), kit.make_context(model, [doc]))
    assert t1.steps[2].data["pages"] == [1, 2]
    assert t1.steps[1].data["capped_pages"] == [3, 4, 5, 6]
    [cap] = t1.reductions
    assert (cap.kind, cap.pages_dropped, cap.limit) == ("page_cap", [3, 4, 5, 6], 2)
    assert cap.cause == "page_cap=2" and t1.degraded and t1.status == "ok"
    ctx = kit.make_context(model, [doc], settings={"max_pages": 3})
    t2 = await FullDocStrategy().run(kit.make_sample(), ctx)
    assert t2.steps[2].data["pages"] == [1, 2, 3]
    assert t2.reductions[0].cause == "runner.page_caps.max_pages=3"


async def test_image_modality_with_merging(kit: SimpleNamespace, renderer) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([CITED])
    ctx = kit.make_context(model, [doc], renderer=renderer)
    strategy = FullDocStrategy(modality="image", max_images=2)
    trajectory = await strategy.run(kit.make_sample(), ctx)
    assert len(model.requests[0].messages[1].images) == 2
    assert [c["pages"] for c in trajectory.metadata["composites"]] == [[1, 2], [3, 4]]


async def test_overflow_falls_back_to_truncation(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3, texts=["long text " * 400] * 3)
    model = kit.ScriptedModel([ContextOverflowError("scripted/reader", "too long"), CITED])
    trajectory = await FullDocStrategy().run(kit.make_sample(), kit.make_context(model, [doc]))
    assert _kinds(trajectory) == ["prepare", "select", "fallback", "read"]
    assert trajectory.steps[2].data["mode"] == "truncate"
    assert trajectory.steps[3].data["truncated_pages"] == [1, 2, 3]
    assert trajectory.status == Status.OK and trajectory.answer == "30"


async def test_missing_document_is_an_input_error(kit: SimpleNamespace) -> None:
    model = kit.ScriptedModel([])
    sample = kit.make_sample(doc_ids=["absent.pdf"])
    trajectory = await FullDocStrategy().run(sample, kit.make_context(model, [kit.make_document()]))
    assert trajectory.status == Status.INPUT_ERROR
    assert "absent.pdf" in trajectory.errors[0] and model.requests == []


async def test_model_error_and_garbage(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    failing = kit.ScriptedModel([ModelError("scripted/reader", "down")])
    t1 = await FullDocStrategy().run(kit.make_sample(), kit.make_context(failing, [doc]))
    assert t1.status == Status.MODEL_ERROR and t1.errors == ["scripted/reader: down"]
    garbage = "I cannot decide.\n\nThere are many pages and I would rather keep thinking about it."
    t2 = await FullDocStrategy().run(
        kit.make_sample(), kit.make_context(kit.ScriptedModel([garbage]), [doc])
    )
    assert t2.status == Status.UNPARSED and t2.raw_output == garbage


async def test_unexpected_failure_is_an_internal_error(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    model = kit.ScriptedModel([RuntimeError("boom")])
    trajectory = await FullDocStrategy().run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.status == Status.INTERNAL_ERROR
    assert trajectory.errors == ["RuntimeError: boom"]


async def test_cross_paper_item_passes_the_cited_paper_whole(kit: SimpleNamespace) -> None:
    citing = kit.make_document("citing.pdf", num_pages=2)
    cited = kit.make_document("cited.pdf", num_pages=3)
    reply = (
        'Ours is 92 [page=2, doc_page="2", bbox=[0, 0, 1, 0.2]]. '
        'Theirs is 88 [page=3, doc="cited.pdf", bbox=[0, 0, 1, 0.3]]. <answer>92 vs 88</answer>'
    )
    model = kit.ScriptedModel([reply])
    sample = kit.make_sample(doc_ids=["citing.pdf"], cited_doc_ids=["cited.pdf"])
    trajectory = await FullDocStrategy().run(sample, kit.make_context(model, [citing, cited]))
    text = model.requests[0].messages[1].text
    assert "=== citing.pdf — Page 2 (printed: 2) ===" in text
    assert "=== cited.pdf — Page 3 (printed: 3) ===" in text
    assert trajectory.pages == [2]
    assert [(r.page, r.doc_id) for r in trajectory.regions] == [(2, citing.id), (3, cited.id)]


async def test_the_page_cap_on_a_cited_paper_is_recorded(kit: SimpleNamespace) -> None:
    citing = kit.make_document("citing.pdf", num_pages=2)
    cited = kit.make_document("cited.pdf", num_pages=5)
    model = kit.ScriptedModel(["<answer>x</answer>"])
    sample = kit.make_sample(doc_ids=["citing.pdf"], cited_doc_ids=["cited.pdf"])
    strategy = FullDocStrategy(page_cap=3)
    trajectory = await strategy.run(sample, kit.make_context(model, [citing, cited]))
    text = model.requests[0].messages[1].text
    assert "=== cited.pdf — Page 3 (printed: 3) ===" in text and "cited.pdf — Page 4" not in text
    [cap] = trajectory.reductions  # the citing paper fits under the cap
    assert (cap.doc_id, cap.pages_dropped) == (cited.id, [4, 5])


async def test_json_output_path(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3)
    reply = (
        '{"pages": [2], "facts": [{"page": 2, "text": "It says 20", "bbox": [0, 0, 1, 1]}], '
        '"answer": "20"}'
    )
    model = kit.ScriptedModel([reply])
    strategy = FullDocStrategy(output="json")
    trajectory = await strategy.run(kit.make_sample(), kit.make_context(model, [doc]))
    assert trajectory.pages == [2] and trajectory.answer == "20"
    assert trajectory.metadata["parser"] == "json"
    assert model.requests[0].json_schema is not None
