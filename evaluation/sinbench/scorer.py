"""SIN-Bench scorer (spec §4): Matching, Relevance F1, Logic KT-sim, answer accuracy, Verify.

Per task (``Sample.task``):

* ``find`` and ``summary``: Match, Relevance F1 (τ = 2/3), Logic KT-sim; overall = their mean.
* ``chain_qa``: the same plus answer accuracy g/3; overall = mean of the four.
* ``verify``: accuracy of ``trajectory.verdict`` (or a yes/no answer) against the gold
  (``metadata["verdict"|"label"|"sufficient"]`` or ``Sample.answer``); no judge.

The prediction is ``trajectory.evidence_chain``; when it is empty, anchors are recovered from
the answer text (each anchor mention with the text up to the next one). "No Evidence, No
Score": with no recoverable anchor that matches, evidence metrics are 0 without a judge call.
The matching judge grades each hit's text against every gold text of its anchor (one call per
hit); the formulas are in :mod:`scanrag.evaluation.sinbench.metrics`. A failed judge call leaves the
evidence metrics ``None`` (excluded, counted), never 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from scanrag.evaluation.base import RowGroup, Scorer, StatsOptions, mean_metric, split_rows
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, JudgeRecord, ScoreRow
from scanrag.evaluation.sinbench import prompt
from scanrag.evaluation.sinbench.metrics import (
    ANCHOR_TEXT_RE,
    MAX_GRADE,
    TAU,
    anchor_keys,
    candidate_pairs,
    chain_metrics,
)
from scanrag.parsing import parse_verdict
from scanrag.schemas import EvidencePair, Sample, Trajectory

EVIDENCE_TASKS = ("find", "chain_qa", "summary")
TASK_METRICS: dict[str, tuple[str, ...]] = {
    "find": ("match", "relevance_f1", "logic_kt"),
    "summary": ("match", "relevance_f1", "logic_kt"),
    "chain_qa": ("match", "relevance_f1", "logic_kt", "answer_acc"),
    "verify": ("verify_accuracy",),
}
_GOLD_VERDICT_KEYS = ("verdict", "label", "sufficient", "gold_verdict")


class MatchGrades(BaseModel):
    """The matching judge's reply: one 0–3 grade per reference text."""

    scores: list[int] = Field(min_length=1)


class AnswerGrade(BaseModel):
    grade: int = Field(ge=0, le=MAX_GRADE)


def recover_chain(text: str | None) -> list[EvidencePair]:
    """Anchor/text pairs from running text: each anchor mention owns the text up to the next."""
    if not text:
        return []
    marks = list(ANCHOR_TEXT_RE.finditer(text))
    pairs = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[m.end() : end].strip(" \t\n:;,.-—()[]")
        pairs.append(EvidencePair(anchor=m.group(0), text=body))
    return pairs


def expand_pairs(
    pairs: Sequence[EvidencePair], aliases: Mapping[str, str] | None
) -> tuple[list[str | None], list[str]]:
    """Anchor keys and texts, one entry per named anchor (a pair naming two becomes two)."""
    keys: list[str | None] = []
    texts: list[str] = []
    for pair in pairs:
        found: list[str | None] = [*anchor_keys(pair.anchor, aliases)] or [None]
        for key in found:
            keys.append(key)
            texts.append(pair.text)
    return keys, texts


def gold_verdict(sample: Sample) -> bool | None:
    for key in _GOLD_VERDICT_KEYS:
        if key in sample.metadata:
            return parse_verdict(sample.metadata[key])
    return parse_verdict(sample.answer)


class SinBenchScorer(Scorer):
    """SIN-Bench metrics for the four tasks; see the module docstring."""

    name = "sinbench"
    tasks: ClassVar[frozenset[str]] = frozenset({"find", "verify", "chain_qa", "summary"})
    roles: ClassVar[tuple[str, ...]] = ("matching", "answer")

    def __init__(self, tau: float = TAU) -> None:
        self.tau = tau

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if sample.task == "verify":
            return self._verify(trajectory, sample)
        if not sample.gold_chain:
            return self.skip(trajectory, sample, "sample has no gold evidence chain")
        aliases = sample.metadata.get("anchor_aliases")
        pred_pairs = list(trajectory.evidence_chain) or recover_chain(trajectory.answer)
        pred_keys, pred_texts = expand_pairs(pred_pairs, aliases)
        gold_keys_raw, gold_texts = expand_pairs(sample.gold_chain, aliases)
        # A gold anchor that cannot be read still counts in K*; it just never matches.
        gold_keys = [k or f"unreadable:{j}" for j, k in enumerate(gold_keys_raw)]
        candidates = candidate_pairs(pred_keys, gold_keys)
        needs_answer = sample.task == "chain_qa"
        roles = ["matching"] if candidates else []
        roles += ["answer"] if needs_answer else []
        missing = [r for r in roles if judge is None or judge.model_for(r) is None]
        if missing:
            reason = judge.why_not(missing[0]) if judge else "no judge context"
            return self.skip(trajectory, sample, reason, details={"task": sample.task})

        row = self.new_row(trajectory, sample, details={"task": sample.task})
        hit_results: list[tuple[JudgeRecord, list[int] | None]] = []
        answer: tuple[JudgeRecord | None, int | None] = (None, None)
        if roles:
            assert judge is not None  # every role needed has a model: checked above
            hits = asyncio.gather(
                *(
                    self._grade_hit(judge, i, pred_keys[i] or "", pred_texts[i], gold_texts, js)
                    for i, js in candidates.items()
                )
            )
            if needs_answer:
                hit_results, answer = await asyncio.gather(
                    hits, self._grade_answer(judge, trajectory, sample)
                )
            else:
                hit_results = await hits
        for record in [*(r for r, _ in hit_results), answer[0]]:
            if record is not None:
                row.add_judge(record)
        units: list[dict[str, Any]] = []
        grades: dict[tuple[int, int], int] = {}
        evidence_ok = all(grade is not None for _, grade in hit_results)
        for (i, js), (_, scores) in zip(candidates.items(), hit_results, strict=True):
            if scores is not None:
                grades.update({(i, j): s for j, s in zip(js, scores, strict=True)})
                units.append({"unit": f"pair{i}", "label": str(max(scores))})
        if evidence_ok:
            m = chain_metrics(pred_keys, gold_keys, grades, tau=self.tau)
            row.metrics.update(
                match=m.match,
                precision=m.precision,
                recall=m.recall,
                relevance_f1=m.f1,
                logic_kt=m.kt_sim,
            )
            row.details.update(
                hits=m.hits,
                true_positives=m.true_positives,
                n_pred=m.n_pred,
                n_gold=m.n_gold,
                kendall_tau=m.kendall_tau,
                no_evidence=m.hits == 0,
            )
        if needs_answer:
            g = answer[1]
            row.metrics["answer_acc"] = None if g is None else g / MAX_GRADE
            if g is not None:
                units.append({"unit": "answer", "label": str(g)})
        row.details["units"] = units
        self._finish(row, sample.task)
        return row

    async def _grade_hit(
        self,
        judge: JudgeContext,
        i: int,
        key: str,
        text: str,
        gold_texts: Sequence[str],
        js: Sequence[int],
    ) -> tuple[JudgeRecord, list[int] | None]:
        references = [gold_texts[j] for j in js]

        def check(reply: MatchGrades) -> None:
            if len(reply.scores) != len(references):
                raise ValueError(
                    f"expected {len(references)} grade(s), one per reference; "
                    f"got {len(reply.scores)}"
                )
            if any(not 0 <= s <= MAX_GRADE for s in reply.scores):
                raise ValueError(f"grades must be integers from 0 to {MAX_GRADE}")

        anchor = key.replace("fig:", "Figure ").replace("table:", "Table ")
        messages = prompt.match_messages(anchor, text, references)
        record, reply = await judge.judge(
            "matching",
            messages,
            MatchGrades,
            prompt.MATCH_PROMPT_HASH,
            key=f"pair={i}",
            check=check,
            items=len(references),
        )
        return record, (reply.scores if reply is not None else None)

    async def _grade_answer(
        self, judge: JudgeContext, trajectory: Trajectory, sample: Sample
    ) -> tuple[JudgeRecord | None, int | None]:
        if not (trajectory.answer or "").strip():
            return None, 0  # nothing to grade: an empty answer earns g = 0 without a call
        answer = trajectory.answer or ""
        messages = prompt.answer_messages(sample.question, sample.answer or "", answer)
        record, reply = await judge.judge(
            "answer", messages, AnswerGrade, prompt.ANSWER_PROMPT_HASH, key="answer"
        )
        return record, (reply.grade if reply is not None else None)

    def _verify(self, trajectory: Trajectory, sample: Sample) -> ScoreRow:
        gold = gold_verdict(sample)
        if gold is None:
            return self.skip(trajectory, sample, "no gold verdict", details={"task": "verify"})
        pred = trajectory.verdict
        if pred is None:
            pred = parse_verdict(trajectory.answer)
        correct = float(pred is not None and pred == gold)
        return self.new_row(
            trajectory,
            sample,
            metrics={"verify_accuracy": correct, "overall": correct},
            details={"task": "verify", "gold": gold, "predicted": pred},
        )

    def _finish(self, row: ScoreRow, task: str) -> None:
        """Overall = mean of the task's metrics; status from the judged parts."""
        wanted = TASK_METRICS[task]
        values = [row.metrics.get(name) for name in wanted]
        row.metrics["overall"] = (
            sum(v for v in values if v is not None) / len(values)
            if all(v is not None for v in values)
            else None
        )
        failed = [r for r in row.judges if r.failed]
        if not failed:
            return
        if all(v is None for v in values):
            row.status = failed[0].status
        else:
            row.status = "partial"
        row.reason = "; ".join(f"{r.key}: {r.error}" for r in failed)

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        result = AggregateResult()
        overall_means: list[float] = []
        for task, names in TASK_METRICS.items():
            task_rows = [r for r in rows if r.details.get("task") == task]
            if not task_rows:
                continue
            usable, failed, skipped = split_rows(task_rows)
            extra = ("precision", "recall") if task in EVIDENCE_TASKS else ()
            for name in (*names, *extra, "overall"):
                values = [v for r in usable if (v := r.metrics.get(name)) is not None]
                excluded = failed + sum(1 for r in usable if r.metrics.get(name) is None)
                result.metrics[f"{task}.{name}"] = mean_metric(
                    values,
                    stats,
                    excluded=excluded,
                    skipped=skipped,
                    headline=name == "overall",
                )
            overall = result.metrics[f"{task}.overall"].value
            if overall is not None:
                overall_means.append(overall)
            no_evidence = sum(1 for r in usable if r.details.get("no_evidence"))
            result.tables[f"{task}.no_evidence_items"] = no_evidence
        if overall_means:
            # The paper's "Avg. Overall": the plain mean of the task overall scores.
            result.tables["avg_overall"] = sum(overall_means) / len(overall_means)
        return result
