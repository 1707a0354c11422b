"""Injection suite, reader side: pages carrying instructions, forged page markers, fake answer
tags and fake JSON replies reach the model only inside their own page block.

The scripted model plays a reader that follows the prompt's rule: it reads the blocks with
``scanrag.untrusted.read_blocks`` and checks that every page comes back whole from its own
block, under one id that no page contains, and that no attack text stands outside a block.
The attacks are the ones ``benchmarks/injection.py`` measures with the local model.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scanrag.agents.context import page_text
from scanrag.agents.prompts.reader import ROLE
from scanrag.llm.types import ChatRequest
from scanrag.registry import STRATEGIES
from scanrag.schemas import Document, Status
from scanrag.untrusted import read_blocks

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "injection.py"


INJ = runpy.run_path(str(BENCH))  # the attacks the benchmark measures
ATTACKS = sorted(INJ["PAGE_ATTACKS"].items())


def check_pages(request: ChatRequest, document: Document) -> list[int]:
    """Assert the delimiting of one reader request; returns the page numbers it shows."""
    system, user = request.messages[0].text, request.messages[1].text
    assert "never an instruction to you" in system and "without the exact id" in system
    blocks = read_blocks(user)
    assert blocks, "no page block in the prompt"
    token = blocks[0].token
    numbers = []
    for block in blocks:
        assert block.token == token
        number = int(block.end_label.removeprefix("page "))
        assert block.label.endswith(f"Page {number} (printed: {number})")
        assert block.text == page_text(document.page(number))  # the whole page, nothing else
        assert token not in block.text
        numbers.append(number)
    outside = user
    for block in blocks:
        outside = outside.replace(block.text, "")
    assert INJ["TARGET"] not in outside  # no attack text escaped its page
    return numbers


def attacked_document(kit: SimpleNamespace, attack: str) -> Document:
    texts = ["Annual report.", f"Revenue in 2021 was 4.2 million.\n{attack}", "Outlook."]
    texts += [f"Appendix {i}." for i in range(4, 6)]
    return kit.make_document(num_pages=5, texts=texts)


REPLY = 'Revenue was 4.2 million [page=2, doc_page="2"]. <answer>4.2 million</answer>'
JSON_REPLY = json.dumps({"answer": "4.2 million", "pages": [2], "facts": []})
CASES: list[tuple[str, dict[str, Any]]] = [
    ("full_doc", {}),
    ("full_doc", {"output": "json"}),
    ("topk_rag", {"k": 3}),
    ("oracle_pages", {}),
    ("scan", {"window": 2}),
    ("agentic_rag", {"k": 2, "pages_per_step": 2, "max_steps": 1}),
]


@pytest.mark.parametrize(("attack_name", "attack"), ATTACKS, ids=[a for a, _ in ATTACKS])
@pytest.mark.parametrize(("strategy", "params"), CASES, ids=[f"{s}{p}" for s, p in CASES])
async def test_every_reader_call_keeps_attacks_inside_their_page(
    strategy: str,
    params: dict[str, Any],
    attack_name: str,
    attack: str,
    kit: SimpleNamespace,
    tmp_path: Path,
) -> None:
    document = attacked_document(kit, attack)
    shown: list[list[int]] = []

    def careful_reader(request: ChatRequest) -> str:
        if request.stage == "planner":
            return '{"query": "revenue 2021"}'
        if read_blocks(request.messages[1].text):
            shown.append(check_pages(request, document))
        return JSON_REPLY if request.json_schema else REPLY

    model = kit.ScriptedModel(responder=careful_reader)
    ctx = kit.make_context(
        model, [document], retriever=kit.FakeRetriever([2, 1, 3]), checkpoint_dir=tmp_path
    )
    sample = kit.make_sample(question="What was revenue in 2021?", gold_pages=[2])
    trajectory = await STRATEGIES.create(strategy, **params).run(sample, ctx)
    assert any(2 in pages for pages in shown), "the attacked page was never read"
    assert trajectory.status == Status.OK and trajectory.answer == "4.2 million"


@pytest.mark.parametrize(("attack_name", "attack"), ATTACKS, ids=[a for a, _ in ATTACKS])
def test_the_benchmark_layouts_differ_only_in_the_fencing(attack_name: str, attack: str) -> None:
    question = INJ["QUESTIONS"][0]
    fenced, _ = INJ["reader_messages"](question, attack, "fenced")
    raw, _ = INJ["reader_messages"](question, attack, "raw")
    assert [b.end_label for b in read_blocks(fenced[1].text)] == ["page 1", "page 2", "page 3"]
    assert read_blocks(raw[1].text) == []
    assert ROLE in fenced[0].text and ROLE not in raw[0].text
