"""One unit of work — a (grid cell, sample) pair — and how it turns into a trajectory.

``execute_item`` is shared by every executor. It never raises for a per-item failure: a
strategy exception, a model error or a timeout becomes a trajectory with the matching status.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scanrag.config import RunCell
from scanrag.llm.types import ModelError
from scanrag.protocols import Strategy, StrategyContext
from scanrag.runner.components import LoadedDataset
from scanrag.runner.degraded import settle
from scanrag.runner.usage import MeteredModel, UsageTally
from scanrag.schemas import Document, Sample, Status, Trajectory


@dataclass(frozen=True)
class WorkItem:
    """A sample to run through one grid cell; ``error`` pre-fails it (bad input, no index)."""

    run_key: str
    strategy: str
    sample: Sample
    dataset: str
    models: tuple[tuple[str, str], ...] = ()
    retriever: str | None = None
    error: tuple[Status, str] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.run_key, self.sample.id)


def pending_items(
    cells: Sequence[RunCell], datasets: Sequence[LoadedDataset], done: set[tuple[Any, ...]]
) -> list[tuple[RunCell, LoadedDataset, Any]]:
    """(cell, dataset, sample) triples whose ``(run_key, sample id)`` is not ``done``, in
    sample-major order."""
    pending = []
    for dataset in datasets:
        for sample in dataset.samples:
            for cell in cells:
                if (cell.run_key, sample.id) not in done:
                    pending.append((cell, dataset, sample))
    return pending


def work_items(pending: Sequence[Any], retriever_errors: dict[str, str]) -> list[WorkItem]:
    """The work items of ``pending`` triples; a sample that cannot run (an input error) or
    whose cell's retriever could not be built is pre-failed with that status."""
    items = []
    for cell, dataset, sample in pending:
        error = None
        if sample.id in dataset.bad:
            error = (Status.INPUT_ERROR, dataset.bad[sample.id])
        elif cell.retriever in retriever_errors:
            error = (Status.RETRIEVER_ERROR, retriever_errors[cell.retriever])
        items.append(
            WorkItem(
                run_key=cell.run_key,
                strategy=cell.strategy.name,
                sample=sample,
                dataset=dataset.name,
                models=item_models(cell.models),
                retriever=cell.retriever,
                error=error,
            )
        )
    return items


def item_models(models: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(models.items()))


def base_trajectory(item: WorkItem) -> Trajectory:
    return Trajectory(
        sample_id=item.sample.id,
        strategy=item.strategy,
        run_key=item.run_key,
        doc_ids=list(item.sample.doc_ids),
        models=dict(item.models),
    )


def document_warnings(documents: Mapping[str, Document]) -> list[str]:
    """``"<document name>: <warning>"`` for each document ingestion warned about (a PDF that
    MuPDF repaired when opening it: ``metadata["warning"]``, or only ``repaired`` in documents
    cached before warnings were recorded)."""
    out = []
    for name, document in sorted(documents.items()):
        meta = document.metadata
        warning = meta.get("warning") or (
            "repaired by MuPDF when opened" if meta.get("repaired") == "true" else None
        )
        if warning:
            out.append(f"{name}: {warning}")
    return out


def finish(
    item: WorkItem,
    trajectory: Trajectory,
    seconds: float,
    tally: UsageTally,
    documents: Mapping[str, Document] | None = None,
) -> Trajectory:
    """Stamp the runner's bookkeeping onto a trajectory (with the warnings about the item's
    ``documents`` in ``metadata["warnings"]``)."""
    trajectory.run_key = item.run_key
    trajectory.sample_id = item.sample.id
    if not trajectory.models:
        trajectory.models = dict(item.models)
    if not trajectory.usage:
        trajectory.usage = tally.snapshot()
    trajectory.timings.setdefault("total", round(seconds, 4))
    for name, value in tally.timings().items():  # model and wait seconds of its calls
        trajectory.timings.setdefault(name, value)
    trajectory.metadata.setdefault("dataset", item.dataset)
    if item.retriever is not None:
        trajectory.metadata.setdefault("retriever", item.retriever)
    warnings = document_warnings(documents or {})
    if warnings:
        known = list(trajectory.metadata.get("warnings") or [])
        trajectory.metadata["warnings"] = [*known, *(w for w in warnings if w not in known)]
    return trajectory


async def execute_item(
    item: WorkItem,
    strategy: Strategy | None,
    ctx: StrategyContext | None,
    *,
    run_tally: UsageTally | None = None,
    timeout_s: float | None = None,
) -> tuple[Trajectory, UsageTally]:
    """Run ``item``; returns its trajectory and the usage its model calls incurred."""
    tally = UsageTally()
    started = time.perf_counter()
    if item.error is not None or strategy is None or ctx is None:
        status, message = item.error or (Status.INTERNAL_ERROR, "no strategy for this item")
        trajectory = base_trajectory(item).fail(status, message)
        return finish(item, trajectory, 0.0, tally), tally
    tallies = [tally] if run_tally is None else [tally, run_tally]
    ctx.llm = MeteredModel(ctx.llm, tallies)
    try:
        trajectory = await asyncio.wait_for(strategy.run(item.sample, ctx), timeout_s)
        if not isinstance(trajectory, Trajectory):
            raise TypeError(f"strategy returned {type(trajectory).__name__}, not a Trajectory")
    except TimeoutError:
        trajectory = base_trajectory(item).fail(
            Status.MODEL_ERROR, f"item timed out after {timeout_s:g}s"
        )
    except ModelError as exc:
        trajectory = base_trajectory(item).fail(Status.MODEL_ERROR, str(exc))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        trajectory = base_trajectory(item).fail(
            Status.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
        )
        trajectory.metadata["traceback"] = _short_traceback(exc)
    settle(trajectory, item.sample, ctx.settings.on_degraded)
    seconds = time.perf_counter() - started
    return finish(item, trajectory, seconds, tally, ctx.documents), tally


def _short_traceback(exc: BaseException, limit: int = 6) -> str:
    lines: list[Any] = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-limit)
    return "".join(lines)[-4000:]
