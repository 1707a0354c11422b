"""Every registered strategy: entry points, the Strategy protocol, bad input, task outputs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scanrag.llm import ModelError
from scanrag.protocols import Strategy
from scanrag.registry import STRATEGIES
from scanrag.schemas import EvidencePair, Status, Trajectory

NAMES = [
    "full_doc", "topk_rag", "agentic_rag", "scan", "oracle_pages", "oracle_regions", "oracle_facts",
]  # fmt: skip
GARBAGE = "I would rather not say.\n\nThe pages are long and I keep thinking about them instead."


def _context(kit: SimpleNamespace, model: Any, tmp_path: Path, docs: list | None = None) -> Any:
    docs = [kit.make_document(num_pages=4)] if docs is None else docs
    return kit.make_context(
        model, docs, retriever=kit.FakeRetriever([3, 1]), checkpoint_dir=tmp_path / "ckpt"
    )


@pytest.mark.parametrize("name", NAMES)
def test_entry_point_builds_a_strategy(name: str) -> None:
    strategy = STRATEGIES.create(name)
    assert isinstance(strategy, Strategy) and strategy.name == name
    described = strategy.describe()
    assert described["name"] == name
    assert described["params"]["output"] == "citations"
    assert all(len(h) == 16 for h in described["prompt_hashes"].values())


# One bad value per parameter class, with the key it is reported under.
BAD = {
    "full_doc": {"max_tokens": 0},
    "topk_rag": {"k": 0, "order": "random", "modality": "audio"},
    "agentic_rag": {"pages_per_step": 0, "max_searches": 0, "output": "xml"},
    "scan": {"window": 0, "cited_docs_in": "nowhere", "page_cap": 0},
    "oracle_pages": {"max_images": 0},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_preflight_checks_name_every_bad_value_and_the_constructor_agrees(name: str) -> None:
    from scanrag.params import param_problems

    factory = STRATEGIES.get(name)
    assert param_problems(factory, {}) == []
    problems = param_problems(factory, BAD[name])
    assert sorted(n or "" for n, _ in problems) == sorted(BAD[name])
    assert all(not message.startswith(n or "") for n, message in problems)
    for key, value in BAD[name].items():  # the same rule stops the constructor
        with pytest.raises(ValueError, match=key):
            STRATEGIES.create(name, **{key: value})


@pytest.mark.parametrize("name", NAMES)
def test_parameter_typos_and_types_are_caught_through_the_reader_parameters(name: str) -> None:
    from scanrag.params import param_problems

    factory = STRATEGIES.get(name)
    unknown, wrong_type = param_problems(factory, {"max_tokenz": 9, "temperature": "hot"})
    assert unknown[0] is None and "unexpected keyword argument 'max_tokenz'" in unknown[1]
    assert unknown[1].endswith(
        "output, modality, page_cap, max_images, max_chars_per_page, max_tokens, "
        "context_tokens, block_boxes, temperature"
    )
    assert wrong_type == ("temperature", "Input should be a valid number, got 'hot'")


def test_constructor_params_reach_describe() -> None:
    strategy = STRATEGIES.create(
        "topk_rag", k=7, order="page", modality="both", page_cap=9, output="json"
    )
    params = strategy.describe()["params"]
    assert (params["k"], params["order"], params["modality"], params["page_cap"]) == (
        7, "page", "both", 9,
    )  # fmt: skip
    assert STRATEGIES.create("scan", window=3).describe()["params"]["window"] == 3
    assert STRATEGIES.create("agentic_rag", max_steps=5).describe()["params"]["max_steps"] == 5


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_is_a_type_error(name: str) -> None:
    with pytest.raises(TypeError):
        STRATEGIES.create(name, nonsense=1)


@pytest.mark.parametrize("name", NAMES)
async def test_missing_document_is_an_input_error(
    name: str, kit: SimpleNamespace, tmp_path: Path
) -> None:
    model = kit.ScriptedModel([])
    ctx = _context(kit, model, tmp_path, docs=[])
    trajectory = await STRATEGIES.create(name).run(kit.make_sample(), ctx)
    assert trajectory.status == Status.INPUT_ERROR and model.requests == []
    assert trajectory.sample_id == "q1" and trajectory.strategy == name


@pytest.mark.parametrize("name", NAMES)
async def test_model_error_is_recorded(name: str, kit: SimpleNamespace, tmp_path: Path) -> None:
    model = kit.ScriptedModel(responder=lambda r: (_ for _ in ()).throw(ModelError("m", "down")))
    trajectory = await STRATEGIES.create(name).run(
        kit.make_sample(), _context(kit, model, tmp_path)
    )
    assert trajectory.status == Status.MODEL_ERROR
    expected = "every map window failed" if name == "scan" else "m: down"
    assert trajectory.errors == [expected]


@pytest.mark.parametrize("name", NAMES)
async def test_garbage_is_unparsed_with_raw_kept(
    name: str, kit: SimpleNamespace, tmp_path: Path
) -> None:
    model = kit.ScriptedModel(responder=lambda r: GARBAGE)
    strategy = (
        STRATEGIES.create(name, max_steps=1) if name == "agentic_rag" else STRATEGIES.create(name)
    )
    trajectory = await strategy.run(kit.make_sample(), _context(kit, model, tmp_path))
    assert trajectory.status == Status.UNPARSED
    assert trajectory.raw_output == GARBAGE


@pytest.mark.parametrize("name", ["full_doc", "topk_rag", "oracle_pages"])
async def test_verify_task_gives_a_verdict(name: str, kit: SimpleNamespace, tmp_path: Path) -> None:
    reply = "<verdict>no</verdict> The chain lacks the table [page=3]. <answer>no</answer>"
    model = kit.ScriptedModel([reply])
    sample = kit.make_sample(
        task="verify",
        question="Is the chain enough?",
        gold_chain=[EvidencePair(anchor="Fig. 1", text="curve flattens")],
        metadata={"candidate_answer": "It plateaus."},
    )
    trajectory = await STRATEGIES.create(name).run(sample, _context(kit, model, tmp_path))
    assert trajectory.verdict is False and trajectory.pages == [3]
    user = model.requests[0].messages[1].text
    assert "Answer to check: It plateaus." in user and "- Fig. 1: curve flattens" in user
    assert "<verdict>" in model.requests[0].messages[0].text


@pytest.mark.parametrize("name", ["full_doc", "topk_rag"])
async def test_json_path_for_error_detection(
    name: str, kit: SimpleNamespace, tmp_path: Path
) -> None:
    reply = (
        '{"issues": [{"description": "Sum is wrong", "family": "CF", '
        '"locations": [{"page": 3, "bbox": [0, 0, 1, 0.5]}], "reasoning_steps": ["a", "b"]}], '
        '"answer": "One error."}'
    )
    model = kit.ScriptedModel([reply])
    sample = kit.make_sample(task="error_detection", question="Find errors.")
    strategy = STRATEGIES.create(name, output="json")
    trajectory = await strategy.run(sample, _context(kit, model, tmp_path))
    assert [(i.family, i.pages) for i in trajectory.issues] == [("CF", [3])]
    assert model.requests[0].json_schema["required"] == ["answer", "issues"]


@pytest.mark.parametrize("name", NAMES)
async def test_trajectory_round_trips_through_json(
    name: str, kit: SimpleNamespace, tmp_path: Path
) -> None:
    reply = 'Page 3 says 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'
    model = kit.ScriptedModel(responder=lambda r: '{"decision": "answer"}' if r.stage in (
        "planner", "assessor") else reply)  # fmt: skip
    trajectory = await STRATEGIES.create(name).run(
        kit.make_sample(), _context(kit, model, tmp_path)
    )
    assert trajectory.status == Status.OK and trajectory.pages == [3]
    assert Trajectory.model_validate_json(trajectory.model_dump_json()) == trajectory
