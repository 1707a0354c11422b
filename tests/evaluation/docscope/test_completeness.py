"""Evidence-chain completeness: the per-stage checks, which answer counts as correct, which
items are in the analysis, and every number of the aggregate (rates, exclusions, headline)."""

from __future__ import annotations

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.completeness import (
    BUCKETS,
    CompletenessScorer,
    answer_correct,
    combination,
    fact_check,
    geometric_check,
    page_check,
    region_check,
)
from scanrag.evaluation.schemas import ScoreRow

NO_CI = StatsOptions(n_resamples=0)


def row(
    scorer: str, sid: str = "a", status: str = "ok", profile: str | None = None, **counts: float
) -> ScoreRow:
    details = {} if profile is None else {"profile": profile}
    return ScoreRow(
        sample_id=sid,
        strategy="s",
        scorer=scorer,
        status=status,
        counts=counts,
        details=details,  # type: ignore[arg-type]
    )


def verdict(
    scorer: str, sid: str, correct: float | None, status: str = "ok", profile: str | None = None
) -> ScoreRow:
    r = row(scorer, sid, status, profile)
    r.metrics = {"correct": correct}
    return r


def group_of(rows: list[ScoreRow], samples: dict | None = None) -> RowGroup:
    by: dict[str, dict[str, ScoreRow]] = {}
    for r in rows:
        by.setdefault(r.scorer, {})[r.sample_id] = r
    return RowGroup("c", "s", by, samples or {})


def test_page_check() -> None:
    assert page_check(row("pages", fn=0)) is True
    assert page_check(row("pages", fn=2)) is False
    assert page_check(row("pages")) is False  # no fn count: not complete
    assert page_check(row("pages", "a", "skipped", fn=0)) is None
    assert page_check(None) is None


def test_region_and_fact_checks() -> None:
    assert region_check(row("region", gold=2, covered=2, gold_all=3)) is True
    assert region_check(row("region", gold=2, covered=1, gold_all=3)) is False
    assert region_check(row("region", gold=0, covered=0, gold_all=3)) is False  # nothing on P̂
    assert region_check(row("region", gold=0, covered=0, gold_all=0)) is None  # no gold at all
    assert region_check(row("region", gold=1, covered=1)) is None  # gold_all missing
    assert region_check(row("region", "a", "partial", gold=1, covered=1, gold_all=1)) is None
    assert geometric_check(row("region_geometry", gold=2, covered_geo=2, gold_all=2)) is True
    assert geometric_check(row("region_geometry", gold=2, covered_geo=1, gold_all=2)) is False
    assert fact_check(row("fact", facts=3, consistent=3, facts_all=4)) is True
    assert fact_check(row("fact", facts=3, consistent=2, facts_all=4)) is False
    assert fact_check(row("fact", facts=3, facts_all=4)) is False  # no consistent count
    assert fact_check(None) is None


def test_combination_names() -> None:
    assert combination(True, False, True) == "P✓B✗F✓"
    assert combination(False, True, False) == "P✗B✓F✗"
    assert len(BUCKETS) == 6


def test_answer_correct_sources() -> None:
    rows = [
        verdict("answer_rules", "a", 1.0),
        verdict("answer_rules", "b", 1.0),
        verdict("answer", "b", 0.0),  # the judge overrides the rules
        verdict("answer", "c", 0.5),  # below 1: wrong
        verdict("answer", "d", 1.0, status="judge_error"),  # unusable
        verdict("answer", "e", None),  # no verdict
        verdict("answer_rules", "f", 1.0),
        verdict("answer", "f", 1.0, status="judge_parse_error"),  # falls back to the rules
    ]
    group = group_of(rows)
    assert answer_correct(group) == {"a": True, "b": False, "c": False, "f": True}
    # Official profile: only official answer-judge rows, never the rules.
    official = [
        verdict("answer_rules", "a", 1.0),
        verdict("answer", "b", 1.0, profile="official"),
        verdict("answer", "c", 1.0, profile="paper"),
        verdict("answer_official", "d", 1.0, profile="official"),
    ]
    assert answer_correct(group_of(official), "official") == {"b": True, "d": True}


def complete_item(sid: str, *, p: bool = True, b: bool = True, f: bool = True) -> list[ScoreRow]:
    return [
        row("pages", sid, fn=0 if p else 1),
        row("region", sid, gold=2, covered=2 if b else 1, gold_all=2),
        row("region_geometry", sid, gold=2, covered_geo=2 if b else 0, gold_all=2),
        row("fact", sid, facts=2, consistent=2 if f else 1, facts_all=2),
        verdict("answer", sid, 1.0),
    ]


def test_aggregate_numbers() -> None:
    rows = [
        *complete_item("a"),
        *complete_item("b", b=False),
        *complete_item("c", p=False),
        # d: the fact row failed -> excluded (from both variants)
        *[r for r in complete_item("d") if r.scorer != "fact"],
        row("fact", "d", "judge_error"),
        # e: wrong answer -> outside the analysis
        *complete_item("e")[:-1],
        verdict("answer", "e", 0.0),
    ]
    result = CompletenessScorer().aggregate([], group_of(rows), NO_CI)
    assert result.tables["profile"] == "paper"
    assert result.tables["answer_correct"] == 4
    judge = result.tables["judge"]
    assert (judge["n"], judge["excluded"]) == (3, 1)
    assert judge["buckets"]["complete"] == {"count": 1, "rate": pytest.approx(1 / 3)}
    assert judge["buckets"]["p_ok_b_fail_f_ok"] == {"count": 1, "rate": pytest.approx(1 / 3)}
    assert judge["buckets"]["p_fail_b_ok_f_ok"]["count"] == 1
    assert judge["buckets"]["p_ok_b_ok_f_fail"] == {"count": 0, "rate": 0.0}
    assert judge["combinations"] == {"P✓B✓F✓": 1, "P✓B✗F✓": 1, "P✗B✓F✓": 1}
    rate = result.metrics["complete_rate"]
    assert (rate.value, rate.n, rate.excluded, rate.headline) == (pytest.approx(1 / 3), 3, 1, True)
    geo = result.metrics["complete_rate_geometric"]
    assert (geo.value, geo.n, geo.excluded, geo.headline) == (pytest.approx(1 / 3), 3, 1, False)
    assert result.tables["geometric"]["n"] == 3


def test_empty_analysis_has_no_rates() -> None:
    result = CompletenessScorer().aggregate([], group_of([]), NO_CI)
    table = result.tables["judge"]
    assert table["n"] == 0 and table["excluded"] == 0 and table["combinations"] == {}
    assert all(v == {"count": 0, "rate": None} for v in table["buckets"].values())
    assert result.metrics["complete_rate"].value is None
    assert result.tables["answer_correct"] == 0


def test_which_items_are_answerable() -> None:
    from scanrag.schemas import Sample

    def sample(sid: str, **fields: object) -> Sample:
        data: dict = {
            "id": sid,
            "doc_ids": ["d.pdf"],
            "question": "q",
            "answer": "1",
            "gold_pages": [1],
        }
        return Sample(**(data | fields))

    rows = [*complete_item("a"), *complete_item("b"), *complete_item("c")]
    samples = {
        "a": sample("a"),
        "b": sample("b", answerable=False, answer=None, gold_pages=[]),
        "c": sample("c", gold_pages=[]),
    }
    table = CompletenessScorer().aggregate([], group_of(rows, samples), NO_CI).tables["judge"]
    assert table["n"] == 1  # only "a": "b" is unanswerable, "c" has no gold pages
    # Without samples, the page row tells: skipped, or marked unanswerable, is outside.
    unanswerable_pages = row("pages", "c", fn=0)
    unanswerable_pages.details["answerable"] = False  # as the official pages rows say
    rows = [
        *complete_item("a"),
        *[r for r in complete_item("b") if r.scorer != "pages"],
        row("pages", "b", "skipped"),
        *[r for r in complete_item("c") if r.scorer != "pages"],
        unanswerable_pages,
        *[r for r in complete_item("d") if r.scorer != "pages"],
    ]
    table = CompletenessScorer().aggregate([], group_of(rows), NO_CI).tables["judge"]
    # a counts; b (skipped pages) and c (unanswerable) are outside; d has no pages row at
    # all: in the analysis, but excluded for its missing page check.
    assert (table["n"], table["excluded"]) == (1, 1)


def test_official_binding_reads_official_rows() -> None:
    from scanrag.evaluation.docscope.completeness import completeness_official

    assert completeness_official.name == "completeness_official"
    assert completeness_official.item_level is False
    assert completeness_official.depends_on == (
        "pages_official",
        "region_official",
        "region_geometry_official",
        "fact_official",
        "answer_official",
    )
    assert CompletenessScorer.depends_on[-1] == "answer_rules"
    rows = [
        row("pages_official", "a", profile="official", fn=0),
        row("region_official", "a", profile="official", gold=1, covered=1, gold_all=1),
        row("region_geometry_official", "a", profile="official", gold=1, covered_geo=0, gold_all=1),
        row("fact_official", "a", profile="official", facts=1, consistent=1, facts_all=1),
        verdict("answer_official", "a", 1.0, profile="official"),
        *complete_item("b"),  # paper rows: not read by the official profile
    ]
    result = completeness_official().aggregate([], group_of(rows), NO_CI)
    assert result.tables["profile"] == "official" and result.tables["answer_correct"] == 1
    assert result.tables["judge"]["combinations"] == {"P✓B✓F✓": 1}
    assert result.tables["geometric"]["combinations"] == {"P✓B✗F✓": 1}
    # Without a profile, the stage rows decide: only official rows, the official profile.
    official_only = [r for r in rows if r.details.get("profile") == "official"]
    unbound = CompletenessScorer().aggregate([], group_of(official_only), NO_CI)
    assert unbound.tables["profile"] == "official" and unbound.tables["answer_correct"] == 1


def test_missing_counts_mean_nothing_judged_or_good() -> None:
    # No judged count: nothing on P̂ was judged, whatever else the row says.
    assert region_check(row("region", covered=1, gold_all=2)) is False
    # No good count: nothing judged was good.
    assert fact_check(row("fact", facts=1, facts_all=1)) is False


def test_scorer_declaration() -> None:
    from scanrag.registry import SCORERS

    assert CompletenessScorer.name == "completeness" and CompletenessScorer.item_level is False
    assert SCORERS.get("completeness") is CompletenessScorer
    assert CompletenessScorer.depends_on == (
        "pages",
        "region",
        "region_geometry",
        "fact",
        "answer",
        "answer_rules",
    )
