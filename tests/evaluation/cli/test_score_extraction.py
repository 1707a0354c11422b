"""Asking ``scanrag score`` for MMLongBench-Doc's official extractor makes extraction run or is
refused naming the setting, and ``--set scoring.KEY=VALUE`` sets scorer parameters, validated
like the config, recorded in the manifest and used by the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.llm import ChatRequest, ScriptedModel, clear_scripted, register_scripted

PROMPT = "Extract the short answer from the analysis. Reply 'Extracted answer: ...'."


def extractor_reply(request: ChatRequest) -> str:
    if request.json_schema is not None:  # the json call shape
        return '{"answer": "12", "format": "Int"}'
    return "Extracted answer: 12\nAnswer format: Integer"


@pytest.fixture
def extractor():
    model = register_scripted("extractor", ScriptedModel(responder=extractor_reply))
    yield model
    clear_scripted()


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    path = tmp_path / "extraction.md"
    path.write_text(PROMPT)
    return path


def _rows(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "scores.jsonl").read_text().splitlines()]


def _score(run: Path, *extra: str) -> list[str]:
    argv = ["score", str(run), "--scorers", "mmlongbench", "--resamples", "0"]
    return [*argv, "--judge-model", "scripted/extractor", *extra]


def test_an_extractor_prompt_file_makes_extraction_run(
    run_dir: Path, prompt_file: Path, extractor: ScriptedModel
) -> None:
    assert main(_score(run_dir, "--judge-prompt", f"extractor={prompt_file}")) == 0
    assert len(extractor.requests) == 3  # one extraction per item
    assert extractor.requests[0].messages[0].text == PROMPT
    rows = _rows(run_dir)
    assert {(r["details"]["method"], r["details"]["call_shape"]) for r in rows} == {
        ("extracted", "official")
    }
    assert {r["details"]["prediction"] for r in rows} == {"12"}


def test_extract_false_with_an_extractor_prompt_is_refused(
    run_dir: Path,
    prompt_file: Path,
    extractor: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _score(run_dir, "--judge-prompt", f"extractor={prompt_file}")
    argv += ["--set", "scoring.params.mmlongbench.extract=false"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "scoring.judge_prompts.extractor: given, but scoring.params.mmlongbench.extract" in err
    assert "--set scoring.params.mmlongbench.extract=true" in err
    assert extractor.requests == [] and not (run_dir / "scores.jsonl").exists()


def test_profile_official_with_extract_false_is_refused(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _score(run_dir, "--set", "scoring.params.mmlongbench.extract=false")
    argv += ["--set", "scoring.params.mmlongbench.profile=official"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "scoring.params.mmlongbench: profile official always extracts the answer" in err


def test_an_unread_extractor_prompt_is_refused(
    run_dir: Path, prompt_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", str(run_dir), "--scorers", "pages"]
    assert main([*argv, "--judge-prompt", f"extractor={prompt_file}"]) == 2
    assert "scoring.judge_prompts.extractor: no scorer of this run has" in capsys.readouterr().err


def test_set_sets_scorer_parameters_recorded_and_summarised(
    run_dir: Path, extractor: ScriptedModel
) -> None:
    (run_dir / "manifest.json").write_text(json.dumps({"name": "exp", "sessions": []}))
    argv = ["score", str(run_dir), "--scorers", "mmlongbench"]
    argv += ["--judge-model", "scripted/extractor"]
    argv += ["--set", "scoring.params.mmlongbench.extract=true"]
    assert main([*argv, "--set", "scoring.resamples=40"]) == 0
    assert len(extractor.requests) == 3 and extractor.requests[0].json_schema is not None
    assert {r["details"]["call_shape"] for r in _rows(run_dir)} == {"json"}
    session = json.loads((run_dir / "manifest.json").read_text())["sessions"][-1]
    assert session["scoring"]["params"] == {"mmlongbench": {"extract": True}}
    assert session["set"] == [
        "scoring.params.mmlongbench.extract=true",
        "scoring.resamples=40",
    ]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["scoring"]["n_resamples"] == 40  # the summary uses the settings given


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("runner.concurrency=2", "runner.concurrency: scanrag score sets scoring.* keys only"),
        ("scoring.resamples=-1", "scoring.resamples: Input should be greater than or equal to 0"),
        (
            "scoring.params.mmlongbench.extract=maybe",
            "scoring.params.mmlongbench.extract: Input should be a valid boolean",
        ),
        (
            "scoring.params.mmlongbench.extrakt=true",
            "unexpected keyword argument 'extrakt'; accepted: extract, profile, call_shape",
        ),
    ],
)
def test_set_is_validated_like_the_config(
    run_dir: Path, item: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(run_dir), "--scorers", "mmlongbench", "--set", item]) == 2
    assert message in capsys.readouterr().err
    assert not (run_dir / "scores.jsonl").exists()
