"""Strategy comparison on the synthetic corpus with the local model (issue 5's closing table).

Runs full_doc, topk_rag (BM25), agentic_rag, scan and oracle_pages on a few synthetic questions
with ``local/smollm2-135m`` through the real gateway, and prints one row per strategy: page
precision / recall / F1 (micro, answerable questions), answer match (normalized gold answer
contained in the predicted one — a cheap stand-in for the answer judge), model calls, tokens
and seconds. Prompts are capped (page text, reply length) so the run fits a CPU.

    python benchmarks/strategies_local.py [--questions 3] [--seed 7] [--model local/smollm2-135m]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SMALL: dict[str, Any] = {"max_tokens": 64, "max_chars_per_page": 300, "block_boxes": False}
STRATEGIES: list[tuple[str, dict[str, Any]]] = [
    ("full_doc", {"page_cap": 4}),
    ("topk_rag", {"k": 2}),
    ("agentic_rag", {"k": 2, "pages_per_step": 1, "max_steps": 2, "planner_max_tokens": 16}),
    ("scan", {"window": 2, "max_windows": 3, "map_max_tokens": 64}),
    ("oracle_pages", {}),
]


def _norm(text: str | None) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", (text or "").lower()).strip()


def answer_match(predicted: str | None, gold: str | None) -> bool:
    gold_n = _norm(gold).replace(",", "")
    pred_n = _norm(predicted).replace(",", "")
    return bool(gold_n) and gold_n in pred_n


async def run(args: argparse.Namespace) -> None:
    from scanrag.datasets.generic import load_generic
    from scanrag.documents import ingest_pdf
    from scanrag.indexes.bm25 import BM25Index
    from scanrag.llm import LLMClient
    from scanrag.llm.options import CallLimits
    from scanrag.protocols import StrategyContext
    from scanrag.registry import STRATEGIES as REGISTRY
    from scanrag.synth import generate_corpus

    work = Path(tempfile.mkdtemp(prefix="scanrag-bench-"))
    generate_corpus(
        work / "corpus",
        seed=args.seed,
        n_docs=1,
        min_pages=10,
        max_pages=10,
        questions_per_doc=args.questions,
        scan_docs=0,
    )
    dataset = load_generic(work / "corpus" / "samples.jsonl")
    samples = [s for s in dataset.samples if s.task == "qa"][: args.questions]
    names = {n for s in samples for n in s.doc_ids}
    documents = {n: ingest_pdf(dataset.pdf_dir / n) for n in names}
    retriever = BM25Index()
    retriever.add(list(documents.values()))
    client = LLMClient(limits=CallLimits(max_concurrency=1))
    print(f"{len(samples)} questions, {sum(d.num_pages for d in documents.values())} pages")
    header = f"{'strategy':<13} {'P':>5} {'R':>5} {'F1':>5} {'ans':>5} {'calls':>5} "
    print(header + f"{'tokens':>7} {'sec':>6} status")
    for name, params in STRATEGIES:
        strategy = REGISTRY.create(name, **SMALL, **params)
        hit = pred = gold = matched = calls = tokens = 0
        statuses: list[str] = []
        started = time.perf_counter()
        for sample in samples:
            ctx = StrategyContext(
                llm=client,
                documents=documents,
                models={"reader": args.model},
                retriever=retriever,
                checkpoint_dir=work / "ckpt" / name,
            )
            trajectory = await strategy.run(sample, ctx)
            statuses.append(trajectory.status.value)
            total = trajectory.total_usage
            calls += total.calls
            tokens += total.total_tokens
            matched += answer_match(trajectory.answer, sample.answer)
            if sample.answerable:
                predicted, truth = set(trajectory.pages), set(sample.gold_pages)
                hit += len(predicted & truth)
                pred += len(predicted)
                gold += len(truth)
        seconds = time.perf_counter() - started
        p = hit / pred if pred else 0.0
        r = hit / gold if gold else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        acc = matched / len(samples) if samples else 0.0
        summary = ",".join(f"{s}:{statuses.count(s)}" for s in sorted(set(statuses)))
        print(
            f"{name:<13} {p:5.2f} {r:5.2f} {f1:5.2f} {acc:5.2f} {calls:5d} {tokens:7d} "
            f"{seconds:6.1f} {summary}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", default="local/smollm2-135m")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
