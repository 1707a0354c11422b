"""Scoring profiles: parameter checks, which rows a summary reads, and the ``_official`` twins."""

from __future__ import annotations

import pytest

from evaluation.base import RowGroup
from evaluation.docscope.pages import PagesOfficialScorer, PagesScorer
from evaluation.docscope.profiles import (
    OFFICIAL,
    OFFICIAL_SUFFIX,
    PAPER,
    PROFILES,
    aggregate_by_profile,
    apply_profile,
    check_profile,
    official_twin,
    row_profile,
    rows_of_profile,
    stage_rows,
)
from evaluation.schemas import AggregateResult, ScoreRow


def row(sample: str, profile: str | None, scorer: str = "pages") -> ScoreRow:
    details = {} if profile is None else {"profile": profile}
    return ScoreRow(sample_id=sample, strategy="s", scorer=scorer, details=details)


def test_names() -> None:
    assert (PAPER, OFFICIAL, PROFILES, OFFICIAL_SUFFIX) == (
        "paper",
        "official",
        ("paper", "official"),
        "_official",
    )


def test_check_profile() -> None:
    assert check_profile("paper") == "paper" and check_profile("official") == "official"
    with pytest.raises(
        ValueError, match="unknown scoring profile 'Official'; known profiles: paper, official"
    ):
        check_profile("Official")


def test_apply_profile_stores_only_a_change() -> None:
    scorer = PagesScorer()
    assert "profile" not in vars(scorer) and scorer.profile == PAPER
    apply_profile(scorer, "official")
    assert vars(scorer)["profile"] == OFFICIAL
    twin = PagesOfficialScorer()
    assert twin.profile == OFFICIAL and "profile" not in vars(twin)
    with pytest.raises(
        ValueError, match="always uses the official profile; use 'pages' with profile: paper"
    ):
        PagesOfficialScorer(profile="paper")
    with pytest.raises(ValueError, match="unknown scoring profile"):
        PagesScorer(profile="strict")  # type: ignore[arg-type]


def test_row_profile_defaults_to_paper() -> None:
    assert row_profile(row("a", None)) == "paper"
    assert row_profile(row("a", "official")) == "official"


def test_rows_of_one_profile_are_summarised_as_they_are() -> None:
    rows = [row("a", "official"), row("b", "official")]
    assert rows_of_profile(rows, "paper") == ("official", rows, 0)
    assert rows_of_profile([], "paper") == ("paper", [], 0)


def test_a_mixture_keeps_the_wanted_profile() -> None:
    rows = [row("a", "official"), row("b", None), row("c", "paper")]
    profile, kept, other = rows_of_profile(rows, "paper")
    assert (profile, [r.sample_id for r in kept], other) == ("paper", ["b", "c"], 1)
    profile, kept, other = rows_of_profile(rows, "official")
    assert (profile, [r.sample_id for r in kept], other) == ("official", ["a"], 2)


def test_stage_rows_reads_the_stage_and_its_twin() -> None:
    group = RowGroup(
        "c",
        "s",
        by_scorer={
            "pages": {"a": row("a", "paper"), "b": row("b", "official")},
            "pages_official": {
                "b": row("b", "official", "pages_official"),
                "c": row("c", "official", "pages_official"),
            },
        },
    )
    paper = stage_rows(group, "pages", "paper")
    assert list(paper) == ["a"]
    official = stage_rows(group, "pages", "official")
    assert sorted(official) == ["b", "c"]
    assert official["b"].scorer == "pages"  # the plain stage's row comes first
    assert stage_rows(group, "fact", "paper") == {}


def test_aggregate_by_profile_labels_the_result() -> None:
    def paper(rows):
        return AggregateResult(tables={"made_by": "paper", "n": len(rows)})

    def official(rows):
        return AggregateResult(tables={"made_by": "official", "n": len(rows)})

    one = aggregate_by_profile([row("a", "official")], "paper", paper, official)
    assert one.tables == {"made_by": "official", "n": 1, "profile": "official"}
    mixed = [row("a", "official"), row("b", "paper"), row("c", "paper")]
    result = aggregate_by_profile(mixed, "paper", paper, official)
    assert result.tables == {
        "made_by": "paper",
        "n": 2,
        "profile": "paper",
        "rows_of_other_profile": 1,
    }


def test_official_twin_attributes() -> None:
    twin = official_twin(PagesScorer, "pages_twin")
    assert twin.name == "pages_twin" and twin.__qualname__ == "pages_twin"
    assert twin.profile == OFFICIAL and twin.fixed_profile is True and twin.opt_in is True
    assert twin.__module__ == PagesScorer.__module__
    assert twin.__doc__ == "``pages`` with the official profile, under its own name."
    assert issubclass(twin, PagesScorer)
    assert twin().profile == OFFICIAL
    assert not getattr(PagesScorer, "fixed_profile", False) and not PagesScorer.opt_in
