"""Answer verification: a semantic-equivalence judge (``answer``) and format rules
(``answer_rules``). Both report accuracy on answerable items, on unanswerable items and on all.

Unanswerable gold: correct exactly when the system answered "Unanswerable" (case, spacing
and outer punctuation aside; "Not answerable" is the same answer), decided without a judge.
Answerable gold: an empty answer or an "Unanswerable" answer is wrong and an answer equal to
the gold one (case, spacing and outer punctuation aside) is right, both without a judge call;
otherwise the judge decides whether a and a* mean the same given q. A judge failure leaves
the item out of the accuracy (counted as excluded), never counted wrong.

``profile: official`` (``answer`` only) follows DocScope's released scorer instead: the judge
is always called, with the whole reply when there is no answer tag
(:mod:`evaluation.docscope.official_answer`). A user prompt file for the ``answer`` role
(:mod:`evaluation.judge_prompts`) replaces the built-in prompt under either profile.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, field_validator

from evaluation.base import PureScorer, RowGroup, Scorer, StatsOptions, mean_metric, split_rows
from evaluation.docscope.answer_rules import infer_format, match_answer, normalize_text
from evaluation.docscope.common import answer_text
from evaluation.docscope.official_answer import aggregate_answer, answer_messages, score_answer
from evaluation.docscope.profiles import (
    OFFICIAL,
    PAPER,
    Profile,
    aggregate_by_profile,
    apply_profile,
    official_twin,
)
from evaluation.judging import JudgeContext
from evaluation.schemas import AggregateResult, ScoreRow
from scanrag.parsing import parse_verdict
from scanrag.schemas import Sample, Trajectory

ROLE = "answer"
_UNANSWERABLE = re.compile(r"^\W*(?:unanswerable|not answerable)\W*$", re.IGNORECASE)


def says_unanswerable(answer: str | None) -> bool:
    """True for the answer "Unanswerable" (or "Not answerable"), in any case."""
    return bool(answer and _UNANSWERABLE.match(answer.strip()))


_YES, _NO = ("consistent",), ("inconsistent", "not_consistent")


class AnswerJudgment(BaseModel):
    consistent: bool
    reason: str = ""

    @field_validator("consistent", mode="before")
    @classmethod
    def _boolean(cls, value: object) -> object:
        if isinstance(value, str):
            decision = parse_verdict(value, strict=True, yes=_YES, no=_NO)
            return value if decision is None else decision
        return value


def accuracy_aggregate(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
    """Accuracy on answerable / unanswerable / all items from rows with a ``correct`` metric."""
    metrics = {}
    parts = {
        "accuracy_answerable": lambda r: r.details.get("answerable") is True,
        "accuracy_unanswerable": lambda r: r.details.get("answerable") is False,
        "accuracy": lambda r: True,
    }
    for name, keep in parts.items():
        selected = [r for r in rows if keep(r)]
        usable, failed, skipped = split_rows(selected)
        values = [v for r in usable if (v := r.metrics.get("correct")) is not None]
        metrics[name] = mean_metric(values, stats, excluded=failed, skipped=skipped, headline=True)
    return AggregateResult(metrics=metrics)


class AnswerScorer(Scorer):
    """Semantic equivalence of a and a* given q, decided by a text judge."""

    name = "answer"
    roles = (ROLE,)
    profile: Profile = PAPER

    def __init__(self, profile: Profile = PAPER) -> None:
        apply_profile(self, profile)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if self.profile == OFFICIAL:
            return await score_answer(self, trajectory, sample, judge)
        predicted = answer_text(trajectory)
        details = {
            "profile": PAPER,
            "answerable": sample.answerable,
            "predicted": predicted,
            "gold": sample.answer,
        }
        if not sample.answerable:
            ok = says_unanswerable(predicted)
            return self._done(trajectory, sample, ok, "unanswerable_rule", details)
        if sample.answer is None:
            return self.skip(trajectory, sample, "no gold answer", details=details)
        if not predicted:
            return self._done(trajectory, sample, False, "empty_answer", details)
        if says_unanswerable(predicted):
            return self._done(trajectory, sample, False, "refused", details)
        if normalize_text(predicted) == normalize_text(sample.answer):
            return self._done(trajectory, sample, True, "exact_match", details)
        if judge is None or judge.model_for(ROLE) is None:
            reason = judge.why_not(ROLE) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason, details=details)
        messages, prompt_hash = answer_messages(judge, sample.question, sample.answer, predicted)
        record, parsed = await judge.judge(ROLE, messages, AnswerJudgment, prompt_hash)
        row = self.new_row(trajectory, sample, details=details | {"method": "judge"})
        row.add_judge(record)
        if parsed is None:
            row.status = record.status  # type: ignore[assignment]
            row.reason = record.error
            row.metrics = {"correct": None}
            return row
        row.metrics = {"correct": 1.0 if parsed.consistent else 0.0}
        row.details["judge_reason"] = parsed.reason
        return row

    def _done(
        self, trajectory: Trajectory, sample: Sample, ok: bool, method: str, details: dict
    ) -> ScoreRow:
        return self.new_row(
            trajectory,
            sample,
            metrics={"correct": 1.0 if ok else 0.0},
            details=details | {"method": method},
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        return aggregate_by_profile(
            rows,
            self.profile,
            lambda kept: accuracy_aggregate(kept, stats),
            lambda kept: aggregate_answer(kept, stats),
        )


AnswerOfficialScorer = official_twin(AnswerScorer, "answer_official")


class AnswerRulesScorer(PureScorer):
    """Format-aware rule matching (Int / Float / Str / List / None), no judge."""

    name = "answer_rules"

    def __init__(self, rel_tol: float = 0.01, anls_threshold: float = 0.5) -> None:
        if rel_tol < 0:
            raise ValueError(f"rel_tol must be ≥ 0, got {rel_tol}")
        self.rel_tol = rel_tol
        self.anls_threshold = anls_threshold

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        predicted = answer_text(trajectory)
        if sample.answerable and sample.answer is None:
            return self.skip(trajectory, sample, "no gold answer")
        fmt = sample.answer_format or infer_format(sample.answer, sample.answerable)
        result = match_answer(
            sample.answer,
            predicted,
            fmt,
            answerable=sample.answerable,
            rel_tol=self.rel_tol,
            threshold=self.anls_threshold,
        )
        return self.new_row(
            trajectory,
            sample,
            metrics={"correct": 1.0 if result.correct else 0.0, "score": result.score},
            details={
                "answerable": sample.answerable,
                "format": fmt,
                "method": result.method,
                "detail": result.detail,
                "predicted": predicted,
                "gold": sample.answer,
            },
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        result = accuracy_aggregate(rows, stats)
        usable, failed, skipped = split_rows(rows)
        scores = [v for r in usable if (v := r.metrics.get("score")) is not None]
        result.metrics["score"] = mean_metric(scores, stats, excluded=failed, skipped=skipped)
        by_format: dict[str, list[float]] = {}
        for row in usable:
            by_format.setdefault(str(row.details.get("format")), []).append(
                row.metrics.get("correct") or 0.0
            )
        result.tables["accuracy_by_format"] = {
            fmt: {"n": len(v), "accuracy": sum(v) / len(v)} for fmt, v in sorted(by_format.items())
        }
        return result
