"""The ``ray`` executor: questions and index building spread over a Ray cluster.

Scheduling is Ray's own: each retriever is built inside its own actor (placed by Ray, built in
parallel), and each work item is a ``ray.remote`` task asking for ``runner.ray.cpus_per_item``
CPUs. Tasks reach their retriever through the actor handle. The driver keeps a bounded window
of tasks in flight, writes each finished trajectory as it arrives (so rows are durable and a
resume works exactly as with the local executor) and consults the budget before submitting.

Workers import ``scanrag`` and the config's ``plugins``; documents come from the shared
document cache the ingest stage filled (``runner.cache_dir`` must be visible to every node).

A retriever actor that dies is restarted by Ray (``runner.ray.actor_restarts`` times; the new
one reloads the index saved under the run folder, or rebuilds it) and the searches it owed are
retried. Past that, the driver replaces the actor with a fresh one and runs the items that
lost it again (twice at most) before recording their errors. Ray's long error texts are cut
to their cause: the exception's name and first line, and for a dead worker its exit reason.
What runs on the workers (the item task, the retriever actor) is in
:mod:`scanrag.runner.ray_workers`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from scanrag.config import RunnerSpec
from scanrag.hashing import stable_hash
from scanrag.rundir import DiskFullError, RunDir, disk_full_reason
from scanrag.runner.components import IngestResult
from scanrag.runner.executors import Gate, RunJob, Sink
from scanrag.runner.items import WorkItem, base_trajectory, finish
from scanrag.runner.outcome import Stop, StopKind
from scanrag.runner.ray_workers import (
    ACTOR_GONE,
    HostRefs,
    RemoteRetriever,
    RetrieverHost,
    Shared,
    ray_cause,
    run_item_task,
)
from scanrag.runner.usage import UsageTally, usage_from_json
from scanrag.schemas import Status, Trajectory

ITEM_RETRIES_AFTER_ACTOR_LOSS = 2


# ----------------------------------------------------------------------------- driver side


TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"


@contextlib.contextmanager
def _quiet_token_notice(local: bool) -> Iterator[None]:
    """Keep Ray's "Token authentication is enabled for this Ray cluster" warning out of a
    run that starts its own local cluster: that is Ray's default, nothing to act on (the
    cluster listens on this machine only and its token is in ``~/.ray/auth_token``). Joining
    an existing cluster keeps every Ray message; ``RAY_AUTH_MODE`` still chooses the mode."""
    if not local or "RAY_AUTH_MODE" in os.environ:
        yield
        return
    logger = logging.getLogger(TOKEN_NOTICE_LOGGER)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class RayExecutor:
    """Runs items as Ray tasks; see the module docstring."""

    name = "ray"

    def __init__(self, runner: RunnerSpec) -> None:
        try:
            import ray
        except ImportError as exc:
            raise RuntimeError("the ray executor needs Ray: pip install 'scanrag[ray]'") from exc
        self.spec = spec = runner.ray
        self.ray = ray
        self._owns_cluster = False
        if not ray.is_initialized():
            with _quiet_token_notice(spec.address is None):
                ray.init(
                    address=spec.address,
                    num_cpus=spec.num_cpus if spec.address is None else None,
                    include_dashboard=False,
                    ignore_reinit_error=True,
                    log_to_driver=False,
                )
            self._owns_cluster = True
        self._task: Any = ray.remote(run_item_task).options(
            num_cpus=spec.cpus_per_item, max_retries=1
        )
        restarts = spec.actor_restarts
        self._host: Any = ray.remote(RetrieverHost).options(
            max_restarts=restarts, max_task_retries=restarts
        )
        self._actors: dict[str, Any] = {}
        self._shared_ref: Any = None
        self._lost: dict[tuple[str, str], int] = {}  # item → reruns after losing its actor

    def _shared(self, job: RunJob) -> Any:
        if self._shared_ref is None:
            shared = Shared(
                key=f"{job.run_dir}:{stable_hash(job.config.model_dump(mode='json'))}",
                config=job.config,
                run_dir=str(job.run_dir),
                settings=job.settings,
                pdf_dirs={name: str(d.pdf_dir) for name, d in job.datasets.items()},
                outside_ok={name: d.allow_outside for name, d in job.datasets.items()},
                llm=job.llm,
                all_docs=sorted(str(p) for p in job.documents),
                samples=job.all_samples(),
            )
            self._shared_ref = self.ray.put(shared)
        return self._shared_ref

    def build_retrievers(
        self, job: RunJob, aliases: Sequence[str], on_done: Callable[[str], None]
    ) -> dict[str, str]:
        shared = self._shared(job)
        prebuilt = self._prebuild(job, aliases)  # sharded builds (scanrag.runner.ray_shards)
        pending: dict[str, Any] = {a: self._host.remote(a) for a in aliases}
        waits = {
            actor.ready.remote(HostRefs(shared, prebuilt.get(alias))): alias
            for alias, actor in pending.items()
        }
        errors: dict[str, str] = {}
        while waits:
            ready, _ = self.ray.wait(list(waits), num_returns=1)
            alias = waits.pop(ready[0])
            try:
                self.ray.get(ready[0])
                self._actors[alias] = pending[alias]
                job.retrievers[alias] = RemoteRetriever(alias, pending[alias], HostRefs(shared))
            except Exception as exc:
                errors[alias] = f"retriever {alias!r} could not be built: {ray_cause(exc)}"
            on_done(alias)
        return errors

    def _replace_actor(self, job: RunJob, alias: str) -> bool:
        """A live actor for ``alias``: the current one if it answers, else a new one (its
        index reloaded from the run folder or rebuilt). False when none can be had."""
        current = self._actors.get(alias)
        try:
            if current is not None:
                self.ray.get(current.ready.remote(HostRefs(self._shared(job))))
                return True
        except Exception:
            pass
        fresh = self._host.remote(alias)
        try:
            self.ray.get(fresh.ready.remote(HostRefs(self._shared(job))))
        except Exception:
            return False
        self._actors[alias] = fresh
        job.retrievers[alias] = RemoteRetriever(alias, fresh, HostRefs(self._shared(job)))
        return True

    def _rerun(self, job: RunJob, item: WorkItem, trajectory: Trajectory) -> bool:
        """Whether ``item`` lost its retriever actor and should run again (on a live one)."""
        if item.retriever is None or not any(ACTOR_GONE in e for e in trajectory.errors):
            return False
        count = self._lost.get(item.key, 0)
        if count >= ITEM_RETRIES_AFTER_ACTOR_LOSS:
            return False
        self._lost[item.key] = count + 1
        return self._replace_actor(job, item.retriever)

    def run_items(
        self, job: RunJob, items: Sequence[WorkItem], sink: Sink, gate: Gate
    ) -> Stop | None:
        shared = self._shared(job)
        window = self._window()
        in_flight: dict[Any, WorkItem] = {}
        queue = iter(items)
        stop: Stop | None = None
        try:
            while True:
                while stop is None and len(in_flight) < window:
                    stop = gate()
                    item = next(queue, None) if stop is None else None
                    if item is None:
                        break
                    if item.error is not None:
                        trajectory = finish(item, _failed(item, *item.error), 0.0, UsageTally())
                        sink(trajectory)
                        continue
                    in_flight[self._submit(shared, item)] = item
                if not in_flight:
                    return stop
                ready, _ = self.ray.wait(list(in_flight), num_returns=1)
                for ref in ready:
                    item = in_flight.pop(ref)
                    trajectory = self._collect(job, ref, item)
                    if self._rerun(job, item, trajectory):
                        in_flight[self._submit(shared, item)] = item
                    else:
                        sink(trajectory)
        except DiskFullError as exc:
            self._cancel(in_flight)
            return Stop(StopKind.DISK_FULL, disk_full_reason(exc))
        except BaseException:
            self._cancel(in_flight)
            raise

    def _submit(self, shared: Any, item: WorkItem) -> Any:
        handle = self._actors.get(item.retriever) if item.retriever else None
        return self._task.remote(shared, item, handle, HostRefs(shared))

    def _collect(self, job: RunJob, ref: Any, item: WorkItem) -> Trajectory:
        try:
            text, usage = self.ray.get(ref)
        except Exception as exc:
            message = f"ray task failed: {ray_cause(exc)}"
            return finish(item, _failed(item, Status.INTERNAL_ERROR, message), 0.0, UsageTally())
        job.run_tally.merge(usage_from_json(usage))
        return Trajectory.model_validate_json(text)

    # -- sharded ingestion and index builds (scanrag.runner.ray_shards) ----------------------

    def ingest(
        self, paths: Sequence[Path], cache_dir: Path, on_done: Callable[[Path], None]
    ) -> IngestResult:
        """The ingest stage on the cluster: PDFs read by Ray tasks into the page store."""
        from scanrag.runner.ray_shards import ingest_with_ray

        return ingest_with_ray(self.ray, paths, cache_dir, on_done)

    def _prebuild(self, job: RunJob, aliases: Sequence[str]) -> dict[str, Any]:
        """Indexes built in parts across the cluster, saved in the run folder; those without
        a model (BM25) go to their actors through the object store, the others are loaded
        from the run folder by their actors."""
        from scanrag.retriever_specs import create_retriever
        from scanrag.runner.ray_shards import prebuild_indexes

        inject = {"samples": job.all_samples()}
        built = prebuild_indexes(
            self.ray,
            functools.partial(create_retriever, aliases=job.config.retrievers, inject=inject),
            job.all_documents(),
            aliases,
            RunDir(job.run_dir).index_dir,
        )
        return {
            alias: self.ray.put(index)
            for alias, index in built.items()
            if getattr(index, "model_info", lambda: (None, None))()[0] is None
        }

    def _window(self) -> int:
        spec = self.spec
        if spec.max_in_flight is not None:
            return spec.max_in_flight
        cpus = float(self.ray.cluster_resources().get("CPU", 1.0))
        return max(1, int(cpus / spec.cpus_per_item) * 2)

    def _cancel(self, in_flight: dict[Any, WorkItem]) -> None:
        for ref in in_flight:
            try:
                self.ray.cancel(ref)
            except Exception:
                continue

    def close(self) -> None:
        for actor in self._actors.values():
            try:
                self.ray.kill(actor)
            except Exception:
                continue
        self._actors.clear()
        self._shared_ref = None
        if self._owns_cluster:
            self.ray.shutdown()


def _failed(item: WorkItem, status: Status, message: str) -> Trajectory:
    return base_trajectory(item).fail(status, message)
