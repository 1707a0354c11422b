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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanrag.config import ExperimentConfig, RunnerSpec
from scanrag.hashing import stable_hash
from scanrag.llm.types import ChatModel
from scanrag.plugins import import_plugins
from scanrag.protocols import StrategyContext
from scanrag.rundir import DiskFullError, RunDir, disk_full_reason
from scanrag.runner.components import IngestResult, build_llm, build_retriever, build_strategies
from scanrag.runner.executors import Gate, RunJob, Sink
from scanrag.runner.items import WorkItem, base_trajectory, execute_item, finish
from scanrag.runner.outcome import Stop, StopKind
from scanrag.runner.usage import UsageTally, usage_from_json
from scanrag.schemas import Document, PageHit, Sample, Status, Trajectory


@dataclass
class Shared:
    """What every task needs, put into the object store once per session."""

    key: str
    config: ExperimentConfig
    run_dir: str
    settings: dict[str, Any]
    pdf_dirs: dict[str, str]
    llm: ChatModel | None = None
    outside_ok: dict[str, bool] = field(default_factory=dict)  # allow_outside_pdf_dir
    all_docs: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)


ACTOR_GONE = "retriever actor is gone"
ITEM_RETRIES_AFTER_ACTOR_LOSS = 2


class RetrieverActorError(RuntimeError):
    """The actor holding a retriever died (and Ray could not restart it)."""


# ----------------------------------------------------------------------------- worker side

_STATE: dict[str, Any] = {}
_STATE_LOCK = threading.Lock()


class _WorkerState:
    def __init__(self, shared: Shared) -> None:
        import_plugins(shared.config.plugins)
        from scanrag.documents import DocumentStore, PageRenderer

        cache = Path(shared.config.runner.cache_dir)
        self.store = DocumentStore(cache / "documents")
        self.renderer = PageRenderer(cache / "pages", dpi=shared.config.runner.render_dpi)
        self.strategies = build_strategies(shared.config.cells())
        self.documents: dict[Path, Document] = {}

    def document(self, path: Path) -> Document:
        if path not in self.documents:
            if len(self.documents) >= 64:
                self.documents.pop(next(iter(self.documents)))
            self.documents[path] = self.store.load_or_ingest(path)
        return self.documents[path]


def _state(shared: Shared) -> _WorkerState:
    with _STATE_LOCK:
        if shared.key not in _STATE:
            _STATE.clear()
            _STATE[shared.key] = _WorkerState(shared)
        state: _WorkerState = _STATE[shared.key]
        return state


class RemoteRetriever:
    """A ``Retriever`` whose index lives in a Ray actor."""

    def __init__(self, name: str, handle: Any, refs: HostRefs) -> None:
        self.name = name
        self._handle = handle
        self._refs = refs  # sent with every call: a restarted actor loads its index from them

    def add(self, documents: Sequence[Document]) -> None:
        raise RuntimeError("a remote retriever is built by its actor; add() is not available")

    def _get(self, ref: Any) -> Any:
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            raise RetrieverActorError(f"{ACTOR_GONE} ({self.name}): {ray_cause(exc)}") from None

    def search(self, query: str, k: int, doc_ids: Sequence[str] | None = None) -> list[PageHit]:
        hits: list[PageHit] = self._get(self._handle.search.remote(self._refs, query, k, doc_ids))
        return hits

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | None = None
    ) -> list[list[PageHit]]:
        hits: list[list[PageHit]] = self._get(
            self._handle.search_batch.remote(self._refs, queries, k, doc_ids)
        )
        return hits

    def manifest(self) -> dict[str, Any]:
        manifest: dict[str, Any] = self._get(self._handle.manifest.remote(self._refs))
        return manifest


def _gateway(shared: Shared) -> ChatModel:
    """A worker's gateway client (when the session shipped none)."""
    config = shared.config
    return build_llm(config.runner, config.model_entries(), origin=Path(shared.run_dir).name)


def run_item_task(
    shared: Shared, item: WorkItem, retriever: Any, refs: HostRefs
) -> tuple[str, dict[str, Any]]:
    """Body of the remote task: one work item → (trajectory JSON, usage per stage);
    ``refs`` holds the reference to ``shared`` for the retriever actor."""
    state = _state(shared)
    from scanrag.datasets import resolve_document

    pdf_dir = Path(shared.pdf_dirs[item.dataset])
    outside = shared.outside_ok.get(item.dataset, False)
    sample = item.sample
    documents = {
        n: state.document(resolve_document(pdf_dir, n, allow_outside=outside))
        for n in (*sample.doc_ids, *sample.cited_doc_ids)
    }
    ctx = StrategyContext(
        llm=shared.llm or _gateway(shared),
        documents=documents,
        models=dict(item.models),
        retriever=RemoteRetriever(item.retriever or "", retriever, refs) if retriever else None,
        renderer=state.renderer,
        checkpoint_dir=Path(shared.run_dir) / RunDir.CHECKPOINTS,
        settings={**shared.settings, "run_key": item.run_key},
    )
    trajectory, tally = asyncio.run(
        execute_item(
            item,
            state.strategies.get(item.run_key),
            ctx,
            timeout_s=shared.config.runner.item_timeout_s,
        )
    )
    usage = {k: v.model_dump() for k, v in tally.snapshot().items()}
    return trajectory.model_dump_json(), usage


@dataclass(frozen=True)
class HostRefs:
    """Object references a retriever actor loads its index from, sent with every call.

    Ray logs an error-looking line (``core_worker.cc ... max_restarts > 0``) for a restartable
    actor whose constructor takes anything from the object store, since that may be gone when
    the actor restarts. So the actor is created with its alias alone and every call brings
    these references (a few bytes): the first call of a new or restarted actor loads the index
    (``prebuilt``, the index the driver built across the cluster, only on the first ``ready``;
    after a restart the index saved under the run folder, or a rebuild).
    """

    shared: Any  # ObjectRef[Shared], held by the driver for the whole run
    prebuilt: Any = None  # ObjectRef of a prebuilt index, or None


class RetrieverHost:
    """Actor body: one retriever over the run's documents, loaded on the first call, answering
    searches."""

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self.retriever: Any = None

    def _load(self, refs: HostRefs) -> Any:
        if self.retriever is None:
            import ray

            if refs.prebuilt is not None:
                self.retriever = ray.get(refs.prebuilt)
            else:
                shared: Shared = ray.get(refs.shared)
                state = _state(shared)
                documents = [state.document(Path(p)) for p in shared.all_docs]
                index_dir = RunDir(shared.run_dir).index_dir(self.alias)
                self.retriever = build_retriever(
                    shared.config.retrievers, self.alias, documents, shared.samples, index_dir
                )
        return self.retriever

    def ready(self, refs: HostRefs) -> bool:
        self._load(refs)
        return True

    def search(
        self, refs: HostRefs, query: str, k: int, doc_ids: Sequence[str] | None
    ) -> list[PageHit]:
        hits: list[PageHit] = self._load(refs).search(query, k, doc_ids)
        return hits

    def search_batch(
        self, refs: HostRefs, queries: Sequence[str], k: int, doc_ids: Sequence[str] | None
    ) -> list[list[PageHit]]:
        hits: list[list[PageHit]] = self._load(refs).search_batch(queries, k, doc_ids)
        return hits

    def manifest(self, refs: HostRefs) -> dict[str, Any]:
        return dict(self._load(refs).manifest())


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


_WORKER_EXIT = re.compile(r"Worker exit type: (\w+)(?: Worker exit detail: ([^.]*))?")
_NOISE_LINE = re.compile(r"^(ray::|\s|File |Traceback|\^|\x1b)")


def ray_cause(exc: BaseException) -> str:
    """One line for a Ray error: the underlying exception's name and first line (Ray wraps a
    task's exception in ``RayTaskError`` with the remote traceback), and for a dead actor or
    worker the exit reason Ray gives, without its advice paragraph."""
    cause: BaseException = exc
    while isinstance(getattr(cause, "cause", None), BaseException) and cause.cause is not cause:  # type: ignore[attr-defined]
        cause = cause.cause  # type: ignore[attr-defined]
    name = type(cause).__name__
    text = str(cause)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not _NOISE_LINE.match(ln)]
    first = lines[0] if lines else ""
    first = re.sub(r"^ray\.exceptions\.\w+:\s*", "", first)
    exit_reason = _WORKER_EXIT.search(text)
    if exit_reason:
        detail = f"worker exit {exit_reason.group(1)}"
        if exit_reason.group(2):
            detail += f": {exit_reason.group(2).strip()}"
        first = f"{first} ({detail})" if first else detail
    return f"{name}: {first}" if first else name
