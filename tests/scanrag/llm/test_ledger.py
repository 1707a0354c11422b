"""UsageLedger: totals per stage and model, thread safety, snapshot shape."""

from __future__ import annotations

import threading

import pytest

from scanrag.llm.ledger import CallRecord, UsageLedger
from scanrag.schemas import Usage


def _rec(stage: str, model: str, cost: float = 0.0, **kw: object) -> CallRecord:
    usage = Usage(calls=1, prompt_tokens=10, completion_tokens=2, cost_usd=cost)
    return CallRecord(model=model, stage=stage, prompt_hash="h", cache_key="k", usage=usage, **kw)  # type: ignore[arg-type]


def test_totals_by_stage_and_model() -> None:
    ledger = UsageLedger()
    ledger.record(_rec("reader", "openai/gpt-4o", 0.25))
    ledger.record(_rec("reader", "local/qwen2.5-0.5b"))
    ledger.record(_rec("judge.answer", "openai/gpt-4o", 0.5))
    ledger.record(_rec("judge.answer", "openai/gpt-4o", error="boom"))
    assert ledger.by_stage()["reader"].calls == 2
    assert ledger.by_model()["openai/gpt-4o"].cost_usd == pytest.approx(0.75)
    total = ledger.total()
    assert total.calls == 4 and total.prompt_tokens == 40
    snap = ledger.snapshot()
    assert set(snap) == {"by_stage", "by_model", "total", "errors_by_stage", "saved_usd", "records"}
    assert snap["errors_by_stage"] == {"judge.answer": 1}
    assert snap["by_stage"]["judge.answer"]["cost_usd"] == pytest.approx(0.5)
    ledger.reset()
    assert ledger.total().calls == 0 and ledger.records() == []


def test_records_are_bounded_but_totals_complete() -> None:
    ledger = UsageLedger(keep_records=3)
    for _ in range(10):
        ledger.record(_rec("s", "m"))
    assert len(ledger.records()) == 3
    assert ledger.total().calls == 10


def test_saved_cost_of_cache_hits() -> None:
    ledger = UsageLedger()
    ledger.record(_rec("reader", "m", cached=True, saved_usd=0.125))
    assert ledger.snapshot()["saved_usd"] == pytest.approx(0.125)


def test_thread_safe() -> None:
    ledger = UsageLedger()

    def work() -> None:
        for i in range(500):
            ledger.record(_rec(f"stage{i % 3}", "m", 0.001))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.total().calls == 4000
    assert sum(u.calls for u in ledger.by_stage().values()) == 4000
    assert ledger.by_model()["m"].cost_usd == pytest.approx(4.0)
