"""Model and wait time of model calls: the metering wrapper's split, the trajectory's timings,
the summary's seconds per item and the printed table's sec column."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from rich.console import Console

from scanrag.llm.scripted import ScriptedModel
from scanrag.llm.types import ChatRequest, ChatResponse, Message, ModelError
from scanrag.protocols import RunSettings
from scanrag.runner.items import WorkItem, execute_item
from scanrag.runner.summary_table import TABLE_WIDTH, render_table
from scanrag.runner.usage import MeteredModel, UsageTally
from scanrag.schemas import Sample, Trajectory

REQUEST = ChatRequest(model="scripted/x", messages=[Message(role="user", content="q")])


class Reporting(ScriptedModel):
    """Sleeps ``delay_s`` and reports ``latency`` of it as the call's own time."""

    def __init__(self, latency: float, delay_s: float, cached: bool = False) -> None:
        super().__init__(responder=lambda r: "ok", delay_s=delay_s)
        self.latency = latency
        self.cached = cached

    async def chat(self, request: ChatRequest) -> ChatResponse:
        response = await super().chat(request)
        return response.model_copy(update={"latency_s": self.latency, "cached": self.cached})


def timed(model: Any) -> dict[str, float]:
    tally = UsageTally()
    with contextlib.suppress(ModelError):
        asyncio.run(MeteredModel(model, [tally]).chat(REQUEST))
    return tally.timings()


def test_the_client_latency_is_model_time_and_the_rest_is_waiting() -> None:
    split = timed(Reporting(latency=0.02, delay_s=0.1))
    assert split["model"] == pytest.approx(0.02, abs=1e-3)
    assert split["wait"] >= 0.079  # the call took at least 0.1 s, 0.02 s of it the model's


def test_cache_hits_failures_and_silent_clients() -> None:
    cached = timed(Reporting(latency=0.0, delay_s=0.05, cached=True))
    assert cached["model"] == 0.0 and cached["wait"] > 0.03
    failed = timed(ScriptedModel([ModelError("scripted/x", "down")], delay_s=0.05))
    assert failed["model"] == 0.0 and failed["wait"] > 0.03
    silent = timed(ScriptedModel(["ok"], delay_s=0.05))  # reports no latency: all model time
    assert silent["model"] > 0.03 and silent["wait"] == 0.0


class Strategy:
    name = "s"

    async def run(self, sample: Sample, ctx: Any) -> Trajectory:
        await ctx.llm.chat(REQUEST)
        await ctx.llm.chat(REQUEST)
        return Trajectory(sample_id=sample.id, strategy="s", answer="ok")


def test_each_item_gets_its_model_and_wait_seconds() -> None:
    from types import SimpleNamespace

    sample = Sample(id="q", doc_ids=["d.pdf"], question="?")
    item = WorkItem(run_key="s", strategy="s", sample=sample, dataset="d")
    ctx = SimpleNamespace(
        llm=Reporting(latency=0.01, delay_s=0.03), documents={}, settings=RunSettings()
    )
    run_tally = UsageTally()
    trajectory, _ = asyncio.run(execute_item(item, Strategy(), ctx, run_tally=run_tally))  # type: ignore[arg-type]
    timings = trajectory.timings
    assert timings["model"] == pytest.approx(0.02, abs=1e-3)
    assert timings["wait"] >= 0.039  # two calls of at least 0.03 s, 0.01 s each of model time
    assert timings["total"] >= timings["model"] + timings["wait"] - 1e-3
    assert run_tally.timings()["model"] == pytest.approx(0.02, abs=1e-3)


def _summary(timed_cells: bool) -> dict[str, Any]:
    cells = {
        key: {
            "items": 2,
            "status": {"ok": 2},
            "seconds_per_item": 40.3,
            "usd_per_item": 0.0,
            "model_seconds_per_item": 12.1 if timed_cells else None,
            "wait_seconds_per_item": 27.9 if timed_cells else None,
        }
        for key in ("full_doc", "topk_rag+bm25")
    }
    headline = {key: {"answer.accuracy": 0.5} for key in cells}
    return {"name": "t", "counts": {"trajectories": 4}, "headline": headline, "cells": cells}


def printed(data: dict[str, Any]) -> str:
    console = Console(width=TABLE_WIDTH, record=True)
    console.print(render_table(data))
    return console.export_text()


def test_the_printed_table_shows_model_seconds_and_names_the_wait() -> None:
    text = printed(_summary(True))
    row = next(line for line in text.splitlines() if line.startswith("full_doc"))
    assert row.split()[-2] == "12.1"  # sec: model seconds, not the 40.3 s wall time
    words = " ".join(text.split())  # the caption wraps at the table's width
    assert "sec=model seconds per item" in words
    assert "wait/wall s per item: full_doc 27.9/40.3, topk_rag+bm25 27.9/40.3" in words
    old = " ".join(printed(_summary(False)).split())  # a run written before calls were timed
    assert "sec=seconds per item" in old and "40.3" in old and "wait/wall" not in old
