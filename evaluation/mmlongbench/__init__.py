"""MMLongBench-Doc's official answer scoring: the item score of its released
``eval/eval_score.py`` (:func:`official_score`), its headline accuracy and F1
(:func:`official_acc_f1`) and the ``mmlongbench`` scorer using them, with optional answer
extraction through the judge gateway. See ``docs/mmlongbench-scoring.md`` for how these
rules differ from the lenient ``answer_rules`` scorer."""

from scanrag.evaluation.mmlongbench.metrics import (
    OfficialMetrics,
    official_acc_f1,
    official_metrics,
)
from scanrag.evaluation.mmlongbench.official import (
    NOT_ANSWERABLE,
    anls,
    clean_answer,
    official_score,
)

__all__ = [
    "NOT_ANSWERABLE",
    "OfficialMetrics",
    "anls",
    "clean_answer",
    "official_acc_f1",
    "official_metrics",
    "official_score",
]
