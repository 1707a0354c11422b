"""Scorers, their parameters, judge roles and prompt files, checked before a run or a score
(issue 20: an unknown scorer parameter failed after every item had run; a misspelt scorer name
in ``scoring.params`` was silently ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanrag.protocols import ScoringJob
from scanrag.runner.scoring import backend
from scanrag.runner.scoring_checks import scoring_problems


def _problems(
    scorers: list[str], params: dict, judges: dict | None = None, prompts: dict | None = None
) -> list[str]:
    job = ScoringJob(
        scorers=scorers, params=params, judges=judges or {}, judge_prompts=prompts or {}
    )
    return scoring_problems(job, backend())


def test_sound_scorers_and_parameters_pass() -> None:
    assert _problems(["pages", "fake_scaled"], {"pages": {"profile": "official"}}) == []
    assert _problems(["fake_scaled"], {"fake_scaled": {"scale": 2.0}, "answer": {}}) == []


def test_an_unknown_parameter_names_the_accepted_ones() -> None:
    assert _problems(["fake_scaled"], {"fake_scaled": {"scale": 2, "zzz_unknown": 1}}) == [
        "scoring.params.fake_scaled: got an unexpected keyword argument 'zzz_unknown'; "
        "accepted: scale"
    ]


def test_types_and_the_constructor_s_own_rules() -> None:
    assert _problems(["fake_scaled"], {"fake_scaled": {"scale": "big"}}) == [
        "scoring.params.fake_scaled.scale: Input should be a valid number, got 'big'"
    ]
    (problem,) = _problems(["pages"], {"pages": {"profile": "paperz"}})  # the constructor's rule
    assert problem.startswith("scoring.params.pages: unknown scoring profile 'paperz'")
    assert "paper" in problem and "official" in problem


def test_a_scorer_name_typo_in_params_is_refused_with_the_known_names() -> None:
    (problem,) = _problems(["pages"], {"page": {"profile": "paper"}})
    assert problem.startswith(
        "scoring.params.page: unknown scorer 'page' (did you mean 'pages'?); known scorer "
        "names: answer, "
    )
    assert "fake_scaled" in problem and "region_geometry" in problem


def test_parameters_that_are_not_a_mapping() -> None:
    assert _problems(["fake_scaled"], {"fake_scaled": 3}) == [
        "scoring.params.fake_scaled: expected a mapping of parameter: value, got 3"
    ]


def test_a_scorer_params_names_is_checked_even_when_the_run_does_not_use_it() -> None:
    assert _problems(["fake_exact"], {"fake_scaled": {"scale": 1, "x": 2}}) == [
        "scoring.params.fake_scaled: got an unexpected keyword argument 'x'; accepted: scale"
    ]


def test_unknown_scorers_judge_roles_and_prompt_files(tmp_path: Path) -> None:
    big = tmp_path / "huge.txt"
    big.write_bytes(b"{question} " * 30_000)  # 330 KB
    odd = tmp_path / "odd.txt"
    odd.write_text("Judge {question} against {nonsense}")
    problems = _problems(
        ["pagez"],
        {},
        judges={"default": "scripted/x", "answr": "scripted/x"},
        prompts={"answer": str(big), "fact": str(odd)},
    )
    assert problems[0].startswith("scoring.scorers: unknown scorer 'pagez' (did you mean")
    assert problems[1] == (
        "models.judges.answr: unknown judge role 'answr'; known roles: region, fact, answer, "
        "extractor, matching, faithfulness"
    )
    assert problems[2] == (
        f"scoring.judge_prompts.answer: the prompt file for 'answer' ({big}) holds 330,000 bytes; "
        "a prompt file may hold at most 262,144"
    )
    assert problems[3].startswith("scoring.judge_prompts.fact: prompt for 'fact' uses unknown")
    assert len(problems) == 4


@pytest.mark.parametrize("roles", [{"default": "m"}, {"region": "m", "answer": "m"}])
def test_known_judge_roles_pass(roles: dict[str, str]) -> None:
    assert _problems([], {}, judges=roles) == []
