"""Which scorer decides whether an item is correct (``report.decider``), and how often the
answer judge and the answer rules disagree.

A decider is an order of scorers: an item's ✓/✗ comes from the first of them whose row for it
is usable (status ``ok``) and carries a ``correct`` metric. ``auto`` (the default) is the
answer judge, else the rule matcher — ``answer`` then ``answer_rules``; naming one scorer
(``answer_rules``, ``answer_official``, ``mmlongbench`` ...) makes it the only one, so items
it did not score stay unscored. Rows are read as mappings (``scores.jsonl`` rows) or as
objects with ``status`` and ``metrics`` attributes (``scanrag.evaluation.schemas.ScoreRow``).

An item whose trajectory ended in an error (``model_error``, ``truncated``, ``degraded`` under
``on_degraded: fail`` ...: any status but ``ok``, read from its rows' ``item_status``) is
decided by no scorer: its outcome is its error, whatever a scorer wrote for its missing
answer (an empty answer is "wrong" to the rules without any judge call). Such items are
counted apart, by status (:attr:`DeciderStats.errors`), never credited to a scorer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

AUTO = "auto"
OK = "ok"
AUTO_ORDER: tuple[str, ...] = ("answer", "answer_rules")
JUDGE, RULES = "answer", "answer_rules"


def decider_order(setting: str | None) -> tuple[str, ...]:
    """The scorers a decider setting consults, first first."""
    if not setting or setting == AUTO:
        return AUTO_ORDER
    return (setting,)


def describe_decider(setting: str | None) -> str:
    """``auto (answer, else answer_rules)`` / ``answer_rules``: the decider in words."""
    order = decider_order(setting)
    text = ", else ".join(order)
    return f"auto ({text})" if (setting or AUTO) == AUTO else text


def _field(row: Any, name: str) -> Any:
    return row.get(name) if isinstance(row, Mapping) else getattr(row, name, None)


def correct_of(row: Any) -> bool | None:
    """The row's verdict: ``correct >= 1`` on a usable row, else ``None``."""
    if row is None or _field(row, "status") != "ok":
        return None
    metrics = _field(row, "metrics") or {}
    value = metrics.get("correct") if isinstance(metrics, Mapping) else None
    return None if value is None else float(value) >= 1.0


@dataclass(frozen=True)
class Decision:
    """An item's verdict and the scorer that gave it."""

    correct: bool
    scorer: str


def item_error(rows: Mapping[str, Any], status: str | None = None) -> str | None:
    """The error status the item's trajectory ended in (``status``, else its rows'
    ``item_status``), or ``None`` for an item that ran to the end."""
    found = status or next(
        (str(v) for r in rows.values() if r is not None and (v := _field(r, "item_status"))),
        None,
    )
    return found if found and found != OK else None


def decide(
    rows: Mapping[str, Any], order: Iterable[str], status: str | None = None
) -> Decision | None:
    """The verdict of the first scorer in ``order`` whose row (``rows[scorer]``) decides;
    ``None`` for an item that ended in an error (:func:`item_error`)."""
    if item_error(rows, status) is not None:
        return None
    for scorer in order:
        verdict = correct_of(rows.get(scorer))
        if verdict is not None:
            return Decision(verdict, scorer)
    return None


@dataclass
class DeciderStats:
    """One cell's decisions: items per deciding scorer (``none``: no scorer decided an item
    that ran to the end), items that ended in an error by status (decided by none), and
    judge-vs-rules agreement."""

    decided_by: Counter[str]
    errors: Counter[str] = field(default_factory=Counter)
    both: int = 0
    disagree: int = 0

    @property
    def disagreement_rate(self) -> float | None:
        return self.disagree / self.both if self.both else None

    def to_json(self) -> dict[str, Any]:
        rate = self.disagreement_rate
        return {
            "decided_by": dict(sorted(self.decided_by.items())),
            "errors": dict(sorted(self.errors.items())),
            "judge_vs_rules": {
                "items": self.both,
                "disagree": self.disagree,
                "rate": None if rate is None else round(rate, 4),
            },
        }


def decider_stats(
    rows_by_sample: Mapping[str, Mapping[str, Any]],
    order: Iterable[str],
    statuses: Mapping[str, str] | None = None,
) -> DeciderStats:
    """Decisions over one cell's items (``sample id → scorer → row``; ``statuses``: each
    item's trajectory status where known, else its rows say)."""
    order = tuple(order)
    stats = DeciderStats(decided_by=Counter())
    for sample_id, rows in rows_by_sample.items():
        error = item_error(rows, (statuses or {}).get(sample_id))
        if error is not None:
            stats.errors[error] += 1
            continue
        decision = decide(rows, order)
        stats.decided_by[decision.scorer if decision else "none"] += 1
        judge, rules = correct_of(rows.get(JUDGE)), correct_of(rows.get(RULES))
        if judge is not None and rules is not None:
            stats.both += 1
            stats.disagree += int(judge != rules)
    return stats


def judge_models(rows: Iterable[Any], scorer: str = JUDGE) -> list[str]:
    """The judge models that produced ``scorer``'s rows (first seen first)."""
    found: dict[str, None] = {}
    for row in rows:
        if _field(row, "scorer") != scorer:
            continue
        for judge in _field(row, "judges") or []:
            model = _field(judge, "model")
            if model:
                found.setdefault(str(model), None)
    return list(found)


__all__ = [
    "AUTO",
    "AUTO_ORDER",
    "DeciderStats",
    "Decision",
    "correct_of",
    "decide",
    "decider_order",
    "decider_stats",
    "describe_decider",
    "item_error",
    "judge_models",
]
