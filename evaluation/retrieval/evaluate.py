"""Evaluate retrievers on a dataset: build each index, run every question scoped to its own
document, and score the rankings against the gold pages (``scanrag.evaluation.retrieval.metrics``).

Used by ``scanrag retrieve eval`` and ``benchmarks/retrieval.py``. Retrievers are built through
the ``RETRIEVERS`` registry: each evaluated name is an alias whose parameters are
``params[name]`` (a ``type`` key there names the registered type; the default is the name
itself), so a composite's components (``hybrid.retrievers=[bm25, bge]``, or its default
list) resolve to the evaluated aliases first, as in a run config. A retriever whose factory
takes a ``samples`` argument (the oracle) receives the dataset's samples. Every index is built
once (``scanrag.index_pool``): a composite uses the instances its components have as
standalone retrievers of the same evaluation, or loads them from the cache; its build time
includes theirs.

Every run keeps, per question, the pages it returned and the rank of the first gold page
(``per_question``), so two runs can be compared question by question. When the questions come
from several sources (``sample_groups``: a ``source`` or ``dataset`` metadata field, else the
prefix of loader ids such as ``financebench/...``), ``by_group`` holds the macro metrics per
source as well.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from scanrag.config import RetrieverSpec
from scanrag.evaluation.retrieval.metrics import RetrievalReport, evaluate_retrieval
from scanrag.hashing import stable_hash
from scanrag.index_pool import IndexPool
from scanrag.protocols import Retriever
from scanrag.registry import RETRIEVERS
from scanrag.retriever_specs import RetrieverSpecs, accepts
from scanrag.schemas import Document, Sample

log = logging.getLogger(__name__)


class QuestionRank(BaseModel):
    """One question's result for one retriever."""

    retrieved: list[int] = Field(description="Pages returned, best first (up to the largest k).")
    first_gold_rank: int | None = Field(
        description="1-based rank of the first gold page among them; None if none was returned."
    )


class QuestionInfo(BaseModel):
    """What a question is scored against."""

    gold: list[int]
    groups: list[str] = Field(default_factory=list, description="Its sources (see by_group).")


class RetrieverRun(BaseModel):
    """The figures of one retriever on one dataset."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    build_s: float = Field(description="Seconds to build (or load) the index of all documents.")
    index_cached: bool = False
    pages: int = 0
    n_queries: int = 0
    latency_p50_ms: float = 0.0
    latency_p95_ms: float = 0.0
    macro: dict[str, float] = Field(default_factory=dict)
    micro: dict[str, float] = Field(default_factory=dict)
    by_group: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Macro metrics per source, when the questions come from several sources.",
    )
    per_question: dict[str, QuestionRank] = Field(
        default_factory=dict, description="Scored questions by id."
    )
    rankings: dict[str, list[int]] = Field(default_factory=dict, exclude=True)


class RetrievalEvaluation(BaseModel):
    """Every retriever's figures on one dataset."""

    dataset: str
    ks: list[int]
    n_questions: int
    n_scored: int
    n_without_gold: int
    n_skipped: int = Field(default=0, description="Questions whose document could not be read.")
    skipped: list[str] = Field(default_factory=list)
    group_by: str | None = Field(default=None, description="The metadata field grouped on.")
    groups: dict[str, int] = Field(
        default_factory=dict, description="Scored questions per source (several sources only)."
    )
    questions: dict[str, QuestionInfo] = Field(
        default_factory=dict, description="Scored questions: gold pages and sources."
    )
    retrievers: dict[str, RetrieverRun] = Field(default_factory=dict)
    failed: dict[str, str] = Field(
        default_factory=dict,
        description="Retrievers that could not be built or queried (bad model name or "
        "parameter...), with the error; the others are still evaluated.",
    )


def sample_groups(sample: Sample, by: str = "source") -> list[str]:
    """The groups ``sample`` belongs to for per-source figures.

    ``metadata[by]`` when present (a list puts the question in each of its groups: ``by =
    "evidence_sources"`` groups MMLongBench-Doc questions by evidence modality). For ``by =
    "source"`` a missing field falls back to ``metadata["dataset"]``, then to the prefix of an id
    such as ``financebench/financebench_id_04735`` (the benchmark loaders' ids).
    """
    value = sample.metadata.get(by)
    if value is None and by == "source":
        value = sample.metadata.get("dataset")
        if value is None and "/" in sample.id:
            value = sample.id.split("/", 1)[0]
    if value is None or value == "":
        return []
    if isinstance(value, list | tuple | set):
        return sorted({str(v) for v in value})
    return [str(value)]


def group_metrics(
    report: RetrievalReport, groups: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, float]]:
    """Macro averages of ``report``'s per-question metrics within each group of question ids."""
    members: dict[str, list[str]] = {}
    for qid, names in groups.items():
        for name in names:
            members.setdefault(name, []).append(qid)
    by_id = {q.id: q.metrics for q in report.per_question}
    out = {}
    for name, ids in sorted(members.items()):
        scored = [by_id[i] for i in ids if i in by_id]
        if scored:
            out[name] = {m: sum(q[m] for q in scored) / len(scored) for m in scored[0]}
    return out


def question_ranks(report: RetrievalReport) -> dict[str, QuestionRank]:
    """Per scored question: the pages returned and the rank of the first gold page."""
    out = {}
    for q in report.per_question:
        gold = set(q.gold)
        first = next((i for i, page in enumerate(q.retrieved, 1) if page in gold), None)
        out[q.id] = QuestionRank(
            retrieved=[int(str(p)) for p in q.retrieved], first_gold_rank=first
        )
    return out


def alias_specs(names: Sequence[str], params: Mapping[str, Mapping[str, Any]]) -> RetrieverSpecs:
    """The evaluated names (and any other name given parameters) as retriever aliases."""
    aliases = {}
    for name in [*names, *params]:
        own = dict(params.get(name, {}))
        kind = own.pop("type", None)
        aliases[name] = RetrieverSpec(type=kind, params=own)
    return RetrieverSpecs(aliases)


def _build(
    name: str, specs: RetrieverSpecs, samples: Sequence[Sample], pool: IndexPool
) -> tuple[Retriever, float, bool]:
    """Build ``name`` through the pool: its indexes (a composite's components) come from
    this evaluation's earlier retrievers, the cache, or one build each. Its build seconds
    include those of every index it uses, built now or before."""
    mark = pool.mark()
    start = time.perf_counter()
    retriever = specs.build(name, inject={"samples": list(samples)})
    seconds = time.perf_counter() - start
    entries = pool.since(mark)
    seconds += sum(e.seconds for e in entries if e.finished < start)  # reused, built before
    cached = bool(entries) and all(e.cached for e in entries)
    return retriever, seconds, cached


def index_folder(
    cache_dir: Path | None, documents: Sequence[Document]
) -> Callable[[str, str], Path | None]:
    """Where a leaf's index is cached (``cache_dir/indexes/<type>-<hash>``): for indexes that
    can be saved and opened, built from parameters alone (not the oracle's samples)."""
    docs = sorted(d.sha256 for d in documents)

    def folder(kind: str, key: str) -> Path | None:
        if cache_dir is None:
            return None
        factory = RETRIEVERS.get(kind)
        if accepts(factory, "samples") or not callable(getattr(factory, "open", None)):
            return None
        return cache_dir / "indexes" / f"{kind}-{stable_hash({'key': key, 'docs': docs})}"

    return folder


def evaluate_retrievers(
    samples: Sequence[Sample],
    documents: Mapping[str, Document],
    names: Sequence[str],
    ks: Sequence[int],
    params: Mapping[str, Mapping[str, Any]] | None = None,
    cache_dir: Path | None = None,
    dataset: str = "",
    keep: dict[str, Retriever] | None = None,
    group_by: str | None = "source",
    advance: Callable[..., None] | None = None,
    progress: Callable[[str], None] | None = None,
    phase: Callable[[str | None], None] | None = None,
) -> RetrievalEvaluation:
    """Evaluate ``names`` on ``samples``; ``documents`` maps file names to ingested documents.

    Each question searches only its primary document. Questions whose document is missing from
    ``documents`` are skipped and listed; a retriever that raises while building or searching
    is listed in ``failed`` with its error and the others go on. ``keep``, when given,
    receives the built retrievers. ``group_by`` names the field ``sample_groups`` reads for
    per-source figures (``None``: none); they are reported when there are two groups or more.
    ``advance`` (a progress stage's) is called once per question searched, with
    ``error=True`` for the questions of a retriever that failed.
    ``progress`` receives a line as each index starts and ends building; ``phase`` what the
    evaluation is doing while no question is searched (loading a retriever, building an index
    n/N pages, searching), then ``None``.
    """
    params = params or {}
    aliases = alias_specs(names, params).aliases
    ks = sorted(set(ks))
    usable = [s for s in samples if s.primary_doc in documents]
    skipped = [s.id for s in samples if s.primary_doc not in documents]
    corpus = list({d.id: d for d in documents.values()}.values())
    pool = IndexPool(corpus, index_folder(cache_dir, corpus), progress, phase)
    specs = RetrieverSpecs(aliases, pool=pool)
    result = RetrievalEvaluation(
        dataset=dataset,
        ks=ks,
        n_questions=len(samples),
        n_scored=0,
        n_without_gold=0,
        n_skipped=len(skipped),
        skipped=skipped,
    )
    membership = {s.id: sample_groups(s, group_by) if group_by else [] for s in usable}
    scored_gold = {s.id: sorted(set(s.gold_pages)) for s in usable if s.gold_pages}
    counts: dict[str, int] = {}
    for qid in scored_gold:
        for group in membership[qid]:
            counts[group] = counts.get(group, 0) + 1
    several = len(counts) > 1
    result.group_by = group_by
    result.groups = dict(sorted(counts.items())) if several else {}
    result.questions = {
        qid: QuestionInfo(gold=gold, groups=membership[qid]) for qid, gold in scored_gold.items()
    }
    for name in names:
        own = dict(params.get(name, {}))
        searched = Counter[str]()
        tick = partial(_tick, searched, advance)
        try:
            retriever, seconds, cached = _build(name, specs, usable, pool)
            if phase is not None:
                phase(f"searching {name}")
            run = query_samples(name, retriever, usable, documents, max(ks), on_query=tick)
        except Exception as exc:  # one broken retriever must not stop the comparison
            if advance is not None:
                advance(len(usable) - searched["done"], error=True)
            result.failed[name] = f"{type(exc).__name__}: {exc}"
            log.warning("retriever %s failed: %s", name, result.failed[name])
            continue
        if keep is not None:
            keep[name] = retriever
        report = evaluate_retrieval(((s.id, run.rankings[s.id], s.gold_pages) for s in usable), ks)
        run.build_s, run.index_cached = seconds, cached
        run.params = {k: v for k, v in own.items() if k != "samples"}
        run.pages = sum(len(d.pages) for d in corpus)
        run.macro, run.micro = report.macro, report.micro
        run.per_question = question_ranks(report)
        if several:
            run.by_group = group_metrics(report, membership)
        result.retrievers[name] = run
        result.n_scored, result.n_without_gold = report.n_scored, report.n_without_gold
    return result


def _tick(count: Counter[str], advance: Callable[..., None] | None) -> None:
    count["done"] += 1
    if advance is not None:
        advance()


def query_samples(
    name: str,
    retriever: Retriever,
    samples: Sequence[Sample],
    documents: Mapping[str, Document],
    k: int,
    on_query: Callable[[], None] | None = None,
) -> RetrieverRun:
    """Search every sample's primary document for its question (top ``k``); the run holds
    the rankings (``rankings``) and the latencies, not yet the metrics."""
    latencies, rankings = [], {}
    for sample in samples:
        scope = [documents[sample.primary_doc].id]
        start = time.perf_counter()
        hits = retriever.search(sample.question, k, scope)
        latencies.append(time.perf_counter() - start)
        rankings[sample.id] = [hit.page for hit in hits]
        if on_query is not None:
            on_query()
    ms = np.asarray(latencies) * 1000 if latencies else np.zeros(1)
    return RetrieverRun(
        name=name,
        build_s=0.0,
        n_queries=len(latencies),
        latency_p50_ms=float(np.percentile(ms, 50)),
        latency_p95_ms=float(np.percentile(ms, 95)),
        rankings=rankings,
    )
