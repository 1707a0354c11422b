"""One compiled graph per strategy instance: per-item inputs in the state and the run context,
concurrent items through one instance give the same trajectories as one at a time."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scanrag.agents.scope import ItemContext
from scanrag.graphs.base import edge
from scanrag.llm.types import ChatRequest
from scanrag.registry import STRATEGIES
from scanrag.schemas import PageHit, Status, Trajectory

NAMES = [
    "full_doc", "topk_rag", "agentic_rag", "scan", "oracle_pages", "oracle_regions", "oracle_facts",
]  # fmt: skip


def _reply(request: ChatRequest) -> str:
    """A reply that depends on the item: it searches, cites and answers the page the
    question names."""
    page = re.findall(r"page (\d) report", request.messages[1].text)[-1]
    if request.stage == "planner":
        return json.dumps({"query": f"page {page}"})
    if request.stage == "assessor":
        return json.dumps({"decision": "answer"})
    return f'Page {page} lists it [page={page}, doc_page="{page}"]. <answer>{page}</answer>'


class _PageRetriever:
    """Ranks first the page a query names ("... page 4 ..."), then page 1."""

    name = "page"

    def search(self, query: str, k: int, doc_ids: Any = None) -> list[PageHit]:
        named = [int(d) for d in re.findall(r"page (\d)", query)]
        pages = list(dict.fromkeys([*named, 1]))[:k]
        return [
            PageHit(doc_id=doc_ids[0], page=p, score=1.0, rank=r) for r, p in enumerate(pages, 1)
        ]


def _samples(kit: SimpleNamespace) -> list[Any]:
    return [
        kit.make_sample(
            id=f"q{p}",
            question=f"What value does page {p} report?",
            gold_pages=[p],
            gold_regions=[],
        )
        for p in (1, 2, 3, 4, 5, 6)
    ]


def _comparable(trajectory: Trajectory) -> dict[str, Any]:
    """The trajectory without wall-clock figures."""
    data = trajectory.model_dump(mode="json", exclude={"timings"})
    for step in data["steps"]:
        step["seconds"] = 0.0
    for call in data["calls"]:
        call["seconds"] = call["latency_s"] = 0.0
    return data


async def _run_all(
    name: str, kit: SimpleNamespace, ckpt: Path, *, concurrent: bool
) -> list[Trajectory]:
    strategy = STRATEGIES.create(name)
    doc = kit.make_document(num_pages=6)
    model = kit.ScriptedModel(responder=_reply, delay_s=0.001)  # calls yield: items interleave

    def ctx() -> Any:
        return kit.make_context(model, [doc], retriever=_PageRetriever(), checkpoint_dir=ckpt)

    samples = _samples(kit)
    if concurrent:
        return list(await asyncio.gather(*(strategy.run(s, ctx()) for s in samples)))
    return [await strategy.run(s, ctx()) for s in samples]


@pytest.mark.parametrize("name", NAMES)
async def test_concurrent_items_match_sequential_ones(
    name: str, kit: SimpleNamespace, tmp_path: Path
) -> None:
    together = await _run_all(name, kit, tmp_path / "a", concurrent=True)
    alone = await _run_all(name, kit, tmp_path / "b", concurrent=False)
    assert [t.status for t in together] == [Status.OK] * 6
    assert [(t.answer, t.pages) for t in together] == [(str(p), [p]) for p in range(1, 7)]
    assert [_comparable(t) for t in together] == [_comparable(t) for t in alone]


@pytest.mark.parametrize("name", NAMES)
async def test_the_graph_is_compiled_once_per_instance(
    name: str, kit: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    strategy = STRATEGIES.create(name)
    calls: list[int] = []
    build = type(strategy).build

    def counting_build(self: Any) -> Any:
        calls.append(1)
        return build(self)

    monkeypatch.setattr(type(strategy), "build", counting_build)
    doc = kit.make_document(num_pages=6)
    model = kit.ScriptedModel(responder=_reply)
    for sample in _samples(kit)[:3]:
        ctx = kit.make_context(model, [doc], retriever=kit.FakeRetriever([3]))
        assert (await strategy.run(sample, ctx)).status == Status.OK
    assert calls == [1]
    assert strategy.graph is strategy.graph


@pytest.mark.parametrize("name", NAMES)
async def test_the_state_is_plain_json(name: str, kit: SimpleNamespace) -> None:
    strategy = STRATEGIES.create(name)
    sample = kit.make_sample(gold_regions=[])
    doc = kit.make_document(num_pages=4)
    ctx = kit.make_context(
        kit.ScriptedModel(responder=_reply), [doc], retriever=kit.FakeRetriever([3])
    )
    start = {"trajectory": Trajectory(sample_id="q1", strategy=name).model_dump(mode="json")}
    final = await strategy.graph.ainvoke(
        start, {"recursion_limit": 50}, context=ItemContext.resolve(sample, ctx)
    )
    json.dumps(final)  # raises for anything that is not plain JSON
    trajectory = Trajectory.model_validate(final["trajectory"])
    assert trajectory.answer == "3" and trajectory.steps[0].kind == "prepare"


async def test_a_run_without_the_item_context_says_what_it_needs() -> None:
    strategy = STRATEGIES.create("full_doc")
    start = {"trajectory": Trajectory(sample_id="q1", strategy="full_doc").model_dump()}
    with pytest.raises(TypeError, match="ItemContext"):
        await strategy.graph.ainvoke(start)


async def test_edges_run_inline_and_get_the_runtime_when_they_ask() -> None:
    def plain(state: dict) -> str:
        return f"plain:{state['x']}"

    def with_runtime(state: dict, runtime: Any) -> str:
        return f"runtime:{runtime}"

    assert await edge(plain)({"x": 1}) == "plain:1"
    assert await edge(with_runtime)({"x": 1}, runtime="rt") == "runtime:rt"
