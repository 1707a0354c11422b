"""Scoring profiles as data: the fields that differ, parameter checks, which rows a summary
reads, the ``_official`` bindings and a sample's dataset profile."""

from __future__ import annotations

import dataclasses

import pytest

from scanrag.evaluation.base import RowGroup, StatsOptions
from scanrag.evaluation.docscope.pages import PagesScorer, pages_official
from scanrag.evaluation.docscope.profiled import ProfileBinding
from scanrag.evaluation.docscope.profiles import (
    OFFICIAL,
    OFFICIAL_SUFFIX,
    PAPER,
    PROFILES,
    Profile,
    get_profile,
    row_profile,
    rows_of_profile,
    sample_profile,
    stage_rows,
)
from scanrag.evaluation.schemas import ScoreRow
from scanrag.evaluation.stage import row_basis

NO_CI = StatsOptions(n_resamples=0)


def row(sample: str, profile: str | None, scorer: str = "pages") -> ScoreRow:
    details = {} if profile is None else {"profile": profile}
    return ScoreRow(sample_id=sample, strategy="s", scorer=scorer, details=details)


def test_names_and_lookup() -> None:
    assert (PAPER.name, OFFICIAL.name, OFFICIAL_SUFFIX) == ("paper", "official", "_official")
    assert PROFILES == {"paper": PAPER, "official": OFFICIAL}
    assert get_profile("paper") is PAPER and get_profile("official") is OFFICIAL
    assert get_profile("lenient") is PAPER and get_profile(OFFICIAL) is OFFICIAL
    with pytest.raises(
        ValueError,
        match="unknown scoring profile 'Official'; known profiles: paper, official, lenient",
    ):
        get_profile("Official")
    with pytest.raises(ValueError, match="unknown scoring profile 3"):
        get_profile(3)


def test_the_two_profiles_differ_in_every_field_but_the_label() -> None:
    fields = [f.name for f in dataclasses.fields(Profile)]
    same = [f for f in fields if getattr(PAPER, f) == getattr(OFFICIAL, f)]
    assert same == ["call_shape"]  # a judge scorer's parameter, "json" unless it asks otherwise
    assert PAPER.label.startswith("paper") and OFFICIAL.label.startswith("official")
    with pytest.raises(dataclasses.FrozenInstanceError):
        PAPER.shortcuts = False  # type: ignore[misc]


def test_a_profile_is_stored_only_when_asked_for() -> None:
    assert "profile" not in vars(PagesScorer()) and PagesScorer().chosen is None
    assert vars(PagesScorer(profile="official"))["profile"] == "official"
    assert vars(PagesScorer(profile="lenient"))["profile"] == "paper"
    assert row_basis("c", PagesScorer()) != row_basis("c", PagesScorer(profile="official"))
    with pytest.raises(ValueError, match="unknown scoring profile"):
        PagesScorer(profile="strict")


def test_bindings_fix_the_profile_under_their_own_name() -> None:
    assert isinstance(pages_official, ProfileBinding) and pages_official.opt_in
    bound = pages_official()
    assert isinstance(bound, PagesScorer) and bound.name == "pages_official"
    assert bound.chosen is OFFICIAL and "profile" not in vars(bound)
    assert pages_official(profile="official").chosen is OFFICIAL
    with pytest.raises(
        ValueError, match="always uses the official profile; use 'pages' with profile: paper"
    ):
        pages_official(profile="paper")
    assert pages_official.__doc__ == "``pages`` with the official profile, under its own name."


def test_a_sample_brings_its_dataset_profile(make_sample, make_traj) -> None:
    official = make_sample(metadata={"scoring_profile": "official"})
    assert sample_profile(official.metadata) is OFFICIAL
    assert sample_profile({"scoring_profile": "bogus"}) is None
    assert sample_profile({}) is None
    traj = make_traj(pages=[3], metadata={"parser": "json"})
    unanswerable = make_sample(
        answerable=False, answer=None, gold_pages=[], metadata={"scoring_profile": "official"}
    )
    assert PagesScorer().compute(traj, unanswerable).details["profile"] == "official"
    forced = PagesScorer(profile="paper").compute(traj, unanswerable)
    assert forced.status == "skipped" and forced.details["profile"] == "paper"


def test_row_profile_defaults_to_paper() -> None:
    assert row_profile(row("a", None)) == "paper"
    assert row_profile(row("a", "official")) == "official"


def test_rows_of_one_profile_are_summarized_as_they_are() -> None:
    rows = [row("a", "official"), row("b", "official")]
    assert rows_of_profile(rows, "paper") == ("official", rows, 0)
    assert rows_of_profile([], "paper") == ("paper", [], 0)
    assert rows_of_profile([], None) == ("paper", [], 0)


def test_a_mixture_keeps_the_wanted_profile() -> None:
    rows = [row("a", "official"), row("b", None), row("c", "paper")]
    profile, kept, other = rows_of_profile(rows, "paper")
    assert (profile, [r.sample_id for r in kept], other) == ("paper", ["b", "c"], 1)
    profile, kept, other = rows_of_profile(rows, "official")
    assert (profile, [r.sample_id for r in kept], other) == ("official", ["a"], 2)
    assert rows_of_profile(rows, None)[0] == "paper"


def test_stage_rows_reads_the_stage_and_its_binding() -> None:
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


def test_aggregate_labels_the_result(make_sample, make_traj) -> None:
    sample = make_sample(gold_pages=[2])
    official = PagesScorer(profile="official").compute(make_traj(pages=[2]), sample)
    result = PagesScorer().aggregate([official], RowGroup("c", "s"), NO_CI)
    assert result.tables["profile"] == "official"
    assert result.tables["profile_label"] == OFFICIAL.label
    paper = PagesScorer().compute(make_traj(pages=[2, 5]), sample)
    result = pages_official().aggregate([official, paper], RowGroup("c", "s"), NO_CI)
    assert result.tables["profile"] == "official" and result.tables["rows_of_other_profile"] == 1
