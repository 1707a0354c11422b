"""Sentence-faithfulness scorer (spec §5, ContextCheck).

The response is split into sentences (:mod:`scanrag.evaluation.faithfulness.text`). Each sentence
S_i is judged against its evidence while the judge also sees S_1..S_{i-1} as written (for
resolving references, never as evidence):

* the evidence of a sentence is what its citations point to — the text of the cited region
  (page words inside the cited box) or, for a citation without a box, the cited page's text;
* a sentence citing nothing is judged against the whole retrieved context: the text of
  ``trajectory.pages``.

Labels: Attributable / Not Attributable / Contradicted with one error type R1–R14; binary
score Attributable = 1. Per item: the attributable rate over judged sentences; a sentence
whose judge failed is excluded (row ``partial``), never counted as 0. Aggregates: the
attributable rate over sentences (headline, micro) and over items (macro), and counts per
label, error type and criterion C1–C7.

Page text comes from ``JudgeContext.params["documents"]`` (a mapping doc id →
ingested :class:`~scanrag.schemas.Document`), else from ``JudgeContext.documents`` when it
offers ``text_document(doc_id)`` (the run's ``DocumentSource`` does: pages read on demand from
the page store), else by ingesting the PDF at ``documents.pdf_path(doc_id)`` (text layer only,
cached per path).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from pydantic import BaseModel, field_validator, model_validator

from scanrag.evaluation.base import (
    RowGroup,
    Scorer,
    StatsOptions,
    mean_metric,
    ratio_metric,
    split_rows,
)
from scanrag.evaluation.faithfulness import prompt
from scanrag.evaluation.faithfulness.meta import (
    CRITERION_OF,
    Label,
    normalize_error_type,
    parse_label,
)
from scanrag.evaluation.faithfulness.text import (
    CITATION_RE,
    normalize_for_match,
    split_sentences,
    strip_citations,
)
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import UNANSWERABLE, BBox, Citation, Document, Page, Sample, Trajectory

__all__ = [
    "EvidenceFinder",
    "FaithfulnessScorer",
    "SentenceJudgment",
    "citations_by_sentence",
    "region_text",
    "response_text",
]


class SentenceJudgment(BaseModel):
    """The judge's reply for one sentence, reasoning first, label last."""

    disambiguation: str = ""
    plan: str = ""
    execution: str = ""
    label: Label
    error_type: str | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: object) -> Label:
        return parse_label(value)

    @field_validator("error_type", mode="before")
    @classmethod
    def _error_type(cls, value: object) -> str | None:
        if value is None or (isinstance(value, str) and value.strip().lower() in {"", "none"}):
            return None
        return normalize_error_type(str(value))

    @model_validator(mode="after")
    def _type_matches_label(self) -> Self:
        if self.label is Label.ATTRIBUTABLE:
            self.error_type = None
        elif self.error_type is None:
            raise ValueError(f"label {self.label.value!r} needs an error_type from R1–R14")
        return self


# -- response and evidence -------------------------------------------------------------------


def response_text(trajectory: Trajectory) -> str:
    """The text whose sentences are judged: the free-text response with citations removed,
    or the answer when the raw output is not free text with citations."""
    raw = trajectory.raw_output or ""
    if CITATION_RE.search(raw) or "<answer>" in raw.lower():
        return strip_citations(raw)
    return (trajectory.answer or "").strip()


def region_text(page: Page, bbox: BBox) -> str:
    """Words of ``page`` whose center lies inside ``bbox``, in reading order."""
    words = [
        w[4]
        for w in page.words
        if bbox.x1 <= (w[0] + w[2]) / 2 <= bbox.x2 and bbox.y1 <= (w[1] + w[3]) / 2 <= bbox.y2
    ]
    return " ".join(words)


def _ingest_text(path: str) -> Document:
    """The PDF's text layer (no OCR), cached per file version."""
    stat = os.stat(path)
    return _ingest_cached(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _ingest_cached(path: str, mtime_ns: int, size: int) -> Document:
    from scanrag.documents import ingest_pdf

    return ingest_pdf(path, ocr="never")


class EvidenceFinder:
    """Page and region text for one item, from whichever document access the context has."""

    def __init__(self, judge: JudgeContext, default_doc: str, max_chars: int) -> None:
        self.judge = judge
        self.default_doc = default_doc
        self.max_chars = max_chars
        self._docs: dict[str, Document | None] = {}
        self.errors: list[str] = []

    def document(self, doc_id: str) -> Document | None:
        if doc_id not in self._docs:
            self._docs[doc_id] = self._load(doc_id)
        return self._docs[doc_id]

    def _load(self, doc_id: str) -> Document | None:
        mapping = self.judge.params.get("documents")
        if isinstance(mapping, Mapping) and doc_id in mapping:
            return mapping[doc_id]
        source = self.judge.documents
        try:
            if source is not None and hasattr(source, "text_document"):
                return source.text_document(doc_id)
            if source is not None and hasattr(source, "pdf_path"):
                return _ingest_text(str(source.pdf_path(doc_id)))
        except Exception as exc:
            self.errors.append(f"{doc_id}: {exc}")
            return None
        self.errors.append(f"{doc_id}: no page text available (pass documents to the judge)")
        return None

    def page(self, doc_id: str | None, number: int) -> Page | None:
        document = self.document(doc_id or self.default_doc)
        if document is None and doc_id and doc_id != self.default_doc:
            document = self.document(self.default_doc)  # a content-hash id, not a file name
        if document is None or not 1 <= number <= len(document.pages):
            return None
        return document.pages[number - 1]

    def cited(self, citations: Sequence[Citation]) -> str:
        parts: list[str] = []
        for c in citations:
            page = self.page(c.doc_id, c.page) if c.valid and c.page else None
            if page is None:
                continue
            text = ""
            if c.bbox is not None and len(c.bbox) == 4:
                try:
                    text = region_text(page, BBox.from_list(c.bbox))
                except ValueError:
                    text = ""
            label = f"[page {page.number}{', region' if text else ''}]"
            parts.append(f"{label}\n{text or page.text}")
        return self._cap(parts)

    def context(self, trajectory: Trajectory) -> str:
        """Text of every retrieved page (``trajectory.pages`` are pages of the primary doc)."""
        parts = [
            f"[page {p}]\n{page.text}"
            for p in dict.fromkeys(trajectory.pages)
            if (page := self.page(None, p)) is not None
        ]
        return self._cap(parts)

    def _cap(self, parts: list[str]) -> str:
        text = "\n\n".join(parts)
        if len(text) > self.max_chars:
            text = text[: self.max_chars] + "\n[... evidence truncated]"
        return text


def citations_by_sentence(
    sentences: Sequence[str], citations: Sequence[Citation]
) -> list[list[Citation]]:
    """The citations whose ``sentence`` is (or contains, or lies within) each split sentence."""
    keys = [normalize_for_match(s) for s in sentences]
    out: list[list[Citation]] = [[] for _ in sentences]
    for citation in citations:
        cited = normalize_for_match(citation.sentence)
        if not cited:
            continue
        for i, key in enumerate(keys):
            inside = len(key.split()) >= 3 and key in cited  # a split part of a long sentence
            if key and (key == cited or cited in key or inside):
                out[i].append(citation)
                break
    return out


# -- scorer ----------------------------------------------------------------------------------


class FaithfulnessScorer(Scorer):
    """Sentence-level attributability of the response; see the module docstring."""

    name = "faithfulness"
    tasks: ClassVar[frozenset[str]] = frozenset({"qa", "chain_qa", "summary"})
    roles: ClassVar[tuple[str, ...]] = ("faithfulness",)

    def __init__(self, max_evidence_chars: int = 24000) -> None:
        self.max_evidence_chars = max_evidence_chars

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        text = response_text(trajectory)
        sentences = split_sentences(text)
        if not sentences or text.strip().strip(".").lower() == UNANSWERABLE.lower():
            return self.skip(trajectory, sample, "no answer sentences to check")
        if judge is None or judge.model_for("faithfulness") is None:
            reason = judge.why_not("faithfulness") if judge else "no judge context"
            return self.skip(trajectory, sample, reason)
        finder = EvidenceFinder(judge, sample.primary_doc, self.max_evidence_chars)
        wanted = {sample.primary_doc, *(c.doc_id for c in trajectory.citations if c.doc_id)}
        for doc_id in wanted:  # reading a PDF can take seconds: keep the event loop free
            await asyncio.to_thread(finder.document, doc_id)
        cited = citations_by_sentence(sentences, trajectory.citations)
        evidence = [finder.cited(c) if c else "" for c in cited]
        context = finder.context(trajectory) if not all(evidence) else ""
        evidence = [e or context for e in evidence]
        if not any(evidence):
            reason = "no evidence text: " + ("; ".join(finder.errors) or "no pages retrieved")
            return self.skip(trajectory, sample, reason)

        calls = [
            judge.judge(
                "faithfulness",
                prompt.build_messages(evidence[i], sentences[:i], sentence),
                SentenceJudgment,
                prompt.PROMPT_HASH,
                key=f"sentence={i}",
            )
            for i, sentence in enumerate(sentences)
        ]
        results = await asyncio.gather(*calls)
        row = self.new_row(trajectory, sample)
        per_sentence: list[dict[str, Any]] = []
        for i, (record, verdict) in enumerate(results):
            row.add_judge(record)
            entry: dict[str, Any] = {
                "index": i,
                "text": sentences[i],
                "cited": bool(cited[i]),
                "status": record.status,
            }
            if verdict is not None:
                entry.update(
                    label=verdict.label.value,
                    error_type=verdict.error_type,
                    criterion=CRITERION_OF.get(verdict.error_type or ""),
                )
            per_sentence.append(entry)
        return self._finish(row, per_sentence)

    def _finish(self, row: ScoreRow, per_sentence: list[dict[str, Any]]) -> ScoreRow:
        judged = [s for s in per_sentence if "label" in s]
        attributable = sum(1 for s in judged if s["label"] == Label.ATTRIBUTABLE.value)
        failed = [r for r in row.judges if r.failed]
        row.details["sentences"] = per_sentence
        row.details["units"] = [
            {"unit": f"sentence{s['index']}", "label": s["label"]} for s in judged
        ]
        row.counts = {
            "sentences": float(len(judged)),
            "attributable": float(attributable),
            "excluded_sentences": float(len(per_sentence) - len(judged)),
        }
        row.metrics["attributable_rate"] = attributable / len(judged) if judged else None
        if failed:
            row.status = "partial" if judged else failed[0].status
            row.reason = "; ".join(f"{r.key}: {r.error}" for r in failed[:5])
        return row

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        partial = sum(1 for r in usable if r.status == "partial")
        result = AggregateResult()
        result.metrics["attributable_rate"] = ratio_metric(
            [r.counts.get("attributable", 0.0) for r in usable],
            [r.counts.get("sentences", 0.0) for r in usable],
            stats,
            excluded=failed + partial,
            skipped=skipped,
            headline=True,
        )
        result.metrics["attributable_rate_items"] = mean_metric(
            [v for r in usable if (v := r.metrics.get("attributable_rate")) is not None],
            stats,
            excluded=failed,
            skipped=skipped,
        )
        labels: Counter[str] = Counter()
        types: Counter[str] = Counter()
        criteria: Counter[str] = Counter()
        for r in usable:
            for s in r.details.get("sentences", []):
                if "label" in s:
                    labels[s["label"]] += 1
                    if s.get("error_type"):
                        types[s["error_type"]] += 1
                        criteria[CRITERION_OF[s["error_type"]]] += 1
        result.tables["labels"] = dict(labels)
        result.tables["error_types"] = dict(sorted(types.items(), key=lambda kv: int(kv[0][1:])))
        result.tables["criteria"] = dict(sorted(criteria.items()))
        result.tables["excluded_sentences"] = int(
            sum(r.counts.get("excluded_sentences", 0.0) for r in usable)
        )
        return result
