"""Answer verification: a semantic-equivalence judge (``answer``) and format rules
(``answer_rules``). Both report accuracy on answerable items, on unanswerable items and on all.

What the profile decides for ``answer`` (:mod:`scanrag.evaluation.docscope.profiles`):

* paper: rules first. Unanswerable gold: correct exactly when the system answered
  "Unanswerable" (case, spacing and outer punctuation aside; "Not answerable" is the same
  answer), decided without a judge. Answerable gold: an empty answer or an "Unanswerable"
  answer is wrong and an answer equal to the gold one (case, spacing and outer punctuation
  aside) is right, both without a judge call; otherwise the judge decides whether a and a*
  mean the same given q (a verdict written as a word is read; one corrective call);
* official (``score_answer.py``): every item whose inference succeeded, the judge always
  called, with the gold ``"Unanswerable"`` for unanswerable items and the content of the last
  answer tag (else the whole reply) as the system answer; only a JSON boolean ``consistent``
  counts, anything else is a ``judge_parse_error``; the table ``official_summary`` is the
  ``answer`` block of ``summarize_eval.py`` (``n_judged``, ``n_correct``, ``accuracy``,
  ``n_with_answer_tag``, ``n_total``).

A judge failure leaves the item out of the accuracy (counted as excluded), never counted
wrong. A user prompt file for the ``answer`` role (:mod:`scanrag.evaluation.judge_prompts`) replaces
the built-in prompt under either profile.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, field_validator

from scanrag.evaluation.base import PureScorer, RowGroup, StatsOptions, mean_metric, split_rows
from scanrag.evaluation.docscope import answer_prompt as prompt
from scanrag.evaluation.docscope.answer_rules import infer_format, match_answer, normalize_text
from scanrag.evaluation.docscope.common import answer_text
from scanrag.evaluation.docscope.official.view import official_judge, verdict
from scanrag.evaluation.docscope.profiled import JudgingScorer, Opening, ProfileBinding
from scanrag.evaluation.docscope.profiles import OFFICIAL, Profile
from scanrag.evaluation.judge_prompts import custom_messages, custom_template, template_hash
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
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


def official_answer_summary(rows: Sequence[ScoreRow]) -> dict[str, Any]:
    """The answer block of the released summary: judged rows, correct ones, the accuracy,
    rows whose reply had an answer tag, and every row a judge call was made for."""
    attempted = [r for r in rows if r.status != "skipped"]
    judged = [r for r in attempted if r.metrics.get("correct") is not None]
    correct = sum(1 for r in judged if r.metrics["correct"] == 1.0)
    return {
        "n_judged": len(judged),
        "n_correct": correct,
        "accuracy": correct / len(judged) if judged else 0.0,
        "n_with_answer_tag": sum(1 for r in attempted if r.details.get("has_answer_tag")),
        "n_total": len(attempted),
    }


def answer_messages(
    judge: JudgeContext, question: str, gold: str, answer: str
) -> tuple[list[Any], str]:
    """The answer judge's messages: a user prompt file if given, else our prompt."""
    template = custom_template(judge, ROLE)
    if template is None:
        messages = prompt.build_messages(question=question, gold=gold, answer=answer)
        return messages, prompt.PROMPT_HASH
    fields = {"question": question, "gold_answer": gold, "model_answer": answer}
    return custom_messages(template, fields), template_hash(template)


def rule_verdict(answerable: bool, gold: str, predicted: str) -> tuple[bool, str] | None:
    """The paper profile's decisions without a judge: (correct, method), or ``None``."""
    if not answerable:
        return says_unanswerable(predicted), "unanswerable_rule"
    if not predicted:
        return False, "empty_answer"
    if says_unanswerable(predicted):
        return False, "refused"
    if normalize_text(predicted) == normalize_text(gold):
        return True, "exact_match"
    return None


async def _verdict(
    judge: JudgeContext, profile: Profile, messages: list[Any], prompt_hash: str
) -> tuple[JudgeRecord, bool | None, str, str | None]:
    """(record, consistent, reason, error) of one answer judge call under ``profile``."""
    if profile.exact_replies:
        record, reply = await official_judge(
            judge,
            ROLE,
            messages,
            prompt_hash,
            max_tokens=profile.judge_max_tokens,
            shape=profile.call_shape,
        )
        consistent, reason = (None, "") if reply is None else verdict(reply)
        error = record.error or "no JSON boolean 'consistent' in the reply"
        return record, consistent, reason, error
    record, parsed = await judge.judge(
        ROLE, messages, AnswerJudgment, prompt_hash, max_tokens=profile.judge_max_tokens
    )
    if parsed is None:
        return record, None, "", record.error
    return record, parsed.consistent, parsed.reason, None


class AnswerScorer(JudgingScorer):
    """Semantic equivalence of a and a* given q, decided by a text judge."""

    name = "answer"
    stage = "answer"
    roles = (ROLE,)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        opening = self.open_item(trajectory, sample, judge, stage_metric=False)
        if isinstance(opening, ScoreRow):
            return opening
        profile, gold, view = opening.profile, opening.gold, opening.view
        details = opening.details | {"answerable": gold.answerable}
        if profile.reads_reply:
            details["has_answer_tag"] = view.has_answer_tag
        if profile.shortcuts and gold.answerable and gold.answer is None:
            details |= {"predicted": view.answer, "gold": None}
            return self.skip(trajectory, sample, "no gold answer", details=details)
        expected = gold.answer_text if gold.answerable else profile.unanswerable_gold
        details |= {"gold": expected if expected is not None else gold.answer}
        details["predicted"] = view.answer
        if profile.shortcuts:
            decided = rule_verdict(gold.answerable, gold.answer_text, view.answer)
            if decided is not None:
                return self._done(trajectory, sample, decided[0], decided[1], details)
        if judge is None or judge.model_for(ROLE) is None:
            reason = judge.why_not(ROLE) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason, details=details)
        return await self._judged(trajectory, sample, opening, judge, expected or "", details)

    async def _judged(
        self,
        trajectory: Trajectory,
        sample: Sample,
        opening: Opening,
        judge: JudgeContext,
        expected: str,
        details: dict[str, Any],
    ) -> ScoreRow:
        messages, prompt_hash = answer_messages(
            judge, opening.gold.question, expected, opening.view.answer
        )
        record, consistent, reason, error = await _verdict(
            judge, opening.profile, messages, prompt_hash
        )
        row = self.new_row(trajectory, sample, details=details | {"method": "judge"})
        row.add_judge(record)
        if consistent is None:
            status = "judge_error" if record.status == "judge_error" else "judge_parse_error"
            row.status = status  # type: ignore[assignment]
            row.reason = error
            row.metrics = {"correct": None}
            return row
        row.metrics = {"correct": 1.0 if consistent else 0.0}
        row.details["judge_reason"] = reason
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

    def summarize(
        self, rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
    ) -> AggregateResult:
        result = accuracy_aggregate(rows, stats)
        if profile.summary_blocks:
            result.tables["official_summary"] = official_answer_summary(rows)
            result.tables["inference_errors"] = sum(
                1 for r in rows if r.status == "skipped" and "inference status" in (r.reason or "")
            )
        return result


answer_official = ProfileBinding(AnswerScorer, OFFICIAL, "answer_official")


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
