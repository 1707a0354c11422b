"""Answer verification under the official profile (DocScope's ``score_answer.py``).

Population: every item whose inference succeeded. The judge is always called, with no rule
deciding first: it sees the question, the gold answer (``"Unanswerable"`` for unanswerable
items) and the system answer, which is the content of the last answer tag when there is a
non-empty one and the whole reply otherwise. Only a JSON boolean ``consistent`` counts; any
other reply is a ``judge_parse_error`` (left out of the accuracy, still counted in
``n_total`` and ``n_with_answer_tag``). The judge may write up to 2048 tokens, with no
second try. Summary (``official_summary``): ``n_judged``, ``n_correct``, ``accuracy`` =
n_correct / n_judged, ``n_with_answer_tag``, ``n_total``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluation.base import Scorer, StatsOptions
from evaluation.docscope.official import (
    GOLD_UNANSWERABLE,
    inference_skip,
    official_judge,
    official_view,
    verdict,
)
from evaluation.docscope.profiles import OFFICIAL
from evaluation.judge_prompts import custom_messages, custom_template, template_hash
from evaluation.judging import JudgeContext
from evaluation.prompts import docscope_answer as prompt
from evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory

ROLE = "answer"


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


async def score_answer(
    scorer: Scorer, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None
) -> ScoreRow:
    view = official_view(trajectory)
    gold = (sample.answer or "") if sample.answerable else GOLD_UNANSWERABLE
    details: dict[str, Any] = {
        "profile": OFFICIAL,
        "view": view.source,
        "answerable": sample.answerable,
        "has_answer_tag": view.has_answer_tag,
        "gold": gold,
        "predicted": view.model_answer,
    }
    if not view.ok:
        return inference_skip(scorer, trajectory, sample, view)
    if judge is None or judge.model_for(ROLE) is None:
        reason = judge.why_not(ROLE) if judge is not None else "no judge context"
        return scorer.skip(trajectory, sample, reason, details=details)
    messages, prompt_hash = answer_messages(judge, sample.question, gold, view.model_answer)
    record, reply = await official_judge(judge, ROLE, messages, prompt_hash)
    row = scorer.new_row(trajectory, sample, details=details | {"method": "judge"})
    row.add_judge(record)
    consistent, reason = (None, "") if reply is None else verdict(reply)
    if record.status == "judge_error" or consistent is None:
        row.status = "judge_error" if record.status == "judge_error" else "judge_parse_error"
        row.reason = record.error or "no JSON boolean 'consistent' in the reply"
        row.metrics = {"correct": None}
        return row
    row.metrics = {"correct": 1.0 if consistent else 0.0}
    row.details["judge_reason"] = reason
    return row


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


def aggregate_answer(rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
    from evaluation.docscope.answer import accuracy_aggregate

    result = accuracy_aggregate(rows, stats)
    result.tables["official_summary"] = official_answer_summary(rows)
    result.tables["inference_errors"] = sum(
        1 for r in rows if r.status == "skipped" and "inference status" in (r.reason or "")
    )
    return result
