"""``langgraph.json``: every built-in strategy opens in LangGraph's tooling from its factory."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.scope import ItemContext
from scanrag.schemas import Status, Trajectory

REPO = Path(__file__).resolve().parents[2]
CONFIG = json.loads((REPO / "langgraph.json").read_text())
NODES = {
    "full_doc": ["prepare", "select", "read"],
    "topk_rag": ["prepare", "retrieve", "read"],
    "agentic_rag": ["prepare", "plan", "retrieve", "read", "assess", "neighbors", "answer"],
    "scan": ["prepare", "map", "reduce"],
    "oracle_pages": ["prepare", "select", "read"],
    "oracle_regions": ["prepare", "select", "read"],
    "oracle_facts": ["prepare", "select", "read"],
}


def _load(reference: str):
    """Load ``./path.py:name`` the way the LangGraph server does: the file by its path."""
    path, name = reference.split(":")
    spec = importlib.util.spec_from_file_location("studio_graphs", REPO / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def test_every_built_in_strategy_is_listed() -> None:
    from scanrag.registry import STRATEGIES

    assert set(CONFIG["graphs"]) == set(NODES) <= set(STRATEGIES.names())
    assert CONFIG["dependencies"] == ["."]
    assert all(ref.startswith("./graphs/studio.py:") for ref in CONFIG["graphs"].values())


@pytest.mark.parametrize("name", sorted(NODES))
def test_each_factory_gives_the_strategy_graph(name: str) -> None:
    graph = _load(CONFIG["graphs"][name])()
    nodes = [n for n in graph.get_graph().nodes if not n.startswith("__")]
    assert nodes == NODES[name] and graph.name == name
    assert graph.context_schema is ItemContext


async def test_a_factory_graph_runs_an_item_with_params_from_the_config(
    kit: SimpleNamespace,
) -> None:
    graph = _load(CONFIG["graphs"]["topk_rag"])({"configurable": {"params": {"k": 2}}})
    reply = 'It is 30 [page=3, doc_page="3"]. <answer>30</answer>'
    model = kit.ScriptedModel([reply])
    ctx = kit.make_context(model, [kit.make_document()], retriever=kit.FakeRetriever([3, 1, 2]))
    start = {"trajectory": Trajectory(sample_id="q1", strategy="topk_rag").model_dump()}
    final = await graph.ainvoke(start, context=ItemContext.resolve(kit.make_sample(), ctx))
    trajectory = Trajectory.model_validate(final["trajectory"])
    assert trajectory.status == Status.OK and trajectory.answer == "30"
    assert trajectory.steps[1].data["k"] == 2 and trajectory.steps[2].data["pages"] == [3, 1]


def test_unknown_params_are_refused() -> None:
    with pytest.raises(TypeError):
        _load(CONFIG["graphs"]["scan"])({"configurable": {"params": {"windw": 3}}})
