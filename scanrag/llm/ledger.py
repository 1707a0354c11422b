"""Usage accounting of the gateway: every call, and totals per stage and per model.

The ledger is shared by all calls of an ``LLMClient`` (and may be shared between clients).
It is safe to use from several threads and event loops at once.

Cached responses count as calls (``cached_calls=1``) with the token counts of the original
answer and no cost; the cost the original call had is kept in ``CallRecord.saved_usd`` and
summed in ``snapshot()["saved_usd"]``, so a re-run shows what the cache spared.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from pydantic import BaseModel, Field

from scanrag.schemas import Usage


class CallRecord(BaseModel):
    """One gateway call as the ledger saw it."""

    model: str
    stage: str
    prompt_hash: str
    cache_key: str
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    saved_usd: float = 0.0
    latency_s: float = 0.0
    attempts: int = 1
    error: str | None = None
    at: float = Field(default_factory=time.time)


class UsageLedger:
    """Thread-safe tallies of ``Usage`` per stage and per model, plus the call records.

    ``keep_records`` bounds memory on long runs: older records are dropped once the limit is
    reached, the totals are always complete.
    """

    def __init__(self, keep_records: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._keep = keep_records
        self._records: list[CallRecord] = []
        self._by_stage: dict[str, Usage] = {}
        self._by_model: dict[str, Usage] = {}
        self._errors: dict[str, int] = {}
        self._saved_usd = 0.0

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            self._records.append(rec)
            if len(self._records) > self._keep:
                del self._records[: len(self._records) - self._keep]
            self._by_stage[rec.stage] = self._by_stage.get(rec.stage, Usage()).add(rec.usage)
            self._by_model[rec.model] = self._by_model.get(rec.model, Usage()).add(rec.usage)
            self._saved_usd += rec.saved_usd
            if rec.error is not None:
                self._errors[rec.stage] = self._errors.get(rec.stage, 0) + 1

    def by_stage(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self._by_stage)

    def by_model(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self._by_model)

    def total(self) -> Usage:
        with self._lock:
            return Usage.sum(self._by_stage.values())

    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready summary: usage per stage, per model and in total, errors, savings."""
        with self._lock:
            by_stage = {k: v.model_dump() for k, v in sorted(self._by_stage.items())}
            by_model = {k: v.model_dump() for k, v in sorted(self._by_model.items())}
            errors = dict(sorted(self._errors.items()))
            saved = self._saved_usd
            n_records = len(self._records)
        return {
            "by_stage": by_stage,
            "by_model": by_model,
            "total": self.total().model_dump(),
            "errors_by_stage": errors,
            "saved_usd": saved,
            "records": n_records,
        }

    def reset(self) -> None:
        with self._lock:
            self._records.clear()
            self._by_stage.clear()
            self._by_model.clear()
            self._errors.clear()
            self._saved_usd = 0.0
