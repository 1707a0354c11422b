"""What a grid cell's numbers were measured under, as the report shows it.

* **Caps** — the cell's label states the caps its items were read under (``full_doc ≤60p``,
  from the run manifest's ``cap_label``).
* **Degraded items** — items whose input was reduced below their strategy's promise
  (``Trajectory.degraded``; status ``degraded`` under ``runner.on_degraded: fail``), and among
  them those that lost gold evidence pages: a ◐ badge per question, counts per cell.
* **Decider** — which scorer's ``correct`` gave each ✓/✗ (``report.decider``; ``auto``: the
  answer judge, else the answer rules), how many items each decided, the items that ended
  in an error (decided by none, counted apart by status), and how often the judge and the
  rules disagree where both scored an item.
* **Replays** — model calls answered from the response cache, and the runs they came from.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from scanrag.decider import (
    JUDGE,
    RULES,
    Decision,
    correct_of,
    decide,
    decider_order,
    describe_decider,
    judge_models,
)
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.html import esc, short
from scanrag.schemas import Status, Trajectory

DEGRADED_MARK = "◐"


class CellConditions(BaseModel):
    """One cell's caps, degraded items, decider and replays."""

    label: str = Field(description="The cell's label with its caps (full_doc ≤60p).")
    caps: dict[str, int] = Field(default_factory=dict)
    degraded: int = 0
    gold_pages_dropped: int = Field(default=0, description="Degraded items that lost gold pages.")
    decider: str = "auto (answer, else answer_rules)"
    decided_by: dict[str, int] = Field(default_factory=dict)
    decider_errors: dict[str, int] = Field(
        default_factory=dict,
        description="Items that ended in an error, by status: no scorer decided them.",
    )
    judge_models: list[str] = Field(default_factory=list)
    judge_rules_items: int = 0
    judge_rules_disagree: int = 0
    replayed_calls: int = 0
    replayed_items: int = 0
    replayed_from: dict[str, int] = Field(default_factory=dict)

    @property
    def disagreement_rate(self) -> float | None:
        if not self.judge_rules_items:
            return None
        return self.judge_rules_disagree / self.judge_rules_items


def decider_setting(group: Group) -> str:
    """The run's ``report.decider`` (its config, else its manifest; default ``auto``)."""
    report = group.run.config.get("report") or {}
    value = report.get("decider") if isinstance(report, dict) else None
    return str(value or group.run.manifest.get("decider") or "auto")


def decision_for(group: Group, sample_id: str) -> Decision | None:
    """One item's verdict and the scorer that gave it, by the run's decider (``None`` for an
    item that ended in an error: no scorer decides it)."""
    order = decider_order(decider_setting(group))
    rows = {scorer: by_sample.get(sample_id) for scorer, by_sample in group.rows.items()}
    traj = group.trajectories.get(sample_id)
    return decide(rows, order, str(traj.status) if traj is not None else None)


def decisions(group: Group) -> dict[str, Decision]:
    """Each item's verdict and the scorer that gave it, by the run's decider."""
    ids = set(group.trajectories) | {sid for rows in group.rows.values() for sid in rows}
    out = {}
    for sid in ids:
        decision = decision_for(group, sid)
        if decision is not None:
            out[sid] = decision
    return out


def is_degraded(traj: Trajectory | None) -> bool:
    return traj is not None and (traj.degraded or traj.status == Status.DEGRADED)


def _manifest_cell(group: Group) -> dict[str, Any]:
    for cell in group.run.manifest.get("cells") or []:
        if isinstance(cell, dict) and cell.get("run_key") == group.key:
            return cell
    return {}


def cap_label(group: Group) -> str:
    """``≤60p``: the caps the manifest recorded for the cell (empty when none)."""
    return str(_manifest_cell(group).get("cap_label") or "")


def cell_conditions(group: Group) -> CellConditions:
    """The conditions of ``group`` (see the module docstring)."""
    trajectories = list(group.trajectories.values())
    setting = decider_setting(group)
    decided = decisions(group)
    both = disagree = 0
    for sid in group.trajectories:
        judge = correct_of(group.row(JUDGE, sid))
        rules = correct_of(group.row(RULES, sid))
        if judge is not None and rules is not None:
            both += 1
            disagree += int(judge != rules)
    by = Counter(d.scorer for sid, d in decided.items() if sid in group.trajectories)
    errors = Counter(str(t.status) for t in trajectories if t.status != Status.OK)
    undecided = len(group.trajectories) - sum(by.values()) - sum(errors.values())
    if undecided:
        by["none"] = undecided
    sources: Counter[str] = Counter(
        c.cached_from for t in trajectories for c in t.calls if c.cached and c.cached_from
    )
    judge_rows = list(group.rows.get(JUDGE, {}).values())
    suffix = cap_label(group)
    return CellConditions(
        label=f"{group.label} {suffix}".strip(),
        caps=dict(_manifest_cell(group).get("caps") or {}),
        degraded=sum(1 for t in trajectories if is_degraded(t)),
        gold_pages_dropped=sum(1 for t in trajectories if t.gold_pages_dropped),
        decider=describe_decider(setting),
        decided_by=dict(sorted(by.items())),
        decider_errors=dict(sorted(errors.items())),
        judge_models=judge_models(judge_rows) if JUDGE in decider_order(setting) else [],
        judge_rules_items=both,
        judge_rules_disagree=disagree,
        replayed_calls=sum(t.replayed_calls for t in trajectories),
        replayed_items=sum(1 for t in trajectories if t.replayed_calls),
        replayed_from=dict(sources.most_common()),
    )


# --------------------------------------------------------------------------- HTML


def degraded_badge(traj: Trajectory | None) -> str:
    """◐ with the item's reductions in its tooltip (empty for an item not degraded)."""
    if not is_degraded(traj):
        return ""
    assert traj is not None
    reasons = "; ".join(r.summary() for r in traj.reductions if r.degrading)
    lost = traj.gold_pages_dropped
    title = "degraded: input reduced below the strategy's promise"
    if lost:
        title += f"; gold page(s) {', '.join(map(str, lost))} never shown"
    if reasons:
        title += f" — {short(reasons, 400)}"
    mark = DEGRADED_MARK + ("!" if lost else "")
    return f' <span class="o o-degraded" title="{esc(title)}">{esc(mark)}</span>'


def conditions_html(c: CellConditions) -> str:
    """A cell's degraded count, decider and replays under its outcomes in the comparison."""
    parts = []
    if c.degraded:
        lost = f", {c.gold_pages_dropped} lost gold pages" if c.gold_pages_dropped else ""
        parts.append(
            f'<span class="o o-degraded">{c.degraded}&nbsp;{DEGRADED_MARK}</span> degraded{lost}'
        )
    decided = ", ".join(f"{n} {scorer}" for scorer, n in c.decided_by.items())
    if decided:
        parts.append(f"✓/✗ by {esc(decided)}")
    if c.decider_errors:
        kinds = ", ".join(f"{n} {status}" for status, n in c.decider_errors.items())
        parts.append(f"decided by none: {esc(kinds)} (errors)")
    rate = c.disagreement_rate
    if rate is not None:
        parts.append(f"judge≠rules {c.judge_rules_disagree}/{c.judge_rules_items} ({rate:.0%})")
    if c.replayed_calls:
        runs = ", ".join(c.replayed_from) or "an earlier run"
        parts.append(f"{c.replayed_calls} call(s) replayed from cache ({esc(runs)})")
    if not parts:
        return ""
    return '<br><span class="muted">' + "<br>".join(parts) + "</span>"


def reductions_html(traj: Trajectory) -> str:
    """The item's reductions (what was cut, why) and the gold pages it lost, for the viewer."""
    if not traj.reductions:
        return '<span class="na">none: the strategy saw its whole input</span>'
    lines = [esc(r.summary()) for r in traj.reductions]
    if traj.gold_pages_dropped:
        pages = ", ".join(map(str, traj.gold_pages_dropped))
        lines.append(f'<span class="bad">gold page(s) {esc(pages)} never shown</span>')
    return degraded_badge(traj).strip() + " " + "<br>".join(lines)


def replays_html(traj: Trajectory) -> str:
    """How many calls were replayed from the cache, and from which runs (empty when none)."""
    if not traj.replayed_calls:
        return ""
    runs = ", ".join(traj.replayed_from)
    return f"{traj.replayed_calls} call(s) replayed from the response cache" + (
        f" (stored by {esc(runs)})" if runs else ""
    )


__all__ = [
    "DEGRADED_MARK",
    "CellConditions",
    "cap_label",
    "cell_conditions",
    "conditions_html",
    "decider_setting",
    "decision_for",
    "decisions",
    "degraded_badge",
    "is_degraded",
    "reductions_html",
    "replays_html",
]
