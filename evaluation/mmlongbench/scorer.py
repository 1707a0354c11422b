"""The ``mmlongbench`` scorer: MMLongBench-Doc's scoring of a run, reporting the paper's two
headline numbers, accuracy and generalized F1.

Per item: the prediction is scored against the gold answer with
:func:`~scanrag.evaluation.mmlongbench.official.official_outcome` under the sample's
``answer_format`` (the scorer applies to question-answering samples that carry one). The
prediction is

* extracted: the short answer the ``extractor`` judge pulls out of the response, as the
  benchmark's pipeline does before scoring, with one of two call shapes
  (:mod:`scanrag.evaluation.mmlongbench.extraction`): ``json`` (our prompt, a JSON reply) or
  ``official`` (the prompt as the user turn, question and response as an assistant turn, a
  free-text reply, 256 tokens). ``call_shape`` defaults to ``official`` when an ``extractor``
  prompt file is given (``--judge-prompt extractor=FILE``), else ``json``;
* raw: the system's answer as it is.

``extract`` decides which: ``true`` or ``false``; unset (the default), extraction runs when the
official extractor is asked for — an ``extractor`` prompt file, or the official profile named
(``profile: official`` here, or the dataset's loader option) — and the answer is scored raw
otherwise. Asking for the official extractor and ``extract: false`` together is refused when
the scorer is built (an explicit ``profile: official``) or by the scoring checks (a prompt
file: :meth:`MMLongBenchScorer.job_problems`), naming the setting; never silently ignored.

The ``profile`` (:mod:`scanrag.evaluation.mmlongbench.profiles`, default ``official``) decides the
gold, what the extractor reads, refusal spellings and failed extractions. Aggregates:
``accuracy`` and ``f1`` (headline, :mod:`scanrag.evaluation.mmlongbench.metrics`), the ``recall``
and ``precision`` F1 is made of, and the accuracy of the official result file's groups:
single-page evidence, cross-page evidence (answerable), unanswerable; tables by evidence source
and document type.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from scanrag.evaluation.base import (
    RowGroup,
    Scorer,
    StatsOptions,
    mean_metric,
    split_rows,
    statistic_metric,
)
from scanrag.evaluation.judge_prompts import custom_template
from scanrag.evaluation.judging import JudgeContext, unreadable
from scanrag.evaluation.mmlongbench import prompt
from scanrag.evaluation.mmlongbench.extraction import (
    CALL_SHAPES,
    FAIL_TO_ANSWER,
    OFFICIAL_MAX_TOKENS,
    OFFICIAL_REQUEST,
    Extraction,
    analysis_turn,
    canonical_prediction,
    read_free_text,
)
from scanrag.evaluation.mmlongbench.metrics import OfficialMetrics, official_metrics
from scanrag.evaluation.mmlongbench.official import NOT_ANSWERABLE, official_outcome
from scanrag.evaluation.mmlongbench.profiles import (
    FAILED_RESPONSE,
    FAILED_TO_EXTRACT,
    LENIENT_NAME,
    OFFICIAL,
    ScoringProfile,
    get_profile,
    sample_profile,
)
from scanrag.evaluation.schemas import AggregateResult, JudgeRecord, MetricSummary, ScoreRow
from scanrag.hashing import stable_hash
from scanrag.llm.types import Message
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


def gold_answer(sample: Sample, profile: ScoringProfile | None = None) -> str | None:
    """The gold text the rules compare with: under the official profile the sample's answer
    as written ("Not answerable" when it has none and is unanswerable), else "Not answerable"
    for every unanswerable sample."""
    if profile is not None and profile.gold_as_written and sample.answer is not None:
        return sample.answer
    return sample.answer if sample.answerable else NOT_ANSWERABLE


def extraction_messages(
    judge: JudgeContext, call_shape: str, question: str, response: str
) -> tuple[list[Message], str]:
    """The extractor's messages and prompt hash for ``call_shape``."""
    if call_shape == "json":
        return prompt.build_messages(question=question, response=response), prompt.PROMPT_HASH
    template = custom_template(judge, ROLE)
    text, prompt_hash = (
        (template, stable_hash(["user-prompt", template]))
        if template is not None
        else (prompt.FREE_TEXT, prompt.FREE_TEXT_HASH)
    )
    turns = [
        Message(role="user", content=text),
        Message(role="assistant", content=analysis_turn(question, response)),
    ]
    return turns, prompt_hash


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
    """MMLongBench-Doc scoring, optionally after answer extraction."""

    name = "mmlongbench"
    roles = (ROLE,)

    extract: bool | None = None  # set on the instance only when given

    def __init__(
        self,
        extract: bool | None = None,
        profile: str | None = None,
        call_shape: str | None = None,
    ) -> None:
        if extract is not None and not isinstance(extract, bool):
            raise TypeError(f"extract must be true or false, got {extract!r}")
        if call_shape is not None and call_shape not in CALL_SHAPES:
            raise ValueError(
                f"call_shape must be one of {', '.join(CALL_SHAPES)}, got {call_shape!r}"
            )
        self.profile = None if profile is None else get_profile(profile).name
        if extract is False and self.profile == OFFICIAL.name:
            raise ValueError(
                "profile official always extracts the answer (the released pipeline), but "
                "extract is false: drop extract, or use profile lenient to score raw answers"
            )
        if extract is not None:
            self.extract = extract
        if call_shape is not None:
            self.call_shape = call_shape

    def applies(self, sample: Sample) -> bool:
        return super().applies(sample) and sample.answer_format is not None

    def profile_for(self, sample: Sample) -> ScoringProfile:
        if self.profile is not None:
            return get_profile(self.profile)
        return sample_profile(sample.metadata) or OFFICIAL

    @classmethod
    def job_problems(cls, params: Mapping[str, Any], judge_prompts: Mapping[str, Any]) -> list[str]:
        """``config.key: message`` when an ``extractor`` prompt file is given while
        ``extract`` is false: no answer would be extracted, the file silently unused."""
        if ROLE in judge_prompts and params.get("extract") is False:
            return [
                f"scoring.judge_prompts.{ROLE}: given, but scoring.params.mmlongbench.extract "
                "is false, so no answer is extracted: set it true (scanrag score --set "
                "scoring.params.mmlongbench.extract=true) or drop the prompt file"
            ]
        return []

    def extracts(self, sample: Sample, judge: JudgeContext | None) -> bool:
        """Whether the answer is extracted: ``extract`` when set, else when the official
        extractor is asked for (an ``extractor`` prompt file, or the official profile named
        by this scorer or by the sample's dataset)."""
        if self.extract is not None:
            return self.extract
        if judge is not None and custom_template(judge, ROLE) is not None:
            return True
        named = get_profile(self.profile) if self.profile else sample_profile(sample.metadata)
        return named is OFFICIAL

    def shape_for(self, judge: JudgeContext) -> str:
        """The extraction call shape: asked for, else ``official`` with a prompt file."""
        asked = getattr(self, "call_shape", None)
        if asked is not None:
            return str(asked)
        return "official" if custom_template(judge, ROLE) is not None else "json"

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        profile = self.profile_for(sample)
        gold = gold_answer(sample, profile)
        details: dict[str, Any] = {
            "profile": profile.name,
            "gold": gold,
            "format": sample.answer_format,
            "answerable": sample.answerable,
            "n_evidence_pages": len(sample.gold_pages),
            "evidence_sources": evidence_sources(sample),
            "doc_type": sample.metadata.get("doc_type"),
        }
        if gold is None:
            return self.skip(trajectory, sample, "no gold answer", details=details)
        answer = (trajectory.answer or "").strip()
        if not self.extracts(sample, judge):
            return self._scored(trajectory, sample, profile, answer, details | {"method": "raw"})
        response = _response(trajectory, profile)
        details["answer"] = response
        if not response and not profile.always_extracts:
            details["method"] = "empty"
            return self._scored(trajectory, sample, profile, FAIL_TO_ANSWER, details)
        if judge is None or judge.model_for(ROLE) is None:
            reason = judge.why_not(ROLE) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason, details=details)
        shape = self.shape_for(judge)
        if shape == "json" and custom_template(judge, ROLE) is not None:
            reason = "an extractor prompt file is read with call_shape: official only"
            return self.skip(trajectory, sample, reason, details=details)
        details["call_shape"] = shape
        record, extracted, extracted_format = await _extract(
            judge, shape, sample.question, response
        )
        if extracted is None and not profile.failures_score_zero:
            row = self.new_row(
                trajectory,
                sample,
                status=record.status if record.status != "ok" else "judge_parse_error",
                reason=record.error or "no 'Extracted answer:' in the extractor's reply",
                metrics={"score": None},
                details=details,
            )
        else:
            details |= {"method": "extracted", "extracted_format": extracted_format}
            if extracted is None:
                details["failure"] = record.error or "the extractor's reply holds no answer"
            prediction = extracted if extracted is not None else FAILED_TO_EXTRACT
            row = self._scored(trajectory, sample, profile, prediction, details)
        row.add_judge(record)
        return row

    def _scored(
        self,
        trajectory: Trajectory,
        sample: Sample,
        profile: ScoringProfile,
        prediction: str,
        details: dict[str, Any],
    ) -> ScoreRow:
        if profile.canonical_refusals:
            prediction = canonical_prediction(prediction)
        outcome = official_outcome(str(details["gold"]), prediction, str(details["format"]))
        if outcome.failure is not None:
            details = details | {"rule_failure": outcome.failure}
            if profile.failures_score_zero:  # the released pipeline's record of that case
                prediction = FAILED_TO_EXTRACT
        if outcome.refused is not None:
            details = details | {"refused": outcome.refused}
        # ``correct`` (the report's ✓/✗) follows the benchmark's own acceptance: a score is
        # 0 or above the ANLS threshold (0.5), so any credit counts as correct.
        return self.new_row(
            trajectory,
            sample,
            metrics={"score": outcome.score, "correct": float(outcome.score > 0.0)},
            details=details | {"prediction": prediction},
        )

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        profile, rows, other = _rows_of_profile(rows, self.profile)
        result = self._summarize(rows, stats)
        result.tables["profile"] = profile
        result.tables["profile_label"] = get_profile(profile).label
        if other:
            result.tables["rows_of_other_profile"] = other
        return result

    def _summarize(self, rows: Sequence[ScoreRow], stats: StatsOptions) -> AggregateResult:
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


def _rows_of_profile(
    rows: Sequence[ScoreRow], wanted: str | None
) -> tuple[str, list[ScoreRow], int]:
    """The profile to summarize, its rows and how many rows of another were left out (rows
    written before profiles existed were lenient; a mixture keeps ``wanted``, else official)."""
    found = {str(r.details.get("profile", LENIENT_NAME)) for r in rows}
    if len(found) <= 1:
        return (found.pop() if found else wanted or OFFICIAL.name), list(rows), 0
    keep = wanted or OFFICIAL.name
    kept = [r for r in rows if r.details.get("profile", LENIENT_NAME) == keep]
    return keep, kept, len(rows) - len(kept)


def _response(trajectory: Trajectory, profile: ScoringProfile) -> str:
    """What the extractor reads: the system's answer, or (official) its whole reply and
    "Failed" when the model call failed, as the released pipeline records a failed call."""
    if not profile.reads_whole_reply:
        return (trajectory.answer or "").strip()
    reply = trajectory.raw_output if trajectory.raw_output is not None else trajectory.answer
    if reply is None and trajectory.status.value not in ("ok", "unparsed"):
        return FAILED_RESPONSE
    return reply or ""


async def _extract(
    judge: JudgeContext, shape: str, question: str, response: str
) -> tuple[JudgeRecord, str | None, str | None]:
    """(record, extracted answer or ``None`` when it failed, the format the extractor named)."""
    messages, prompt_hash = extraction_messages(judge, shape, question, response)
    if shape == "json":
        record, parsed = await judge.judge(ROLE, messages, Extraction, prompt_hash)
        if parsed is None:
            return record, None, None
        return record, parsed.answer, parsed.format
    record = await judge.ask(
        ROLE, messages, prompt_hash, max_tokens=OFFICIAL_MAX_TOKENS, overrides=OFFICIAL_REQUEST
    )
    reply = record.raw if record.status == "ok" and record.raw is not None else FAILED_RESPONSE
    answer = read_free_text(reply)
    if answer is None and record.status == "ok":
        unreadable(record, "no 'Extracted answer:' in the extractor's reply")
    _, found, after = reply.partition("Answer format:")
    named = after.strip().split("\n")[0] if answer is not None and found else ""
    return record, answer, named or None
