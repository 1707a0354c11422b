"""Builds a run's parts by name: datasets, documents, retrievers, strategies, the model client.

Everything here resolves through the registries (``LOADERS``, ``RETRIEVERS``, ``STRATEGIES``)
and imports the heavy packages lazily, so the runner never imports the upper layers itself.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanrag.config import DatasetSpec, ExperimentConfig, RunCell, SyntheticSpec
from scanrag.hashing import stable_hash
from scanrag.llm.types import ChatModel
from scanrag.protocols import Retriever, Strategy
from scanrag.registry import STRATEGIES
from scanrag.retriever_specs import RetrieverSpecs
from scanrag.schemas import Document, Sample

log = logging.getLogger(__name__)


class SetupError(RuntimeError):
    """A run cannot start (bad strategy parameters, unreadable dataset, no model client)."""


@dataclass
class LoadedDataset:
    """One dataset's samples, where its PDFs live, and the samples that cannot run."""

    name: str
    pdf_dir: Path
    samples: list[Sample]
    report: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    loader: str | None = None
    bad: dict[str, str] = field(default_factory=dict)  # sample id → input error

    def doc_names(self) -> list[str]:
        return sorted({d for s in self.samples for d in (*s.doc_ids, *s.cited_doc_ids)})


# --------------------------------------------------------------------------- datasets


def synthetic_dir(cache_dir: Path, spec: SyntheticSpec) -> Path:
    key = stable_hash({"seed": spec.seed, "docs": spec.docs, **spec.options}, length=10)
    return cache_dir / "synthetic" / f"seed{spec.seed}-docs{spec.docs}-{key}"


def ensure_synthetic(cache_dir: Path, spec: SyntheticSpec) -> Path:
    """The generated corpus for ``spec``, generating it on first use."""
    out = synthetic_dir(cache_dir, spec)
    if (out / "manifest.json").is_file():  # written last by the generator
        return out
    from scanrag.synth import generate_corpus

    tmp = out.with_name(f"{out.name}.partial-{os.getpid()}")
    try:
        generate_corpus(tmp, seed=spec.seed, n_docs=spec.docs, **spec.options)
    except (TypeError, ValueError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SetupError(f"synthetic dataset: {exc}") from exc
    if out.exists():  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
        return out
    tmp.rename(out)
    return out


def _filter(samples: list[Sample], spec: DatasetSpec) -> list[Sample]:
    if spec.tasks is not None:
        tasks = set(spec.tasks)
        samples = [s for s in samples if s.task in tasks]
    if spec.ids is not None:
        wanted = set(spec.ids)
        samples = [s for s in samples if s.id in wanted]
    if spec.limit is not None:
        samples = samples[: spec.limit]
    return samples


def load_dataset_spec(spec: DatasetSpec, cache_dir: Path) -> LoadedDataset:
    """Load one dataset without dropping rows for PDF problems: those become input errors."""
    from scanrag.datasets import DatasetError, load_dataset, validate_against_pdfs

    path, pdf_dir, loader = spec.path, spec.pdf_dir, spec.loader
    if spec.synthetic is not None:
        folder = ensure_synthetic(cache_dir, spec.synthetic)
        path, pdf_dir, loader = folder / "samples.jsonl", folder / "pdfs", "generic"
    assert path is not None
    try:
        dataset = load_dataset(loader, path, pdf_dir, validate=False, **spec.options)
    except DatasetError as exc:
        raise SetupError(f"dataset {spec.name!r}: {exc}") from exc
    samples = _filter(dataset.samples, spec)
    _, dropped = validate_against_pdfs(samples, dataset.pdf_dir)
    report = dataset.report.model_dump(mode="json")
    return LoadedDataset(
        name=str(spec.name),
        pdf_dir=Path(dataset.pdf_dir).resolve(),
        samples=samples,
        report=report,
        source=str(dataset.source) if dataset.source else str(path),
        loader=loader,
        bad={d.id: d.reason for d in dropped if d.id is not None},
    )


def check_unique_ids(datasets: Sequence[LoadedDataset]) -> None:
    owner: dict[str, str] = {}
    for dataset in datasets:
        for sample in dataset.samples:
            if sample.id in owner:
                raise SetupError(
                    f"sample id {sample.id!r} appears in datasets {owner[sample.id]!r} and "
                    f"{dataset.name!r}; sample ids must be unique across a run"
                )
            owner[sample.id] = dataset.name


# --------------------------------------------------------------------------- documents


@dataclass
class IngestResult:
    documents: dict[Path, Document] = field(default_factory=dict)
    failures: dict[Path, str] = field(default_factory=dict)


def ingest_paths(
    paths: Iterable[Path], cache_dir: Path, on_done: Callable[[Path], None] | None = None
) -> IngestResult:
    """Ingest (or load from the document cache) every PDF; failures are recorded, not raised."""
    from scanrag.documents import DocumentStore, IngestError
    from scanrag.documents.parallel import warm_pool_for

    store = DocumentStore(cache_dir)
    result = IngestResult()
    paths = list(paths)
    warm_pool_for(paths)  # several long documents: they are read by worker processes
    for path in paths:
        try:
            result.documents[path] = store.load_or_ingest(path)
        except IngestError as exc:
            result.failures[path] = str(exc)
        except Exception as exc:  # a library failure on one file must not stop the batch
            result.failures[path] = f"{path}: {type(exc).__name__}: {exc}"
        if on_done is not None:
            on_done(path)
    return result


def mark_document_failures(datasets: Sequence[LoadedDataset], ingest: IngestResult) -> None:
    """Samples whose documents failed to ingest become input errors."""
    for dataset in datasets:
        for sample in dataset.samples:
            if sample.id in dataset.bad:
                continue
            for name in (*sample.doc_ids, *sample.cited_doc_ids):
                reason = ingest.failures.get(dataset.pdf_dir / name)
                if reason is not None:
                    dataset.bad[sample.id] = reason
                    break


def documents_for(
    dataset: LoadedDataset, sample: Sample, documents: Mapping[Path, Document]
) -> dict[str, Document]:
    names = (*sample.doc_ids, *sample.cited_doc_ids)
    return {n: documents[dataset.pdf_dir / n] for n in names if dataset.pdf_dir / n in documents}


# --------------------------------------------------------------------------- retrievers


def retriever_type(config: ExperimentConfig, alias: str) -> str:
    return RetrieverSpecs(config.retrievers).type_of(alias)


def build_retriever(
    config: ExperimentConfig,
    alias: str,
    documents: Sequence[Document],
    samples: Sequence[Sample] = (),
    index_dir: Path | None = None,
) -> Retriever:
    """Create retriever ``alias`` and index ``documents`` (each content once).

    Component entries of a composite (``hybrid``'s ``retrievers``) resolve to the config's
    aliases first, then to registered names (``scanrag.retriever_specs``). Every constructor
    that takes ``samples`` (the oracle, also inside a composite) receives the run's samples
    unless the config sets them. With ``index_dir``, a saved index is reused when the retriever
    can ``load`` one, and a freshly built one is saved there for the next resume.
    """
    unique = list({d.id: d for d in documents}.values())
    retriever = _create_retriever(config, alias, samples)
    if index_dir is not None and (index_dir / "manifest.json").is_file():
        try:
            retriever.load(index_dir, unique)  # type: ignore[attr-defined]
            return retriever
        except Exception as exc:  # a stale or partial index: rebuild it
            log.warning("retriever %s: cannot reuse %s (%s); rebuilding", alias, index_dir, exc)
            retriever = _create_retriever(config, alias, samples)
    retriever.add(unique)
    if index_dir is not None and callable(getattr(retriever, "save", None)):
        try:
            retriever.save(index_dir)  # type: ignore[attr-defined]
        except Exception as exc:
            log.warning("retriever %s: index not saved (%s)", alias, exc)
    return retriever


def _create_retriever(config: ExperimentConfig, alias: str, samples: Sequence[Sample]) -> Retriever:
    return RetrieverSpecs(config.retrievers).build(alias, inject={"samples": list(samples)})


# --------------------------------------------------------------------------- strategies


def build_strategies(cells: Sequence[RunCell]) -> dict[str, Strategy]:
    """One strategy instance per grid cell; bad parameters are a setup error naming it."""
    strategies: dict[str, Strategy] = {}
    for cell in cells:
        try:
            strategies[cell.run_key] = STRATEGIES.create(cell.strategy.name, **cell.strategy.params)
        except TypeError as exc:
            raise SetupError(
                f"strategy {cell.strategy.key!r} ({cell.strategy.name}): bad params "
                f"{sorted(cell.strategy.params)}: {exc}"
            ) from exc
        except Exception as exc:
            raise SetupError(
                f"strategy {cell.strategy.key!r} ({cell.strategy.name}) cannot be created: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    return strategies


def describe_strategy(strategy: Strategy) -> dict[str, Any]:
    try:
        return dict(strategy.describe())
    except Exception as exc:
        return {"error": f"describe() failed: {type(exc).__name__}: {exc}"}


# --------------------------------------------------------------------------- model client


def build_llm(config: ExperimentConfig) -> ChatModel:
    """The gateway client every model call of the run goes through (with its disk cache),
    knowing every model entry of the config (server, key variable, sampling, output mode)."""
    try:
        from scanrag.llm.gateway import LLMClient
    except ImportError as exc:
        raise SetupError(f"the LLM gateway is unavailable: {exc}") from exc
    runner = config.runner
    client: ChatModel = LLMClient(
        cache_dir=Path(runner.cache_dir) / "llm" if runner.llm.cache else None,
        max_concurrency=runner.concurrency,
        per_provider_concurrency=dict(runner.per_provider),
        max_retries=runner.llm.max_retries,
        timeout_s=runner.llm.timeout_s,
        cache_scripted=runner.llm.cache_scripted,
        endpoints=config.model_entries(),
        retry_after_max_s=runner.llm.retry_after_max_s,
    )
    return client


def strategy_settings(config: ExperimentConfig) -> dict[str, Any]:
    runner = config.runner
    caps = runner.page_caps
    return {
        "seed": runner.seed,
        "render_dpi": runner.render_dpi,
        "max_pages": caps.max_pages,
        "max_images": caps.max_images,
        "max_chars_per_page": caps.max_chars_per_page,
        **runner.settings,
    }
