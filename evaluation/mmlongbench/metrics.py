"""MMLongBench-Doc's headline numbers (``eval_acc_and_f1`` in ``eval/eval_score.py``).

* Accuracy: the mean item score over the scored items (soft scores: an ANLS of 0.8 adds 0.8).
* F1: the harmonic mean of a recall and a precision that both sum the scores of the
  answerable items (gold other than "Not answerable"); recall divides by the number of
  answerable items, precision by the number of items whose prediction is not
  "Not answerable". Both tests compare the text exactly ("not answerable" is an answer).
  An unanswerable item answered "Not answerable" raises accuracy and leaves F1 alone; one
  answered anything else lowers precision.

Items without a score (an extraction that failed in our pipeline) are left out, as the
official code leaves out samples without a ``score`` key. Nothing scored gives (0, 0), and a
recall or precision without items gives an F1 of 0, as officially.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scanrag.evaluation.mmlongbench.official import NOT_ANSWERABLE


@dataclass(frozen=True)
class OfficialMetrics:
    accuracy: float
    f1: float
    recall: float | None
    precision: float | None
    n: int


def official_metrics(items: Iterable[tuple[str, str, float | None]]) -> OfficialMetrics:
    """Accuracy, F1 and the recall and precision F1 is made of (``None`` when undefined)
    from ``(gold, pred, score)`` triples; a ``None`` score leaves the item out."""
    scored = [(gold, pred, score) for gold, pred, score in items if score is not None]
    if not scored:
        return OfficialMetrics(0.0, 0.0, None, None, 0)
    accuracy = sum(score for _, _, score in scored) / len(scored)
    gained = [score for gold, _, score in scored if gold != NOT_ANSWERABLE]
    answered = sum(1 for _, pred, _ in scored if pred != NOT_ANSWERABLE)
    recall = sum(gained) / len(gained) if gained else None
    precision = sum(gained) / answered if answered else None
    if recall is None or precision is None or recall + precision == 0:
        return OfficialMetrics(accuracy, 0.0, recall, precision, len(scored))
    f1 = 2 * recall * precision / (recall + precision)
    return OfficialMetrics(accuracy, f1, recall, precision, len(scored))


def official_acc_f1(items: Iterable[tuple[str, str, float | None]]) -> tuple[float, float]:
    """``(accuracy, f1)`` as MMLongBench-Doc's ``eval_acc_and_f1`` computes them from
    ``(gold, pred, score)`` triples."""
    result = official_metrics(items)
    return result.accuracy, result.f1
