"""``topk_rag``: retrieval scope, rank/page order, retriever failures, drop fallback."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scanrag.graphs.topk_rag import TopKRagStrategy
from scanrag.llm import ContextOverflowError
from scanrag.schemas import Status

REPLY = 'Page 5 gives 50 [page=5, doc_page="5", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>50</answer>'


def _page_order(request) -> list[int]:
    import re

    return [int(m) for m in re.findall(r"=== Page (\d+) ", request.messages[1].text)]


@pytest.mark.parametrize(("order", "expected"), [("rank", [5, 2, 7]), ("page", [2, 5, 7])])
async def test_reads_top_k_in_the_chosen_order(
    kit: SimpleNamespace, order: str, expected: list[int]
) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever([5, 2, 7, 1])
    model = kit.ScriptedModel([REPLY])
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await TopKRagStrategy(k=3, order=order).run(kit.make_sample(), ctx)
    assert retriever.searches == [("What value does page 3 report?", 3, [doc.id])]
    assert [s.kind for s in trajectory.steps] == ["prepare", "retrieve", "read"]
    retrieve = trajectory.steps[1].data
    assert retrieve["order"] == order and retrieve["read_order"] == expected
    assert [h["page"] for h in retrieve["hits"]] == [5, 2, 7]
    assert _page_order(model.requests[0]) == expected
    assert trajectory.steps[2].data["pages"] == expected
    assert trajectory.metadata["page_order"] == order
    assert trajectory.pages == [5] and trajectory.answer == "50"


async def test_page_cap_limits_k(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=8)
    retriever = kit.FakeRetriever([5, 2, 7, 1])
    ctx = kit.make_context(kit.ScriptedModel([REPLY]), [doc], retriever=retriever)
    trajectory = await TopKRagStrategy(k=4, page_cap=2).run(kit.make_sample(), ctx)
    assert trajectory.steps[1].data["k"] == 2
    assert [h["page"] for h in trajectory.steps[1].data["hits"]] == [5, 2]
    [cap] = trajectory.reductions  # the hits the cap kept out of the top 4
    assert (cap.kind, cap.pages_dropped, cap.limit) == ("page_cap", [7, 1], 2)


async def test_retriever_error_is_recorded_and_nothing_is_read(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    retriever = kit.FakeRetriever(error=KeyError("unknown doc"))
    model = kit.ScriptedModel([])
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await TopKRagStrategy().run(kit.make_sample(), ctx)
    assert trajectory.status == Status.RETRIEVER_ERROR
    assert "retriever fake failed: KeyError" in trajectory.errors[0]
    assert [s.kind for s in trajectory.steps] == ["prepare", "retrieve"]
    assert model.requests == []


async def test_no_retriever_configured(kit: SimpleNamespace) -> None:
    ctx = kit.make_context(kit.ScriptedModel([]), [kit.make_document()])
    trajectory = await TopKRagStrategy().run(kit.make_sample(), ctx)
    assert trajectory.status == Status.RETRIEVER_ERROR
    assert trajectory.errors == ["no retriever configured for this strategy"]


async def test_overflow_drops_the_worst_ranked_pages(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6, texts=["words " * 600] * 6)
    retriever = kit.FakeRetriever([6, 1, 4, 2])
    model = kit.ScriptedModel([ContextOverflowError("m", "too long"), REPLY])
    ctx = kit.make_context(model, [doc], retriever=retriever)
    trajectory = await TopKRagStrategy(k=4, order="page").run(kit.make_sample(), ctx)
    fallback = trajectory.steps[2]
    assert fallback.kind == "fallback" and fallback.data["mode"] == "drop"
    kept = trajectory.steps[3].data["pages"]
    # Half the content fits: the two best-ranked pages stay, in page order.
    assert kept == [1, 6]
    assert fallback.data["dropped_pages"] == [2, 4]


async def test_hits_outside_the_document_are_ignored(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=3)
    retriever = kit.FakeRetriever([2, 9])
    ctx = kit.make_context(kit.ScriptedModel([REPLY]), [doc], retriever=retriever)
    trajectory = await TopKRagStrategy(k=2).run(kit.make_sample(), ctx)
    assert trajectory.steps[2].data["pages"] == [2]
    assert trajectory.metadata["ignored_hits"] == 1


def test_bad_parameters_are_rejected() -> None:
    with pytest.raises(ValueError, match="order"):
        TopKRagStrategy(order="random")
    with pytest.raises(ValueError, match="k must be"):
        TopKRagStrategy(k=0)
    with pytest.raises(ValueError, match="modality"):
        TopKRagStrategy(modality="audio")
