"""Counting a prompt's tokens through a server's tokenize endpoint is time of its own: timed
per item (``timings["count"]``), per cell in the summary, a column of the cost/time table and
a part of the printed note; each text is sent to the tokenizer once."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from scanrag.config import config_from_dict
from scanrag.llm.types import ChatRequest, Message, TokenCount
from scanrag.rundir import JsonlLog
from scanrag.runner import start_run
from scanrag.runner.summary_table import TABLE_WIDTH, render_table
from scanrag.runner.usage import MeteredModel, UsageTally

LLM_TESTS = Path(__file__).resolve().parents[1] / "llm"
if str(LLM_TESTS) not in sys.path:
    sys.path.insert(0, str(LLM_TESTS))

from fake_openai import FakeOpenAIServer, tiny_synthetic  # noqa: E402

DELAY = 0.3  # seconds the fake tokenizer takes per request


class Counting:
    """A client whose token count takes ``delay`` seconds (and that has no chat)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def count_prompt_tokens(self, request: ChatRequest) -> TokenCount:
        await asyncio.sleep(self.delay)
        return TokenCount(tokens=3, method="test")


def test_the_metering_wrapper_times_token_counts_apart_from_calls() -> None:
    tally = UsageTally()
    metered = MeteredModel(Counting(0.05), [tally])
    request = ChatRequest(model="m", messages=[Message(role="user", content="q")])
    assert asyncio.run(metered.count_prompt_tokens(request)).tokens == 3
    timings = tally.timings()
    assert timings["count"] >= 0.05 and timings["model"] == timings["wait"] == 0.0
    with pytest.raises(AttributeError):  # a client that cannot count still cannot
        MeteredModel(object(), [tally]).count_prompt_tokens  # type: ignore[arg-type]  # noqa: B018


def test_a_run_shows_token_counting_as_its_own_stage(tmp_path: Path) -> None:
    from scanrag.evaluation.report import ReportOptions, build_report

    with FakeOpenAIServer(tokenize=True, tokenize_delay_s=DELAY) as server:
        config = {
            "name": "count-time",
            "datasets": [tiny_synthetic(2)],
            "strategies": [{"name": "full_doc", "params": {"output": "json", "max_tokens": 32}}],
            "models": {
                "agents": {"reader": "srv"},
                "entries": {
                    "srv": {
                        "model": "openai/fake-model",
                        "api_base": server.api_base,
                        "context_window": 8192,
                    }
                },
            },
            "runner": {
                "cache_dir": str(tmp_path / "cache"),
                "runs_dir": str(tmp_path / "runs"),
                "progress": False,
                "concurrency": 1,
            },
            "scoring": {"scorers": ["answer_rules"]},
        }
        result = start_run(config_from_dict(config), log=None)
    assert result.exit_code == 0
    rows = list(JsonlLog(result.run_dir / "trajectories.jsonl").rows())
    assert len(rows) == 2 and all(r["timings"]["count"] >= DELAY for r in rows)
    assert len(server.tokenized) == len(set(server.tokenized)) >= 2  # each text counted once
    cell = json.loads((result.run_dir / "summary.json").read_text())["cells"]["full_doc"]
    assert cell["count_seconds_per_item"] >= DELAY
    console = Console(width=TABLE_WIDTH, record=True)
    console.print(render_table(result.summary))
    assert "wait/count/wall s per item: full_doc" in " ".join(console.export_text().split())
    build_report([result.run_dir], tmp_path / "report", options=ReportOptions(n_resamples=0))
    table = (tmp_path / "report" / "comparison.md").read_text().splitlines()
    header = [c.strip() for c in table[0].strip("|").split("|")]
    row = [c.strip() for c in table[2].strip("|").split("|")]
    assert float(row[header.index("count s/q")]) >= DELAY
    index = (tmp_path / "report" / "index.html").read_text()
    assert "count s/q" in index
