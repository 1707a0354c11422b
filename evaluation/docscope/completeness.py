"""Evidence-chain completeness among answer-correct items (an aggregate, no rows of its own).

For every answerable item whose answer is correct (the ``answer`` judge row, or the
``answer_rules`` row when there is no usable judge row), three checks:

* P: page recall is complete (every gold page is in P) — from the ``pages`` row;
* B: every gold region of the item is labelled covered (strict) — from the ``region`` row.
  Regions on gold pages missing from P were never judged and count as not covered;
* F: every gold fact of the item is consistent — from the ``fact`` row, same convention.

The six buckets reported are P✓B✓F✓ (complete), P✗B✗F✗, P✗B✓F✓, P✓B✗F✗, P✓B✗F✓ and P✓B✓F✗;
the two combinations outside them (P✗B✓F✗, P✗B✗F✓) are counted under ``other`` rather than
folded into a named bucket. An item lacking any of the three rows in usable form (no gold
regions or facts, a skipped region judge, a failed or partial judgment) is excluded and
counted. A second variant, ``geometric``, takes B from ``region_geometry`` instead
(GT-recall ≥ its threshold for every gold box), so completeness exists without a vision
judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluation.base import RowGroup, Scorer, StatsOptions, mean_metric
from evaluation.schemas import AggregateResult, ScoreRow

BUCKETS: dict[tuple[bool, bool, bool], str] = {
    (True, True, True): "complete",
    (False, False, False): "p_fail_b_fail_f_fail",
    (False, True, True): "p_fail_b_ok_f_ok",
    (True, False, False): "p_ok_b_fail_f_fail",
    (True, False, True): "p_ok_b_fail_f_ok",
    (True, True, False): "p_ok_b_ok_f_fail",
}
OTHER = "other"


def answer_correct(group: RowGroup) -> dict[str, bool]:
    """Correctness per sample: the answer judge where usable, else the rule matcher."""
    out: dict[str, bool] = {}
    for scorer in ("answer_rules", "answer"):  # the judge overrides the rules
        for sample_id, row in group.rows(scorer).items():
            value = row.metrics.get("correct")
            if row.status == "ok" and value is not None:
                out[sample_id] = value >= 1.0
    return out


def _ok(row: ScoreRow | None) -> ScoreRow | None:
    return row if row is not None and row.status == "ok" else None


def page_check(row: ScoreRow | None) -> bool | None:
    row = _ok(row)
    return None if row is None else row.counts.get("fn", 1) == 0


def region_check(row: ScoreRow | None) -> bool | None:
    row = _ok(row)
    if row is None or not row.counts.get("gold_all"):
        return None
    return row.counts.get("covered", 0) >= row.counts["gold_all"]


def geometric_check(row: ScoreRow | None) -> bool | None:
    row = _ok(row)
    if row is None or not row.counts.get("gold_all"):
        return None
    needed = row.counts["gold_all"] - row.counts.get("degenerate", 0)
    return row.counts.get("covered_geo", 0) >= needed


def fact_check(row: ScoreRow | None) -> bool | None:
    row = _ok(row)
    if row is None or not row.counts.get("facts_all"):
        return None
    return row.counts.get("consistent", 0) >= row.counts["facts_all"]


def bucket_of(p: bool, b: bool, f: bool) -> str:
    return BUCKETS.get((p, b, f), OTHER)


class CompletenessScorer(Scorer):
    name = "completeness"
    item_level = False
    depends_on = ("pages", "region", "region_geometry", "fact", "answer", "answer_rules")

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        correct = answer_correct(group)
        result = AggregateResult()
        result.tables["answer_correct"] = sum(correct.values())
        variants = {
            "judge": ("region", region_check),
            "geometric": ("region_geometry", geometric_check),
        }
        for variant, (region_scorer, check) in variants.items():
            table, complete = self._variant(group, correct, region_scorer, check)
            result.tables[variant] = table
            suffix = "" if variant == "judge" else "_geometric"
            result.metrics[f"complete_rate{suffix}"] = mean_metric(
                complete, stats, excluded=table["excluded"], headline=variant == "judge"
            )
        return result

    @staticmethod
    def _variant(
        group: RowGroup, correct: dict[str, bool], region_scorer: str, check: Any
    ) -> tuple[dict[str, Any], list[float]]:
        pages, regions, facts = group.rows("pages"), group.rows(region_scorer), group.rows("fact")
        counts = dict.fromkeys([*BUCKETS.values(), OTHER], 0)
        complete: list[float] = []
        excluded = 0
        for sample_id, ok in sorted(correct.items()):
            if not ok:
                continue
            page_row = pages.get(sample_id)
            if page_row is not None and page_row.status == "skipped":
                continue  # unanswerable (or no gold pages): outside this analysis
            p = page_check(page_row)
            b = check(regions.get(sample_id))
            f = fact_check(facts.get(sample_id))
            if p is None or b is None or f is None:
                excluded += 1
                continue
            name = bucket_of(p, b, f)
            counts[name] += 1
            complete.append(1.0 if name == "complete" else 0.0)
        n = len(complete)
        table = {
            "n": n,
            "excluded": excluded,
            "buckets": {k: {"count": v, "rate": v / n if n else None} for k, v in counts.items()},
        }
        return table, complete
