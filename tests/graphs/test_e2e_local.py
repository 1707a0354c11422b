"""End to end with the real local model (smollm2-135m) on a tiny synthetic corpus.

Every strategy runs through the real gateway, the real BM25 retriever and ingested PDFs. The
135M model answers poorly, so the assertions are about the pipeline: the trajectory is ok,
unparsed or truncated (never an error), the raw reply is kept, the calls, stages and model are
recorded.
Prompts are kept small (capped pages and characters, short replies) to keep this quick on CPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanrag.protocols import StrategyContext
from scanrag.registry import STRATEGIES
from scanrag.schemas import Sample, Status

pytestmark = pytest.mark.model

MODEL = "local/smollm2-135m"
SMALL: dict[str, Any] = {"max_tokens": 48, "max_chars_per_page": 200, "block_boxes": False}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sample, dict[str, Any], Any]:
    from scanrag.datasets.generic import load_generic
    from scanrag.documents import ingest_pdf
    from scanrag.indexes.bm25 import BM25Index
    from scanrag.synth import generate_corpus

    out = tmp_path_factory.mktemp("synth")
    generate_corpus(out, seed=3, n_docs=1, min_pages=10, max_pages=10, questions_per_doc=1)
    dataset = load_generic(out / "samples.jsonl")
    sample = next(s for s in dataset.samples if s.task == "qa" and s.gold_pages)
    documents = {name: ingest_pdf(dataset.pdf_dir / name) for name in sample.doc_ids}
    retriever = BM25Index()
    retriever.add(list(documents.values()))
    return sample, documents, retriever


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from scanrag.llm import LLMClient
    from scanrag.llm.options import CacheOptions, CallLimits

    cache = CacheOptions(tmp_path_factory.mktemp("llm-cache"))
    return LLMClient(cache=cache, limits=CallLimits(max_concurrency=1))


CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("full_doc", {"page_cap": 2}, ["reader"]),
    ("topk_rag", {"k": 1, "output": "json"}, ["reader"]),
    ("oracle_pages", {}, ["reader"]),
    (
        "agentic_rag",
        {"k": 1, "pages_per_step": 1, "max_steps": 1, "planner_max_tokens": 16},
        ["planner", "reader", "answer"],
    ),
    ("scan", {"window": 1, "max_windows": 2, "map_max_tokens": 48}, ["map", "reduce"]),
]


@pytest.mark.parametrize(("name", "params", "stages"), CASES, ids=[c[0] for c in CASES])
async def test_strategy_with_the_local_model(
    name: str,
    params: dict[str, Any],
    stages: list[str],
    corpus: tuple[Sample, dict[str, Any], Any],
    client: Any,
    tmp_path: Path,
) -> None:
    sample, documents, retriever = corpus
    ctx = StrategyContext(
        llm=client,
        documents=documents,
        models={"reader": MODEL},
        retriever=retriever,
        checkpoint_dir=tmp_path,
    )
    strategy = STRATEGIES.create(name, **SMALL, **params)
    trajectory = await strategy.run(sample, ctx)
    assert trajectory.status in (Status.OK, Status.UNPARSED, Status.TRUNCATED), trajectory.errors
    assert trajectory.raw_output
    assert sorted(trajectory.usage) == sorted(stages)
    assert all(u.calls >= 1 and u.prompt_tokens > 0 for u in trajectory.usage.values())
    assert set(trajectory.models.values()) == {MODEL}
    assert trajectory.steps[0].kind == "prepare"
    assert set(trajectory.pages) <= set(range(1, documents[sample.doc_ids[0]].num_pages + 1))
