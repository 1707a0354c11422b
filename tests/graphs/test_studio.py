"""``langgraph.json``: every built-in strategy opens in LangGraph's tooling from its factory."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from scanrag.agents.scope import ItemContext
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

OWN_KEY = {name: "refs" for name in NODES} | {"scan": "windows", "agentic_rag": "pending"}


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


def test_langgraph_json_is_written_from_the_registered_strategies(tmp_path: Path) -> None:
    """One source for the names: the entry points; the file and the factories follow them."""
    from scanrag.graphs import studio

    assert tuple(sorted(NODES)) == studio.STRATEGY_NAMES
    assert all(callable(getattr(studio, name)) for name in studio.STRATEGY_NAMES)
    assert studio.main(["--check", str(REPO / "langgraph.json")]) == 0  # else: rewrite it
    drifted = tmp_path / "langgraph.json"
    stale = {**CONFIG, "graphs": {k: v for k, v in CONFIG["graphs"].items() if k != "scan"}}
    drifted.write_text(json.dumps(stale), encoding="utf-8")
    assert studio.main(["--check", str(drifted)]) == 1
    assert studio.main([str(drifted)]) == 0 and json.loads(drifted.read_text()) == CONFIG


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


@pytest.mark.parametrize("name", sorted(NODES))
def test_each_graph_gives_its_json_schemas(name: str) -> None:
    """What LangGraph Studio's input, output and context panels read (on the lowest Python
    the project supports, which langgraph.json declares)."""
    assert CONFIG["python_version"] == "3.11"
    graph = _load(CONFIG["graphs"][name])()
    for schema in (graph.get_input_jsonschema(), graph.get_output_jsonschema()):
        # the keys every strategy shares, and its own state's (scanrag.agents.state.StrategyState)
        assert {"trajectory", "stop", OWN_KEY[name]} <= set(schema["properties"])
        assert not (set(OWN_KEY.values()) - {OWN_KEY[name]}) & set(schema["properties"])
    context = graph.get_context_jsonschema()
    assert context is not None and context["title"] == "ItemContext"
    assert set(context["required"]) == {"sample", "ctx"}
    inputs = context["$defs"]["ItemInputs"]
    assert {"model", "pdf_dir"} <= set(inputs["required"])
    assert {"retriever", "settings", "plugins"} <= set(inputs["properties"])
    assert "question" in context["$defs"]["Sample"]["properties"]


SCRIPTED_PLUGIN = """
from scanrag.llm.scripted import ScriptedModel, register_scripted

REPLY = 'The total is 30 [page=2, doc_page="2", bbox=[0, 0, 1, 1]]. <answer>30</answer>'
register_scripted("studio-reader", ScriptedModel([REPLY]))
"""


def studio_item(folder: Path) -> tuple[dict, dict]:
    """A PDF, a plugin registering a scripted reader, and an item's input and JSON context
    as LangGraph's HTTP API takes them."""
    import pymupdf

    doc = pymupdf.open()
    for text in ("Introduction.", "The total is 30.", "The end."):
        doc.new_page().insert_text((72, 72), text)
    doc.save(folder / "report.pdf")
    (folder / "studio_reader.py").write_text(SCRIPTED_PLUGIN, encoding="utf-8")
    sample = {
        "id": "q1",
        "doc_ids": ["report.pdf"],
        "question": "What is the total?",
        "answer": "30",
        "gold_pages": [2],
    }
    ctx = {
        "model": "scripted/studio-reader",
        "pdf_dir": str(folder),
        "plugins": [str(folder / "studio_reader.py")],
    }
    start = {
        "trajectory": {"sample_id": "q1", "strategy": "oracle_pages", "doc_ids": ["report.pdf"]}
    }
    return start, {"sample": sample, "ctx": ctx}


@pytest.fixture
def scripted_cleanup():
    import sys

    from scanrag.llm.scripted import clear_scripted

    yield
    clear_scripted()
    sys.modules.pop("studio_reader", None)


async def test_a_graph_runs_from_a_json_context(tmp_path: Path, scripted_cleanup: None) -> None:
    """The context as JSON (what Studio and the HTTP API send) builds the item's live inputs."""
    start, context = studio_item(tmp_path)
    graph = _load(CONFIG["graphs"]["oracle_pages"])()
    final = await graph.ainvoke(start, context=context)
    trajectory = Trajectory.model_validate(final["trajectory"])
    assert trajectory.status == Status.OK and trajectory.answer == "30" and trajectory.pages == [2]


def test_a_json_context_with_a_retriever_and_a_bad_document(
    tmp_path: Path, scripted_cleanup: None
) -> None:
    _, context = studio_item(tmp_path)
    context["ctx"]["retriever"] = "bm25"
    item = ItemContext(**context)
    assert item.primary is not None and item.ctx.retriever is not None
    assert [h.page for h in item.ctx.retriever.search("total", 1)] == [2]
    context["sample"]["doc_ids"] = ["../outside.pdf"]
    with pytest.raises(Exception, match="outside"):
        ItemContext(**context)


def test_a_samples_jsonl_line_and_params_make_a_json_context(
    tmp_path: Path, scripted_cleanup: None
) -> None:
    """A line of a run's samples.jsonl as written (``doc``, ``evidence_pages``, boxes as
    lists) is the context's sample; ``params`` are kept; a broken line says what is wrong."""
    from scanrag.datasets import write_generic
    from scanrag.schemas import BBox, Region, Sample

    _, context = studio_item(tmp_path)
    region = Region(page=2, bbox=BBox(x1=0.1, y1=0.1, x2=0.5, y2=0.2))
    sample = Sample(**context["sample"], gold_regions=[region])
    write_generic([sample], tmp_path / "samples.jsonl")
    line = json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])
    item = ItemContext(**{**context, "sample": line, "params": {"k": 3}})
    assert item.sample == sample and item.primary is not None and dict(item.params) == {"k": 3}
    with pytest.raises(Exception, match="missing field 'doc'"):
        ItemContext(**{**context, "sample": {"id": "q", "question": "?"}})
