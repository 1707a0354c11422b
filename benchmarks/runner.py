"""Runner throughput, cache replay and memory, with a simulated model (no inference).

A scripted model that sleeps 300 ms per call stands in for a provider. 200 questions × 3
strategies (600 items, one model call each) go through the real runner and the real gateway
(``runner.llm.cache_scripted: true`` opts the scripted model into the response cache):

1. efficiency = ideal / wall, ideal = calls × 0.3 s / concurrency (target ≥ 0.8), for the
   run stage alone and for the whole ``start_run`` (dataset load, ingest, manifest, summary);
2. the same config run again is served from the cache: its wall time over the first run's
   (target ≤ 5 %);
3. resident memory sampled every 50 ms during the first run: start, peak, end, and the growth
   between the first and the last quarter of the run stage (flat: a few MiB at most);
4. the runner's own cost per item: ``ms_per_item`` = run stage ÷ items (with ``--delay 0``, an
   instant model: target ≤ 1 ms), also its CPU milliseconds per item (steadier on a shared
   machine). ``--no-cache`` leaves the response cache out (no cached rerun then), so the figure
   is the runner's alone, not the cache's reads and writes.

Usage: ``python benchmarks/runner.py [--questions 200 | --items 10000] [--concurrency 8]
[--delay 0.3] [--no-cache]``. The load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from scanrag.config import config_from_dict
from scanrag.hashing import stable_hash
from scanrag.llm.scripted import ScriptedModel, register_scripted
from scanrag.llm.types import ChatRequest, ChatResponse, Message
from scanrag.protocols import StrategyContext
from scanrag.registry import STRATEGIES
from scanrag.runner import start_run
from scanrag.schemas import Sample, Trajectory, Usage

MODEL = "scripted/bench-sleep"
PAGE = os.sysconf("SC_PAGE_SIZE")


class SleepingModel(ScriptedModel):
    """Sleeps ``delay_s`` per call and answers a fixed word; keeps no request history."""

    async def chat(self, request: ChatRequest) -> ChatResponse:
        import asyncio

        await asyncio.sleep(self.delay_s)
        self.calls = getattr(self, "calls", 0) + 1
        words = sum(len(m.text.split()) for m in request.messages)
        return ChatResponse(
            text="answer",
            model=request.model,
            usage=Usage(calls=1, prompt_tokens=words, completion_tokens=1),
            prompt_hash=request.prompt_hash,
        )


@STRATEGIES.register("bench_reader", replace=True)
class BenchReader:
    """One model call per question over the first ``pages`` pages of its document."""

    name = "bench_reader"

    def __init__(self, pages: int = 2, style: str = "plain") -> None:
        self.pages = pages
        self.style = style
        self.prompt = f"[{style}] Read the pages and answer. Question: {{q}}\nPages: {{p}}"

    def describe(self) -> dict[str, Any]:
        return {"pages": self.pages, "prompt_hashes": {"reader": stable_hash(self.prompt)}}

    async def run(self, sample: Sample, ctx: StrategyContext) -> Trajectory:
        doc = ctx.documents[sample.primary_doc]
        pages = doc.pages[: self.pages]
        text = self.prompt.format(q=sample.question, p=" ".join(p.text for p in pages))
        request = ChatRequest(
            model=ctx.model_for("reader"),
            messages=[Message(role="user", content=text)],
            stage="reader",
            prompt_hash=stable_hash(self.prompt),
        )
        response = await ctx.llm.chat(request)
        return Trajectory(
            sample_id=sample.id,
            strategy=self.name,
            pages=[p.number for p in pages],
            answer=response.text,
        )


def make_dataset(root: Path, questions: int, docs: int = 20, pages: int = 10) -> Path:
    import pymupdf

    (root / "pdfs").mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        pdf = pymupdf.open()
        for p in range(pages):
            pdf.new_page().insert_text((72, 90), f"Document {d}, page {p + 1}: value {d * p}.")
        pdf.save(root / "pdfs" / f"doc{d:02d}.pdf")
        pdf.close()
    rows = [
        {
            "id": f"b{i:04d}",
            "doc": f"doc{i % docs:02d}.pdf",
            "question": f"What is the value on page {i % pages + 1} (question {i})?",
            "answer": "answer",
            "evidence_pages": [i % pages + 1],
        }
        for i in range(questions)
    ]
    path = root / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class RssSampler:
    """Samples this process's resident set size in a background thread."""

    def __init__(self, interval_s: float = 0.05) -> None:
        self.interval_s = interval_s
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @staticmethod
    def rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * PAGE

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self.rss()))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def config(
    root: Path, dataset: Path, concurrency: int, runs: str, cache: bool = True
) -> dict[str, Any]:
    return {
        "name": "bench",
        "datasets": [{"name": "bench", "path": str(dataset)}],
        "strategies": [
            {"name": "bench_reader", "label": "one_page", "params": {"pages": 1}},
            {"name": "bench_reader", "label": "two_pages", "params": {"pages": 2}},
            {"name": "bench_reader", "label": "terse", "params": {"pages": 2, "style": "terse"}},
        ],
        "models": {"agents": {"reader": MODEL}},
        "runner": {
            "concurrency": concurrency,
            "per_provider": {"scripted": concurrency},
            "cache_dir": str(root / "cache"),
            "runs_dir": str(root / runs),
            "progress": False,
            "llm": {"cache_scripted": cache},
        },
        "scoring": {"enabled": False},
    }


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--items", type=int, help="items in all (3 per question)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--no-cache", action="store_true", help="no response cache")
    args = parser.parse_args()
    questions = -(-args.items // 3) if args.items else args.questions
    load_before = os.getloadavg()

    model = register_scripted("bench-sleep", SleepingModel(name=MODEL, delay_s=args.delay))
    with tempfile.TemporaryDirectory(prefix="scanrag-bench-") as tmp:
        root = Path(tmp)
        dataset = make_dataset(root, questions)
        exp = config_from_dict(
            config(root, dataset, args.concurrency, "runs", cache=not args.no_cache)
        )

        with RssSampler() as sampler:
            t0, cpu0 = time.perf_counter(), time.process_time()
            first = start_run(exp, log=None)
            wall1, cpu1 = time.perf_counter() - t0, time.process_time() - cpu0
        assert first.complete, first.stop_reason
        calls = int(getattr(model, "calls", 0))
        run_stage = first.summary["sessions"][-1]["stages"]["run"]["seconds"]
        ideal = calls * args.delay / args.concurrency

        wall2, cached = float("nan"), 0
        if not args.no_cache:
            t0 = time.perf_counter()
            second = start_run(exp, log=None)
            wall2 = time.perf_counter() - t0
            assert second.complete, second.stop_reason
            cached = second.summary["usage"]["run"]["total"]["cached_calls"]

    items = first.summary["counts"]["trajectories"]
    times = [t for t, _ in sampler.samples]
    rss = [r for _, r in sampler.samples]
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    q1 = [r for t, r in sampler.samples if t - times[0] <= span * 0.25] or rss
    q4 = [r for t, r in sampler.samples if t - times[0] >= span * 0.75] or rss
    load = " ".join(f"{v:.2f}" for v in (*load_before, *os.getloadavg()))
    print(f"items={items} model_calls={calls} delay={args.delay}s concurrency={args.concurrency}")
    print(f"load before/after: {load}")
    print(f"ideal={ideal:.2f}s run_stage={run_stage:.2f}s total_wall={wall1:.2f}s")
    print(f"efficiency_run_stage={ideal / run_stage:.3f}")
    print(f"efficiency_total={ideal / wall1:.3f}")
    print(f"ms_per_item={run_stage / items * 1000:.3f}")
    print(f"cpu_ms_per_item={cpu1 / items * 1000:.3f} (whole start_run, all threads)")
    print(f"cached_rerun_wall={wall2:.3f}s cached_calls={cached} ratio={wall2 / wall1:.4f}")
    print(
        f"rss_start={mib(rss[0])} rss_peak={mib(max(rss))} rss_end={mib(rss[-1])} "
        f"growth_q1_to_q4={mib(max(q4) - max(q1))} samples={len(rss)}"
    )


if __name__ == "__main__":
    main()
