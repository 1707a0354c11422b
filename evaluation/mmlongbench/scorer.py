"""The ``mmlongbench`` scorer: MMLongBench-Doc's official scoring of a run, reporting the
paper's two headline numbers, accuracy and generalised F1.

Per item: the prediction is scored against the gold answer with :func:`official_score`
under the sample's ``answer_format`` (the scorer applies to question-answering samples that
carry one). The prediction is

* ``extract=False`` (default): the system's answer as it is;
* ``extract=True``: the short answer the ``extractor`` judge pulls out of the system's answer
  (our prompt, the official contract: a short answer, "Not answerable" or "Fail to answer"),
  as the benchmark's pipeline does before scoring. An empty answer is "Fail to answer"
  without a call. A failed extraction is a ``judge_error``/``judge_parse_error`` row, left
  out of both numbers and counted as excluded (officially it scores 0).

In both modes a bare refusal in any spelling ("Unanswerable") becomes "Not answerable", the
benchmark's refusal. An unanswerable sample's gold is "Not answerable" (format ``None``).

Aggregates: ``accuracy`` and ``f1`` (headline, :mod:`evaluation.mmlongbench.metrics`), the
``recall`` and ``precision`` F1 is made of, and the accuracy of the official result file's
groups: single-page evidence, cross-page evidence (answerable), unanswerable; tables by
evidence source and document type.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from evaluation.base import (
    RowGroup,
    Scorer,
    StatsOptions,
    mean_metric,
    split_rows,
    statistic_metric,
)
from evaluation.judging import JudgeContext
from evaluation.mmlongbench.extraction import FAIL_TO_ANSWER, Extraction, canonical_prediction
from evaluation.mmlongbench.metrics import OfficialMetrics, official_metrics
from evaluation.mmlongbench.official import NOT_ANSWERABLE, official_score
from evaluation.prompts import mmlongbench_extract as prompt
from evaluation.schemas import AggregateResult, MetricSummary, ScoreRow
from scanrag.schemas import Sample, Trajectory

ROLE = "extractor"

# Populations of the official result file (``show_results``), by row details.
GROUPS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "accuracy_single_page": lambda d: d.get("n_evidence_pages") == 1,
    "accuracy_cross_page": lambda d: (
        d.get("n_evidence_pages") != 1 and d.get("gold") != NOT_ANSWERABLE
    ),
    "accuracy_unanswerable": lambda d: d.get("gold") == NOT_ANSWERABLE,
}


def evidence_sources(sample: Sample) -> list[str]:
    """The sample's evidence sources as names: a list, or the benchmark's string form
    (``"['Chart', 'Table']"``) read as a Python literal; a plain string is one name."""
    value = sample.metadata.get("evidence_sources")
    if isinstance(value, str) and value.strip().startswith("["):
        with contextlib.suppress(ValueError, SyntaxError):
            value = ast.literal_eval(value.strip())
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


def gold_answer(sample: Sample) -> str | None:
    """The gold text the official rules compare with ("Not answerable" when unanswerable)."""
    return sample.answer if sample.answerable else NOT_ANSWERABLE


def _triples(rows: Sequence[ScoreRow]) -> list[tuple[str, str, float | None]]:
    return [
        (str(r.details.get("gold")), str(r.details.get("prediction")), r.metrics.get("score"))
        for r in rows
    ]


def _part(
    triples: Sequence[tuple[str, str, float | None]], field: Callable[[OfficialMetrics], Any]
) -> Callable[[np.ndarray], float | None]:
    def statistic(index: np.ndarray) -> float | None:
        value = field(official_metrics(triples[int(i)] for i in index))
        return None if value is None else float(value)

    return statistic


def _accuracy_table(rows: Sequence[ScoreRow], key: str) -> dict[str, dict[str, float]]:
    """Accuracy per value of a row detail (a list detail counts the row once per value)."""
    scores: dict[str, list[float]] = {}
    for row in rows:
        value = row.details.get(key)
        for name in value if isinstance(value, list) else [value]:
            if name is not None:
                scores.setdefault(str(name), []).append(float(row.metrics.get("score") or 0.0))
    return {
        name: {"n": len(values), "accuracy": sum(values) / len(values)}
        for name, values in sorted(scores.items())
    }


class MMLongBenchScorer(Scorer):
    """Official MMLongBench-Doc scoring, optionally after answer extraction."""

    name = "mmlongbench"
    roles: ClassVar[tuple[str, ...]] = (ROLE,)

    def __init__(self, extract: bool = False) -> None:
        if not isinstance(extract, bool):
            raise TypeError(f"extract must be true or false, got {extract!r}")
        self.extract = extract

    def applies(self, sample: Sample) -> bool:
        return super().applies(sample) and sample.answer_format is not None

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        gold = gold_answer(sample)
        answer = (trajectory.answer or "").strip()
        details: dict[str, Any] = {
            "gold": gold,
            "format": sample.answer_format,
            "answerable": sample.answerable,
            "n_evidence_pages": len(sample.gold_pages),
            "evidence_sources": evidence_sources(sample),
            "doc_type": sample.metadata.get("doc_type"),
        }
        if gold is None:
            return self.skip(trajectory, sample, "no gold answer", details=details)
        if not self.extract:
            return self._scored(trajectory, sample, answer, details | {"method": "raw"})
        details["answer"] = answer
        if not answer:
            return self._scored(trajectory, sample, FAIL_TO_ANSWER, details | {"method": "empty"})
        if judge is None or judge.model_for(ROLE) is None:
            reason = judge.why_not(ROLE) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason, details=details)
        messages = prompt.build_messages(question=sample.question, response=answer)
        record, parsed = await judge.judge(ROLE, messages, Extraction, prompt.PROMPT_HASH)
        if parsed is None:
            row = self.new_row(
                trajectory,
                sample,
                status=record.status,
                reason=record.error,
                metrics={"score": None},
                details=details,
            )
        else:
            details |= {"method": "extracted", "extracted_format": parsed.format}
            row = self._scored(trajectory, sample, parsed.answer, details)
        row.add_judge(record)
        return row

    def _scored(
        self, trajectory: Trajectory, sample: Sample, prediction: str, details: dict[str, Any]
    ) -> ScoreRow:
        prediction = canonical_prediction(prediction)
        score = official_score(str(details["gold"]), prediction, str(details["format"]))
        # ``correct`` (the report's ✓/✗) follows the benchmark's own acceptance: a score is
        # 0 or above the ANLS threshold (0.5), so any credit counts as correct.
        return self.new_row(
            trajectory,
            sample,
            metrics={"score": score, "correct": float(score > 0.0)},
            details=details | {"prediction": prediction},
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        triples = _triples(usable)
        n = len(triples)
        metrics: dict[str, MetricSummary] = {
            "accuracy": mean_metric(
                [t[2] or 0.0 for t in triples],
                stats,
                excluded=failed,
                skipped=skipped,
                headline=True,
            ),
            "f1": statistic_metric(
                _part(triples, lambda m: m.f1),
                n,
                stats,
                excluded=failed,
                skipped=skipped,
                headline=True,
            ),
            "recall": statistic_metric(_part(triples, lambda m: m.recall), n, stats),
            "precision": statistic_metric(_part(triples, lambda m: m.precision), n, stats),
        }
        for name, keep in GROUPS.items():
            values = [float(r.metrics.get("score") or 0.0) for r in usable if keep(r.details)]
            metrics[name] = mean_metric(values, stats)
        tables = {
            "by_evidence_source": _accuracy_table(usable, "evidence_sources"),
            "by_doc_type": _accuracy_table(usable, "doc_type"),
        }
        return AggregateResult(metrics=metrics, tables=tables)
