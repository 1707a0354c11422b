"""Executors run the work items of a run: in-process asyncio (``local``) or on Ray (``ray``).

An executor is built from the config's ``runner`` section (``EXECUTORS.create(name,
runner=...)``). It receives a :class:`RunJob` (everything built for the run), the pending
items, a ``sink`` that durably records each finished trajectory, and a ``gate`` asked before
each item starts (it returns a :class:`~scanrag.runner.outcome.Stop` once the budget is
spent). Executors register in :data:`EXECUTORS` like every other extension point.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from scanrag.config import ExperimentConfig, RunnerSpec
from scanrag.llm.types import ChatModel
from scanrag.protocols import PageRenderer, Retriever, RunSettings, Strategy, StrategyContext
from scanrag.registry import Registry
from scanrag.retriever_specs import RetrieverSpecs
from scanrag.rundir import DiskFullError, RunDir, disk_full_reason
from scanrag.runner.components import (
    LoadedDataset,
    build_retriever,
    documents_for,
    retriever_pool,
)
from scanrag.runner.items import WorkItem, execute_item
from scanrag.runner.outcome import Stop, StopKind
from scanrag.runner.usage import UsageTally
from scanrag.schemas import Document, Sample, Status, Trajectory

Sink = Callable[[Trajectory], None]
Gate = Callable[[], Stop | None]


@dataclass
class RunJob:
    """What the stages built for one session of a run."""

    config: ExperimentConfig
    run_dir: Path
    strategies: dict[str, Strategy]
    datasets: dict[str, LoadedDataset]
    settings: RunSettings = field(default_factory=RunSettings)
    llm: ChatModel | None = None
    renderer: PageRenderer | None = None
    documents: dict[Path, Document] = field(default_factory=dict)
    retrievers: dict[str, Retriever] = field(default_factory=dict)
    retriever_specs: RetrieverSpecs | None = None  # as preflight checked them (a fresh start)
    run_tally: UsageTally = field(default_factory=UsageTally)
    phase: Callable[[str | None], None] | None = None  # what a stage is doing (progress)

    def context(self, item: WorkItem) -> StrategyContext:
        if self.llm is None:
            raise RuntimeError("RunJob.llm is not set")
        dataset = self.datasets[item.dataset]
        return StrategyContext(
            llm=self.llm,
            documents=documents_for(dataset, item.sample, self.documents),
            models=dict(item.models),
            retriever=self.retrievers.get(item.retriever) if item.retriever else None,
            renderer=self.renderer,
            checkpoint_dir=self.run_dir / RunDir.CHECKPOINTS,
            settings=self.settings.for_item(item.run_key),
        )

    def all_documents(self) -> list[Document]:
        return list({d.id: d for d in self.documents.values()}.values())

    def all_samples(self) -> list[Sample]:
        return [s for d in self.datasets.values() for s in d.samples]


class Executor(Protocol):
    name: str

    def build_retrievers(
        self, job: RunJob, aliases: Sequence[str], on_done: Callable[[str], None]
    ) -> dict[str, str]:
        """Fill ``job.retrievers``; returns alias → error message for those that failed."""
        ...

    def run_items(
        self, job: RunJob, items: Sequence[WorkItem], sink: Sink, gate: Gate
    ) -> Stop | None:
        """Run items until done or stopped; returns the stop (``None``: all done)."""
        ...

    def close(self) -> None: ...


def build_all_retrievers(
    job: RunJob,
    aliases: Sequence[str],
    on_done: Callable[[str], None],
    build: Callable[[str], Retriever],
) -> dict[str, str]:
    errors: dict[str, str] = {}
    for alias in aliases:
        try:
            job.retrievers[alias] = build(alias)
        except Exception as exc:
            errors[alias] = f"retriever {alias!r} could not be built: {type(exc).__name__}: {exc}"
        on_done(alias)
    return errors


def prepare(job: RunJob, item: WorkItem) -> tuple[WorkItem, StrategyContext | None]:
    """The item's context, or the item marked failed when its context cannot be built."""
    if item.error is not None:
        return item, None
    try:
        return item, job.context(item)
    except Exception as exc:
        message = f"cannot build the strategy context: {type(exc).__name__}: {exc}"
        return replace(item, error=(Status.INTERNAL_ERROR, message)), None


class LocalExecutor:
    """Runs items as asyncio tasks in this process, at most ``runner.concurrency`` at a time.

    The model client bounds concurrent calls per provider; this bounds items in flight, so
    memory stays flat however many items a run has.
    """

    name = "local"

    def __init__(self, runner: RunnerSpec) -> None:
        self.runner = runner

    def build_retrievers(
        self, job: RunJob, aliases: Sequence[str], on_done: Callable[[str], None]
    ) -> dict[str, str]:
        documents = job.all_documents()
        indexes = RunDir(job.run_dir).path / RunDir.INDEXES
        specs = job.retriever_specs or RetrieverSpecs(job.config.retrievers)
        pool = retriever_pool(specs, documents, indexes)  # one build per index
        pool.phase = job.phase

        def build(alias: str) -> Retriever:
            return build_retriever(specs, alias, documents, job.all_samples(), None, pool=pool)

        return build_all_retrievers(job, aliases, on_done, build)

    def run_items(
        self, job: RunJob, items: Sequence[WorkItem], sink: Sink, gate: Gate
    ) -> Stop | None:
        return asyncio.run(self._run(job, items, sink, gate))

    async def _run(
        self, job: RunJob, items: Sequence[WorkItem], sink: Sink, gate: Gate
    ) -> Stop | None:
        queue: Iterator[WorkItem] = iter(items)
        stop: list[Stop] = []
        timeout = self.runner.item_timeout_s

        async def worker() -> None:
            while not stop:
                reason = gate()
                if reason is not None:
                    stop.append(reason)
                    return
                item = next(queue, None)
                if item is None:
                    return
                item, ctx = prepare(job, item)
                trajectory, _ = await execute_item(
                    item,
                    job.strategies.get(item.run_key),
                    ctx,
                    run_tally=job.run_tally,
                    timeout_s=timeout,
                )
                try:
                    sink(trajectory)
                except DiskFullError as exc:
                    stop.append(Stop(StopKind.DISK_FULL, disk_full_reason(exc)))
                    return

        width = max(1, min(self.runner.concurrency, len(items)))
        await asyncio.gather(*(worker() for _ in range(width)))
        return stop[0] if stop else None

    def close(self) -> None:
        return None


EXECUTORS: Registry[Any] = Registry("executor", "scanrag.executors")
EXECUTORS.register("local")(LocalExecutor)
EXECUTORS.register_lazy("ray", "scanrag.runner.ray_executor:RayExecutor")


def make_executor(runner: RunnerSpec) -> Executor:
    """The executor ``runner.executor`` names, built from the ``runner`` section."""
    executor: Executor = EXECUTORS.create(runner.executor, runner=runner)
    return executor
