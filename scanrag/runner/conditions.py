"""What each grid cell's numbers were measured under, for ``summary.json`` and its table.

Per cell: its ``label`` with the caps its items are read under (``full_doc ≤60p``), how many
items were ``degraded`` (and lost gold evidence pages), how many model calls were replayed
from the response cache (and from which runs), and which scorer decided each item's ✓/✗
(``report.decider``) with the answer judge's disagreement with the answer rules. Everything
is recomputed from the rows on disk, like the rest of the summary.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scanrag.decider import (
    JUDGE,
    decider_order,
    decider_stats,
    describe_decider,
    judge_models,
)
from scanrag.rundir import row_key
from scanrag.runner import degraded as degradation


def cell_labels(manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """run key → ``{"label", "caps"}`` from the manifest's cells (the label states the caps)."""
    out: dict[str, dict[str, Any]] = {}
    for cell in manifest.get("cells") or []:
        if not isinstance(cell, Mapping) or not cell.get("run_key"):
            continue
        key = str(cell["run_key"])
        suffix = str(cell.get("cap_label") or "")
        out[key] = {"label": f"{key} {suffix}".strip(), "caps": dict(cell.get("caps") or {})}
    return out


def replays(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per cell: calls replayed from the response cache, items with any, and the runs they
    came from (as far as the recorded calls name them)."""
    calls: Counter[str] = Counter()
    items: Counter[str] = Counter()
    sources: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        key = row_key(row)[0]
        cached = _cached_calls(row)
        calls[key] += cached
        items[key] += int(cached > 0)
        for call in row.get("calls") or []:
            origin = call.get("cached_from") if isinstance(call, Mapping) else None
            if call.get("cached") and origin:
                sources[key][str(origin)] += 1
    return {
        key: {"calls": calls[key], "items": items[key], "from": dict(sources[key].most_common())}
        for key in calls
    }


def _cached_calls(row: Mapping[str, Any]) -> int:
    usage = row.get("usage") or {}
    if not isinstance(usage, Mapping):
        return 0
    if "cached_calls" in usage and not isinstance(usage.get("cached_calls"), Mapping):
        return int(usage.get("cached_calls") or 0)
    return sum(
        int(stage.get("cached_calls") or 0)
        for stage in usage.values()
        if isinstance(stage, Mapping)
    )


def deciders(
    scores: Sequence[Mapping[str, Any]],
    trajectories: Sequence[Mapping[str, Any]],
    setting: str | None,
) -> dict[str, dict[str, Any]]:
    """Per cell: items per deciding scorer, items that ended in an error (decided by none,
    by status) and the judge-vs-rules disagreement."""
    by_cell: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    statuses: dict[str, dict[str, str]] = defaultdict(dict)
    for row in trajectories:  # later rows win: a re-run item counts once
        key, sample = row_key(row)
        by_cell[key].setdefault(sample, {})
        statuses[key][sample] = str(row.get("status") or "ok")
    for row in scores:  # later rows win: a re-scored pair counts once
        key, sample = row_key(row)
        by_cell[key][sample][str(row.get("scorer"))] = row
    order = decider_order(setting)
    return {
        key: decider_stats(rows, order, statuses[key]).to_json() for key, rows in by_cell.items()
    }


def decider_entry(
    setting: str | None, scores: Sequence[Mapping[str, Any]], manifest: Mapping[str, Any]
) -> dict[str, Any]:
    """The run's decider: setting, order, in words, the judge models its rows record and the
    judge configured for the answer role (rules decide some items without any call) when the
    answer judge scored any item of the run (none is named for a run scored by rules only)."""
    order = decider_order(setting)
    judges = (manifest.get("models") or {}).get("judges") or {}
    judged = JUDGE in order and any(row.get("scorer") == JUDGE for row in scores)
    configured = (
        judges.get("answer") or judges.get("default")
        if judged and isinstance(judges, Mapping)
        else None
    )
    return {
        "setting": setting or "auto",
        "order": list(order),
        "describe": describe_decider(setting),
        "judges": {scorer: judge_models(scores, scorer) for scorer in order},
        "answer_judge": configured,
    }


def headline_scorers(headline: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """metric → the scorer that produced it (the part of its name before the first dot)."""
    names = {name for values in headline.values() for name in values}
    return {name: name.split(".", 1)[0] for name in sorted(names)}


def cell_conditions(
    keys: Sequence[str],
    manifest: Mapping[str, Any],
    trajectories: Sequence[Mapping[str, Any]],
    scores: Sequence[Mapping[str, Any]],
    decider: str | None,
) -> dict[str, dict[str, Any]]:
    """Every cell's label and caps, degraded items, replays and decisions."""
    labels = cell_labels(manifest)
    degraded = degradation.by_cell(trajectories)
    replayed = replays(trajectories)
    decided = deciders(scores, trajectories, decider)
    out = {}
    for key in keys:
        stats = degraded.get(key) or degradation.CellDegradation()
        out[key] = {
            **(labels.get(key) or {"label": key, "caps": {}}),
            **stats.to_json(),
            "replays": replayed.get(key) or {"calls": 0, "items": 0, "from": {}},
            "decider": decided.get(key) or {},
        }
    return out


__all__ = [
    "cell_conditions",
    "cell_labels",
    "decider_entry",
    "deciders",
    "headline_scorers",
    "replays",
]
