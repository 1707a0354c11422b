"""Builds a run's parts by name: documents, retrievers, strategies, the model client.

Everything here resolves through the registries (``RETRIEVERS``, ``STRATEGIES``; datasets
through ``LOADERS`` in :mod:`scanrag.runner.datasets`) and imports the heavy packages lazily,
so the runner never imports the upper layers itself. Retrievers build from
:class:`~scanrag.retriever_specs.RetrieverSpecs`: a run's are the ones preflight checked, with
every registered type already bound to its factory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanrag.config import RetrieverSpec, RunCell, RunnerSpec
from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.types import ChatModel
from scanrag.protocols import Retriever, RunSettings, Strategy
from scanrag.registry import STRATEGIES
from scanrag.retriever_specs import RetrieverSpecs
from scanrag.schemas import Document, Sample

if TYPE_CHECKING:
    from scanrag.index_pool import IndexPool

log = logging.getLogger(__name__)


class SetupError(RuntimeError):
    """A run cannot start (bad strategy parameters, unreadable dataset, no model client)."""


@dataclass
class LoadedDataset:
    """One dataset's samples, where its PDFs live, and the samples that cannot run.

    ``problems`` are ``(config key below the dataset, message)`` pairs that stop the run
    (an empty file, every row dropped, ids that match nothing...); preflight lists them.
    Loading lives in :mod:`scanrag.runner.datasets`.
    """

    name: str
    pdf_dir: Path
    samples: list[Sample]
    report: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    loader: str | None = None
    bad: dict[str, str] = field(default_factory=dict)  # sample id → input error
    allow_outside: bool = False  # the dataset's allow_outside_pdf_dir
    problems: list[tuple[str, str]] = field(default_factory=list)
    # every document the dataset names, whatever limit/ids/tasks selected (the index corpus)
    corpus: list[str] = field(default_factory=list)
    # name → resolved path (or the error), so items do not resolve (lstat) paths again
    _resolved: dict[str, Path | Exception] = field(default_factory=dict, repr=False)

    def doc_names(self) -> list[str]:
        return sorted({d for s in self.samples for d in (*s.doc_ids, *s.cited_doc_ids)})

    def doc_path(self, name: str) -> Path:
        """The PDF of document ``name``; ``DocumentPathError`` if it leaves ``pdf_dir``.
        Resolved once per name (the run's items ask for the same few documents)."""
        from scanrag.datasets.paths import DocumentPathError, resolve_document

        known = self._resolved.get(name)
        if known is None:
            try:
                known = resolve_document(self.pdf_dir, name, allow_outside=self.allow_outside)
            except DocumentPathError as exc:
                known = exc
            self._resolved[name] = known
        if isinstance(known, Exception):
            raise known
        return known

    def doc_paths(self, names: Iterable[str] | None = None) -> dict[str, Path]:
        """``name → path`` for the documents (default: all) that resolve inside ``pdf_dir``;
        the others are input errors already (see :func:`load_dataset_spec`)."""
        from scanrag.datasets import DocumentPathError

        paths = {}
        for name in self.doc_names() if names is None else names:
            try:
                paths[name] = self.doc_path(name)
            except DocumentPathError:
                continue
        return paths


# --------------------------------------------------------------------------- documents


@dataclass
class IngestResult:
    documents: dict[Path, Document] = field(default_factory=dict)
    failures: dict[Path, str] = field(default_factory=dict)

    def record(self, path: Path, outcome: Document | Exception) -> None:
        """Keep ``path``'s document, or its failure as a readable reason."""
        from scanrag.documents import IngestError

        if isinstance(outcome, IngestError):
            self.failures[path] = str(outcome)
        elif isinstance(outcome, Exception):  # a library failure must not stop the batch
            self.failures[path] = f"{path}: {type(outcome).__name__}: {outcome}"
        else:
            self.documents[path] = outcome


def ingest_paths(
    paths: Iterable[Path], cache_dir: Path, on_done: Callable[[Path], None] | None = None
) -> IngestResult:
    """Ingest (or load from the document cache) every PDF; failures are recorded, not raised.

    The documents keep their pages in the cache's page store (``cache_dir``) and read them on
    demand; several long documents to ingest are read by the worker pool."""
    from scanrag.documents import DocumentStore

    result = IngestResult()
    for path, outcome in DocumentStore(cache_dir).ingest_many(paths):
        result.record(path, outcome)
        if on_done is not None:
            on_done(path)
    return result


def document_paths(datasets: Iterable[LoadedDataset], corpus: bool = False) -> list[Path]:
    """Every PDF the runnable samples of ``datasets`` need, each once, sorted; with
    ``corpus``, also every other document the datasets name (what retrievers index, so their
    statistics do not depend on which samples a run selects). Documents whose names leave
    their PDF folder are never opened (their samples are input errors)."""
    paths: set[Path] = set()
    for dataset in datasets:
        names = {
            n
            for s in dataset.samples
            if s.id not in dataset.bad
            for n in (*s.doc_ids, *s.cited_doc_ids)
        }
        if corpus:
            names |= set(dataset.corpus)
        paths.update(dataset.doc_paths(names).values())
    return sorted(paths)


def mark_document_failures(datasets: Sequence[LoadedDataset], ingest: IngestResult) -> None:
    """Samples whose documents failed to ingest become input errors."""
    for dataset in datasets:
        for sample in dataset.samples:
            if sample.id in dataset.bad:
                continue
            names = (*sample.doc_ids, *sample.cited_doc_ids)
            paths = dataset.doc_paths(names)
            for name in names:
                path = paths.get(name)
                reason = None if path is None else ingest.failures.get(path)
                if reason is not None:
                    dataset.bad[sample.id] = reason
                    break


def documents_for(
    dataset: LoadedDataset, sample: Sample, documents: Mapping[Path, Document]
) -> dict[str, Document]:
    """The ingested documents of ``sample`` by name (paths resolved inside ``pdf_dir``)."""
    paths = dataset.doc_paths((*sample.doc_ids, *sample.cited_doc_ids))
    return {n: documents[p] for n, p in paths.items() if p in documents}


# --------------------------------------------------------------------------- retrievers


Retrievers = Mapping[str, RetrieverSpec] | RetrieverSpecs
"""A run's retriever aliases: the config's section, or its :class:`RetrieverSpecs` (the ones
preflight checked, with every registered type bound to its factory)."""


def _specs(retrievers: Retrievers) -> RetrieverSpecs:
    return retrievers if isinstance(retrievers, RetrieverSpecs) else RetrieverSpecs(retrievers)


def retriever_type(retrievers: Retrievers, alias: str) -> str:
    """The registered type of the config's retriever ``alias``."""
    return _specs(retrievers).type_of(alias)


def build_retriever(
    retrievers: Retrievers,
    alias: str,
    documents: Sequence[Document],
    samples: Sequence[Sample] = (),
    index_dir: Path | None = None,
    pool: IndexPool | None = None,
) -> Retriever:
    """Create the config's retriever ``alias`` (``retrievers``: the config's section, or the
    specs preflight checked) and index ``documents`` (each content once).

    Component entries of a composite (``hybrid``'s ``retrievers``, given or by default)
    resolve to the config's aliases first, then to registered names
    (``scanrag.retriever_specs``). Every constructor that takes ``samples`` (the oracle, also
    inside a composite) receives the run's samples unless the config sets them. Indexes are
    built through ``pool`` (``scanrag.index_pool``: one instance and one build per index,
    shared by every alias of the run that uses it); without one, a pool for this alias alone
    saves its indexes beside ``index_dir``: ``index_dir`` itself for the alias's own index,
    ``<type>-<key>`` folders next to it for a composite's components. A saved index is reused
    when it matches (a resume); a fresh one is saved for the next.
    """
    specs = _specs(retrievers)
    if pool is None:
        pool = retriever_pool(specs, documents, index_dir.parent if index_dir else None)
        if index_dir is not None:
            folders = _folders(specs, pool, index_dir.parent, {alias: index_dir.name})
            pool.folder_for = folders
    return specs.with_pool(pool).build(alias, inject={"samples": list(samples)})


def retriever_pool(
    retrievers: Retrievers,
    documents: Sequence[Document],
    indexes_dir: Path | None,
    report: Callable[[str], None] | None = None,
) -> IndexPool:
    """The index pool of a run's retrievers: leaves saved under ``indexes_dir``, each in its
    alias's folder when a top-level alias of the config is that index (as before pools),
    else in a ``<type>-<key>`` folder."""
    from scanrag.index_pool import IndexPool

    unique = list({d.id: d for d in documents}.values())
    pool = IndexPool(unique, None, report)
    if indexes_dir is not None:
        pool.folder_for = _folders(_specs(retrievers), pool, indexes_dir, {})
    return pool


def _folders(
    specs: RetrieverSpecs,
    pool: IndexPool,
    indexes_dir: Path,
    first: Mapping[str, str],
) -> Callable[[str, str], Path | None]:
    """``(type, key) -> folder``: the folder of the alias whose index has that key."""
    from scanrag.registry import UnknownNameError
    from scanrag.retriever_specs import component_params

    named: dict[str, str] = {}
    aliases = [*first, *(a for a in specs.aliases if a not in first)]
    for alias in aliases:
        spec = specs.aliases.get(alias)
        kind = (spec.type if spec else None) or alias
        try:
            factory = specs.factory(kind)
        except UnknownNameError:
            continue
        if component_params(factory):
            continue
        key = pool.key(kind, factory, spec.params if spec else {})
        if key is not None:
            named.setdefault(key, first.get(alias, alias))
    return lambda kind, key: indexes_dir / named.get(key, key)


# --------------------------------------------------------------------------- strategies


def build_strategies(cells: Sequence[RunCell]) -> dict[str, Strategy]:
    """One strategy instance per grid cell; a strategy that cannot be built is a setup error
    (all of them listed in one), after preflight checked their parameters."""
    strategies: dict[str, Strategy] = {}
    failed: dict[str, str] = {}
    for cell in cells:
        spec = cell.strategy
        if spec.key in failed:
            continue
        try:
            strategies[cell.run_key] = STRATEGIES.create(spec.name, **spec.params)
        except Exception as exc:
            failed[spec.key] = (
                f"strategy {spec.key!r} ({spec.name}) cannot be created with params "
                f"{sorted(spec.params)}: {type(exc).__name__}: {exc}"
            )
    if failed:
        lines = "\n".join(f"  {line}" for line in failed.values())
        raise SetupError(f"the run cannot start:\n{lines}")
    return strategies


def describe_strategy(strategy: Strategy) -> dict[str, Any]:
    try:
        return dict(strategy.describe())
    except Exception as exc:
        return {"error": f"describe() failed: {type(exc).__name__}: {exc}"}


# --------------------------------------------------------------------------- model client


def build_llm(
    runner: RunnerSpec, endpoints: Mapping[str, ModelEntry], origin: str | None = None
) -> ChatModel:
    """The gateway client every model call of the run goes through, set up by the ``runner``
    section (disk cache, concurrency, retries), knowing every model entry of the config
    (``endpoints``: ``ExperimentConfig.model_entries()``; server, key variable, sampling,
    output mode); ``origin`` (the run folder's name) is stored with each reply it caches, so a
    later run replaying it can say where it came from."""
    try:
        from scanrag.llm.gateway import LLMClient
        from scanrag.llm.options import CacheOptions, CallLimits, RetryPolicy
    except ImportError as exc:
        raise SetupError(f"the LLM gateway is unavailable: {exc}") from exc
    llm = runner.llm
    cache = CacheOptions(
        Path(runner.cache_dir) / "llm" if llm.cache else None, llm.cache_scripted, origin
    )
    client: ChatModel = LLMClient(
        endpoints,
        cache=cache,
        limits=CallLimits(runner.concurrency, dict(runner.per_provider)),
        retries=RetryPolicy(
            max_retries=llm.max_retries,
            timeout_s=llm.timeout_s,
            retry_after_max_s=llm.retry_after_max_s,
        ),
    )
    return client


def strategy_settings(runner: RunnerSpec) -> RunSettings:
    """The settings every strategy reads (``StrategyContext.settings``), from ``runner``: its
    typed fields, then the free-form ``runner.settings`` over them."""
    caps = runner.page_caps
    return RunSettings.model_validate(
        {
            "seed": runner.seed,
            "render_dpi": runner.render_dpi,
            "max_pages": caps.max_pages,
            "max_images": caps.max_images,
            "max_chars_per_page": caps.max_chars_per_page,
            "on_degraded": runner.on_degraded,
            **runner.settings,
        }
    )
