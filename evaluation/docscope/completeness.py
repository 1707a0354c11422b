"""Evidence-chain completeness among answer-correct items (an aggregate, no rows of its own).

For every answerable item whose answer is correct (the ``answer`` judge row, or the
``answer_rules`` row when there is no usable judge row), three checks:

* P: page recall is complete (every gold page is in P) — from the ``pages`` row;
* B: every gold region on the correctly retrieved pages P̂ is labelled covered (strict) —
  from the ``region`` row;
* F: every gold fact on P̂ is consistent — from the ``fact`` row.

B and F follow the paper's inter-stage decoupling: they judge what was found, on P̂, so an
item that missed a gold page but grounded everything on the pages it found is P✗B✓F✓. With
P̂ empty nothing was grounded: B✗ and F✗. The six buckets are the columns of the paper's
table (P✓B✓F✓ = complete, P✗B✗F✗, P✗B✓F✓, P✓B✗F✗, P✓B✗F✓, P✓B✓F✗) and, as there, every
counted item falls in one of them: an item with P✗ that is not B✓F✓ is counted under P✗B✗F✗
(the table has no P✗B✓F✗ or P✗B✗F✓ column). ``combinations`` keeps all eight (P, B, F)
combinations unfolded. An item lacking any of the three rows in usable form (no gold regions
or facts, a skipped region judge, a failed or partial judgment) is excluded and counted;
unanswerable items are outside the analysis. A second variant, ``geometric``, takes B from
``region_geometry`` instead (GT-recall ≥ its threshold for every gold box on P̂), so
completeness exists without a vision judge.

``profile`` picks the rows: ``paper`` reads rows scored with the paper profile, ``official``
those scored with the official one (from ``pages`` or ``pages_official`` and so on; the answer
then comes from the official answer judge only). Without one, the profile of the stage rows
present decides (``paper`` when both are). ``completeness_official`` binds the official profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from scanrag.evaluation.base import RowGroup, StatsOptions, mean_metric
from scanrag.evaluation.docscope.profiled import ProfileBinding, ProfiledScorer
from scanrag.evaluation.docscope.profiles import (
    OFFICIAL,
    OFFICIAL_SUFFIX,
    PAPER_NAME,
    get_profile,
    row_profile,
    stage_rows,
)
from scanrag.evaluation.schemas import AggregateResult, ScoreRow

BUCKETS: dict[tuple[bool, bool, bool], str] = {
    (True, True, True): "complete",
    (False, False, False): "p_fail_b_fail_f_fail",
    (False, True, True): "p_fail_b_ok_f_ok",
    (True, False, False): "p_ok_b_fail_f_fail",
    (True, False, True): "p_ok_b_fail_f_ok",
    (True, True, False): "p_ok_b_ok_f_fail",
}
_STAGES = ("pages", "region", "region_geometry", "fact", "answer")


def answer_correct(group: RowGroup, profile: str = PAPER_NAME) -> dict[str, bool]:
    """Correctness per sample: the answer judge where usable, else, for a profile that lets
    rules decide answers (``shortcuts``: the paper profile), the rule matcher."""
    out: dict[str, bool] = {}
    sources = [group.rows("answer_rules")] if get_profile(profile).shortcuts else []
    sources.append(stage_rows(group, "answer", profile))
    for rows in sources:  # the judge overrides the rules
        for sample_id, row in rows.items():
            value = row.metrics.get("correct")
            if row.status == "ok" and value is not None:
                out[sample_id] = value >= 1.0
    return out


def _ok(row: ScoreRow | None) -> ScoreRow | None:
    return row if row is not None and row.status == "ok" else None


def page_check(row: ScoreRow | None) -> bool | None:
    row = _ok(row)
    return None if row is None else row.counts.get("fn", 1) == 0


def _all_of_judged(row: ScoreRow | None, total: str, judged: str, good: str) -> bool | None:
    """``None`` without a usable row or without gold; else whether something on P̂ was
    judged and all of it was good."""
    row = _ok(row)
    if row is None or not row.counts.get(total):
        return None
    n = row.counts.get(judged, 0)
    return n > 0 and row.counts.get(good, 0) >= n


def region_check(row: ScoreRow | None) -> bool | None:
    """Every gold box judged on P̂ is covered (strict)."""
    return _all_of_judged(row, "gold_all", "gold", "covered")


def geometric_check(row: ScoreRow | None) -> bool | None:
    """Every (non-degenerate) gold box on P̂ reaches the GT-recall threshold."""
    return _all_of_judged(row, "gold_all", "gold", "covered_geo")


def fact_check(row: ScoreRow | None) -> bool | None:
    """Every gold fact judged on P̂ is consistent."""
    return _all_of_judged(row, "facts_all", "facts", "consistent")


def bucket_of(p: bool, b: bool, f: bool) -> str:
    """The paper-table bucket of (P, B, F): P✗ items other than P✗B✓F✓ count as P✗B✗F✗."""
    return BUCKETS.get((p, b, f), BUCKETS[(False, False, False)])


def combination(p: bool, b: bool, f: bool) -> str:
    return "".join(f"{k}{'✓' if v else '✗'}" for k, v in zip("PBF", (p, b, f), strict=True))


class CompletenessScorer(ProfiledScorer):
    name = "completeness"
    item_level = False
    depends_on: ClassVar[tuple[str, ...]] = (
        "pages",
        "region",
        "region_geometry",
        "fact",
        "answer",
        "answer_rules",
    )

    def rows_profile(self, group: RowGroup) -> str:
        """The profile whose stage rows are read: the one asked for, else the stage rows'."""
        if self.chosen is not None:
            return self.chosen.name
        found = {
            row_profile(row)
            for stage in _STAGES
            for name in (stage, stage + OFFICIAL_SUFFIX)
            for row in group.rows(name).values()
        }
        return found.pop() if len(found) == 1 else PAPER_NAME

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        profile = self.rows_profile(group)
        correct = answer_correct(group, profile)
        result = AggregateResult()
        result.tables["profile"] = profile
        result.tables["answer_correct"] = sum(correct.values())
        variants = {
            "judge": ("region", region_check),
            "geometric": ("region_geometry", geometric_check),
        }
        for variant, (region_scorer, check) in variants.items():
            table, complete = self._variant(group, correct, region_scorer, check, profile)
            result.tables[variant] = table
            suffix = "" if variant == "judge" else "_geometric"
            result.metrics[f"complete_rate{suffix}"] = mean_metric(
                complete, stats, excluded=table["excluded"], headline=variant == "judge"
            )
        return result

    def _variant(
        self,
        group: RowGroup,
        correct: dict[str, bool],
        region_scorer: str,
        check: Any,
        profile: str,
    ) -> tuple[dict[str, Any], list[float]]:
        pages = stage_rows(group, "pages", profile)
        regions = stage_rows(group, region_scorer, profile)
        facts = stage_rows(group, "fact", profile)
        counts = dict.fromkeys(BUCKETS.values(), 0)
        combos: dict[str, int] = {}
        complete: list[float] = []
        excluded = 0
        for sample_id, ok in sorted(correct.items()):
            if not ok or not _answerable(group, sample_id, pages.get(sample_id)):
                continue  # unanswerable (or no gold pages): outside this analysis
            p = page_check(pages.get(sample_id))
            b = check(regions.get(sample_id))
            f = fact_check(facts.get(sample_id))
            if p is None or b is None or f is None:
                excluded += 1
                continue
            name = bucket_of(p, b, f)
            counts[name] += 1
            combos[combination(p, b, f)] = combos.get(combination(p, b, f), 0) + 1
            complete.append(1.0 if name == "complete" else 0.0)
        n = len(complete)
        table = {
            "n": n,
            "excluded": excluded,
            "buckets": {k: {"count": v, "rate": v / n if n else None} for k, v in counts.items()},
            "combinations": dict(sorted(combos.items())),
        }
        return table, complete


def _answerable(group: RowGroup, sample_id: str, page_row: ScoreRow | None) -> bool:
    sample = group.samples.get(sample_id)
    if sample is not None:
        return bool(sample.answerable and sample.gold_pages)
    if page_row is None:
        return True
    if page_row.status == "skipped":
        return False
    return page_row.details.get("answerable", True) is not False


completeness_official = ProfileBinding(
    CompletenessScorer,
    OFFICIAL,
    "completeness_official",
    depends_on=tuple(stage + OFFICIAL_SUFFIX for stage in _STAGES),
)
