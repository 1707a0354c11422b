"""Per-item overhead of the strategy graphs: items per second with an instant scripted model.

Every strategy runs ``--items`` questions through ONE strategy instance, ``--concurrency`` at a
time (as the runner does), on a small synthetic document with a scripted model that answers at
once, so what is measured is ScanRAG's and LangGraph's own cost per item (graph wiring,
state handling, trajectory bookkeeping), not a model's. ``agentic_rag+ckpt`` adds the SQLite
checkpointer. Prints one row per strategy: items/s, wall milliseconds per item and CPU
milliseconds per item (the steadier figure on a shared machine); best of ``--repeat`` runs.

    python benchmarks/graph_overhead.py [--items 200] [--concurrency 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CITED = 'Page 3 lists 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'
STRATEGIES: list[tuple[str, str, dict[str, Any], bool]] = [
    # (row label, registered name, parameters, checkpointing)
    ("full_doc", "full_doc", {}, False),
    ("topk_rag", "topk_rag", {"k": 3}, False),
    ("oracle_facts", "oracle_facts", {}, False),
    ("scan", "scan", {"window": 2}, False),
    ("agentic_rag", "agentic_rag", {"k": 2, "pages_per_step": 1, "max_steps": 2}, False),
    ("agentic_rag+ckpt", "agentic_rag", {"k": 2, "pages_per_step": 1, "max_steps": 2}, True),
]


def _reply(request: Any) -> str:
    if request.stage == "planner":
        return json.dumps({"query": "value table"})
    if request.stage == "assessor":
        return json.dumps({"decision": "neighbors"})
    return CITED


class FixedRetriever:
    """A fixed ranking, instantly."""

    name = "fixed"

    def add(self, documents: Sequence[Any]) -> None:
        pass

    def search(self, query: str, k: int, doc_ids: Sequence[str] | None = None) -> list[Any]:
        from scanrag.schemas import PageHit

        doc = doc_ids[0] if doc_ids else "doc"
        return [
            PageHit(doc_id=doc, page=p, score=1.0 / r, rank=r) for r, p in enumerate([3, 1, 5], 1)
        ][:k]

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | None = None
    ) -> list[list[Any]]:
        return [self.search(q, k, doc_ids) for q in queries]

    def manifest(self) -> dict[str, Any]:
        return {"name": self.name}


def report_document() -> Any:
    from scanrag.schemas import Document, Page

    pages = [
        Page(
            number=i, doc_page=str(i), width=612, height=792, text=f"Page {i} body. Value {i * 10}."
        )
        for i in range(1, 7)
    ]
    return Document(id="d" * 16, name="report.pdf", sha256="d" * 64, num_pages=6, pages=pages)


def _samples(n: int) -> list[Any]:
    from scanrag.schemas import BBox, Fact, Region, Sample

    region = Region(page=3, bbox=BBox(x1=0.1, y1=0.3, x2=0.9, y2=0.5), element_type="table")
    return [
        Sample(
            id=f"q{i}",
            doc_ids=["report.pdf"],
            question=f"What value does page 3 report ({i})?",
            answer="30",
            gold_pages=[3],
            gold_regions=[region],
            gold_facts=[Fact(page=3, text="Page 3 lists 30")],
        )
        for i in range(n)
    ]


async def _one(
    label: str, name: str, params: dict[str, Any], ckpt: bool, args: Any
) -> tuple[float, float]:
    from scanrag.llm import ScriptedModel
    from scanrag.protocols import RunSettings, StrategyContext
    from scanrag.registry import STRATEGIES as REGISTRY

    strategy = REGISTRY.create(name, **params)
    document = report_document()
    model = ScriptedModel(responder=_reply)
    work = Path(tempfile.mkdtemp(prefix="scanrag-overhead-"))
    samples = _samples(args.items)
    gate = asyncio.Semaphore(args.concurrency)
    statuses: list[str] = []

    async def run(sample: Any) -> None:
        ctx = StrategyContext(
            llm=model,
            documents={"report.pdf": document},
            models={"reader": "scripted/reader"},
            retriever=FixedRetriever(),
            checkpoint_dir=work / "ckpt" if ckpt else None,
            settings=RunSettings(run_key=label),
        )
        async with gate:
            trajectory = await strategy.run(sample, ctx)
        statuses.append(trajectory.status.value)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(run(s) for s in samples))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    shutil.rmtree(work, ignore_errors=True)
    bad = [s for s in statuses if s != "ok"]
    if bad:
        raise SystemExit(f"{label}: {len(bad)} items not ok: {sorted(set(bad))}")
    return seconds, cpu


async def main_async(args: argparse.Namespace) -> None:
    print(f"{args.items} items, concurrency {args.concurrency}, best of {args.repeat}")
    print(f"{'strategy':<18} {'items/s':>9} {'ms/item':>8} {'cpu ms/item':>12}")
    for label, name, params, ckpt in STRATEGIES:
        if args.only and label not in args.only:
            continue
        runs = [await _one(label, name, params, ckpt, args) for _ in range(args.repeat)]
        wall, cpu = min(w for w, _ in runs), min(c for _, c in runs)
        print(
            f"{label:<18} {args.items / wall:9.1f} {1000 * wall / args.items:8.2f} "
            f"{1000 * cpu / args.items:12.2f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=[])
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
