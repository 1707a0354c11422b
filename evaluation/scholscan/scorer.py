"""ScholScan scorer: an extractor judge counts, the official formula scores (spec §3).

The extractor sees only the question Q, the gold explanation E and the system's answer A
(the trajectory's answer text followed by its reported issues, rendered as text) and returns
integer counts (:class:`~scanrag.evaluation.scholscan.formula.ScholScanCounts`); inconsistent counts
(hit > gold, reached > gold, negatives) fail validation, which triggers the judge's one retry
and then a ``judge_parse_error`` row, excluded from every mean.

Per item: the S score and its parts on items whose gold says an error exists; on items whose
gold says there is none, only ``existence_correct`` (the extractor's existence bit), as in
the official protocol. An answer with no text and no reported issue is scored without a call:
it claims no error.

Aggregates: mean S (headline), mean S per error family (RQD, DI, SG, MO, DHP, CF, IC, RCA, LE;
from ``gold_errors[0].family`` or ``category``), and existence accuracy on the no-error items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from scanrag.evaluation.base import RowGroup, Scorer, StatsOptions, mean_metric, split_rows
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.evaluation.scholscan import prompt
from scanrag.evaluation.scholscan.formula import (
    OFFICIAL,
    ScholScanConstants,
    ScholScanCounts,
    score_components,
)
from scanrag.parsing import parse_verdict
from scanrag.schemas import Sample, Trajectory
from scanrag.schemas.families import FAMILIES, family_code

__all__ = [
    "ScholScanScorer",
    "gold_explanation",
    "gold_has_error",
    "render_answer",
    "sample_family",
]

_EXISTENCE_KEYS = ("has_error", "error_exists", "gold_existence", "existence")


def gold_has_error(sample: Sample) -> bool:
    """Whether the gold says the paper has the target error (metadata flag, else gold fields)."""
    for key in _EXISTENCE_KEYS:
        if key in sample.metadata and sample.metadata[key] is not None:
            value = sample.metadata[key]
            if isinstance(value, str):
                return parse_verdict(value, strict=True) is True
            return bool(value)
    return bool(sample.gold_errors) or bool((sample.gold_explanation or "").strip())


def sample_family(sample: Sample) -> str | None:
    """The error family code of a sample, or ``None`` when it names none we know."""
    for error in sample.gold_errors:
        if (code := family_code(error.family)) is not None:
            return code
    return family_code(sample.category)


def gold_explanation(sample: Sample) -> str:
    """E: the gold explanation, else a description assembled from the gold errors."""
    if sample.gold_explanation and sample.gold_explanation.strip():
        return sample.gold_explanation.strip()
    parts: list[str] = []
    for error in sample.gold_errors:
        if error.description:
            parts.append(error.description.strip())
        pages = sorted({*error.pages, *(loc.page for loc in error.locations)})
        if pages:
            parts.append("Locations: " + ", ".join(f"page {p}" for p in pages) + ".")
        parts.extend(f"Step {k}: {step}" for k, step in enumerate(error.reasoning_steps, 1))
    return "\n".join(parts)


def render_answer(trajectory: Trajectory) -> str:
    """A: the answer text, then every reported issue with its locations and reasoning."""
    parts: list[str] = []
    if trajectory.answer and trajectory.answer.strip():
        parts.append(trajectory.answer.strip())
    for k, issue in enumerate(trajectory.issues, start=1):
        lines = [f"Reported issue {k}: {issue.description.strip()}"]
        if issue.family:
            lines.append(f"  Category: {issue.family}")
        places = [
            f"page {loc.page}" + (f' ("{loc.text.strip()}")' if loc.text else "")
            for loc in issue.locations
        ]
        located = {loc.page for loc in issue.locations}
        places += [f"page {p}" for p in issue.pages if p not in located]
        if places:
            lines.append("  Where: " + "; ".join(dict.fromkeys(places)))
        lines.extend(f"  Reasoning {s}: {step}" for s, step in enumerate(issue.reasoning_steps, 1))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _no_claim_counts(gold_error: bool) -> ScholScanCounts:
    """Counts of an answer that claims no error at all."""
    zero = {"gold": 0, "hit": 0, "extra": 0}
    return ScholScanCounts.model_validate(
        {
            "existence": 0 if gold_error else 1,
            "contains_target_error": 0,
            "location": zero,
            "reasoning": {"gold": 0, "reached": 0},
            "unrelated_errors": 0,
        }
    )


class ScholScanScorer(Scorer):
    """Extractor judge + official S score; see the module docstring."""

    name = "scholscan"
    tasks: ClassVar[frozenset[str]] = frozenset({"error_detection"})
    roles: ClassVar[tuple[str, ...]] = ("extractor",)

    def __init__(self, constants: ScholScanConstants | None = None, **values: float) -> None:
        self.constants = constants or (ScholScanConstants(**values) if values else OFFICIAL)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        gold_error = gold_has_error(sample)
        details: dict[str, Any] = {"family": sample_family(sample), "gold_has_error": gold_error}
        answer = render_answer(trajectory)
        if not answer:
            details["no_claim"] = True
            return self._row(trajectory, sample, _no_claim_counts(gold_error), details)
        if judge is None or judge.model_for("extractor") is None:
            reason = judge.why_not("extractor") if judge else "no judge context"
            return self.skip(trajectory, sample, reason, details=details)
        messages = prompt.build_messages(sample.question, gold_explanation(sample), answer)
        record, counts = await judge.judge(
            "extractor", messages, ScholScanCounts, prompt.PROMPT_HASH, key="answer"
        )
        if counts is None:
            row = self.new_row(
                trajectory, sample, status=record.status, reason=record.error, details=details
            )
            row.add_judge(record)
            return row
        row = self._row(trajectory, sample, counts, details)
        row.add_judge(record)
        return row

    def _row(
        self,
        trajectory: Trajectory,
        sample: Sample,
        counts: ScholScanCounts,
        details: dict[str, Any],
    ) -> ScoreRow:
        details["counts"] = counts.model_dump()
        metrics: dict[str, float | None] = {"existence_correct": float(counts.existence)}
        if details["gold_has_error"]:
            metrics.update(score_components(counts, self.constants))
            metrics["contains_target_error"] = float(counts.contains_target_error)
        units = [{"unit": "existence", "label": str(counts.existence)}]
        details["units"] = units
        return self.new_row(trajectory, sample, metrics=metrics, details=details)

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        usable, failed, skipped = split_rows(rows)
        positive = [r for r in usable if r.details.get("gold_has_error")]
        negative = [r for r in usable if not r.details.get("gold_has_error")]
        result = AggregateResult()
        result.metrics["S"] = mean_metric(
            [v for r in positive if (v := r.metrics.get("S")) is not None],
            stats,
            excluded=failed,
            skipped=skipped,
            headline=True,
        )
        for part in ("location", "reasoning", "penalty"):
            values = [v for r in positive if (v := r.metrics.get(part)) is not None]
            result.metrics[part] = mean_metric(values, stats)
        families: dict[str, dict[str, float | int | None]] = {}
        for code in FAMILIES:
            values = [
                v
                for r in positive
                if r.details.get("family") == code and (v := r.metrics.get("S")) is not None
            ]
            summary = mean_metric(values, stats)
            result.metrics[f"S.{code}"] = summary
            families[code] = {"S": summary.value, "n": summary.n}
        result.tables["families"] = families
        result.metrics["existence_accuracy_no_error"] = mean_metric(
            [v for r in negative if (v := r.metrics.get("existence_correct")) is not None], stats
        )
        result.metrics["existence_accuracy"] = mean_metric(
            [
                v
                for r in usable
                if (v := r.metrics.get("existence", r.metrics.get("existence_correct"))) is not None
            ],
            stats,
        )
        return result
