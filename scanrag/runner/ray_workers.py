"""The worker side of the ``ray`` executor (:mod:`scanrag.runner.ray_executor`): what a task
or a retriever actor runs on a cluster node.

``run_item_task`` runs one work item; ``RetrieverHost`` is the actor body holding one
retriever (loaded on its first call from the references every call brings, ``HostRefs``);
``RemoteRetriever`` is the ``Retriever`` a task searches through, which turns a dead actor
into ``RetrieverActorError``. Each worker process keeps the ingested documents and built
strategies of the current session (``Shared``) in ``_WorkerState``. ``ray_cause`` cuts Ray's
long error texts to their cause.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanrag.config import ExperimentConfig
from scanrag.llm.types import ChatModel
from scanrag.plugins import import_plugins
from scanrag.protocols import RunSettings, StrategyContext
from scanrag.rundir import RunDir
from scanrag.runner.components import build_llm, build_retriever, build_strategies
from scanrag.runner.items import WorkItem, execute_item
from scanrag.schemas import Document, PageHit, Sample


@dataclass
class Shared:
    """What every task needs, put into the object store once per session."""

    key: str
    config: ExperimentConfig
    run_dir: str
    settings: RunSettings
    pdf_dirs: dict[str, str]
    llm: ChatModel | None = None
    outside_ok: dict[str, bool] = field(default_factory=dict)  # allow_outside_pdf_dir
    all_docs: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)


ACTOR_GONE = "retriever actor is gone"


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
        settings=shared.settings.for_item(item.run_key),
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
