"""The hostile-input suite, round two (issue 20): each case tried as a hostile or unlucky user
would, through the ``scanrag`` command line, with the behavior it must have now.

``test_refusals.py`` holds the configs refused before the run folder exists (round one); this
file adds what broke in round two: scorer parameters checked only after the run, a key whose
variable is not named like a secret, a page file edited in place, an alias bomb, a row index
edited by hand, and the smaller cases (exports and imports into files, a run given twice, an
empty infer file, flags of 0, a folder as the config, a question of the wrong kind, a judge
prompt file of 50 MB). Cases with a focused test elsewhere: two ``<answer>`` tags
(``tests/agents/test_reply.py``), a damaged checkpoint database
(``tests/graphs/test_checkpoints.py``), stale page-file temporaries
(``tests/scanrag/documents/test_pagestore_integrity.py``), index entries of every kind
(``tests/scanrag/rundir/test_index.py``).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.cli import main
from scanrag.documents.pagestore import PAGE_CACHE
from scanrag.rundir import JsonlLog, RunDir

FAKES = Path(__file__).resolve().parents[1] / "runner"
LLM_TESTS = Path(__file__).resolve().parents[1] / "llm"
for folder in (FAKES, LLM_TESTS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
import runner_fakes as rf  # noqa: E402
from fake_openai import FakeOpenAIServer, server_factory, tiny_synthetic  # noqa: E402


@pytest.fixture(autouse=True)
def _fake_models_registered() -> None:
    rf.register_models()


def _config(root: Path, **sections: Any) -> Path:
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(rf.make_config(root, **sections)))
    return path


def _run(*argv: str) -> int:
    return main(["run", *argv, "--no-progress"])


def _only_run(root: Path) -> Path:
    (run,) = (root / "runs").iterdir()
    return run


def _rows(run: Path, name: str = "trajectories.jsonl") -> list[dict[str, Any]]:
    return list(JsonlLog(run / name).rows())


def _refused(err: str, root: Path, *expected: str) -> None:
    for message in expected:
        assert message in err, (message, err)
    assert "Traceback" not in err
    assert not (root / "runs").exists()


SCORING = {"enabled": True, "scorers": ["fake_scaled"]}


# --------------------------------------------------------------------------- 1. scorer parameters


def test_an_unknown_scorer_parameter_is_refused_before_any_item_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = {"fake_scaled": {"scale": 2, "zzz_unknown": 1}}
    path = _config(tmp_path, scoring={**SCORING, "params": params})
    calls = len(rf.MODEL.requests)
    assert _run(str(path)) == 2
    _refused(
        capsys.readouterr().err,
        tmp_path,
        "error: the run cannot start:",
        "scoring.params.fake_scaled: got an unexpected keyword argument 'zzz_unknown'; "
        "accepted: scale",
    )
    assert len(rf.MODEL.requests) == calls  # no model call was spent


def test_a_scorer_name_typo_in_params_is_refused_with_the_known_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, scoring={**SCORING, "params": {"fake_scale": {"scale": 2}}})
    assert _run(str(path)) == 2
    _refused(
        capsys.readouterr().err,
        tmp_path,
        "scoring.params.fake_scale: unknown scorer 'fake_scale' (did you mean 'fake_scaled'?); "
        "known scorer names: answer, ",
    )


def test_a_loader_option_of_the_wrong_type_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loader options were checked by name only; their types are checked too now."""
    config = rf.make_config(tmp_path)
    config["datasets"][0]["options"] = {"validate": "yes", "name": 3}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    assert _run(str(path)) == 2
    _refused(
        capsys.readouterr().err,
        tmp_path,
        "datasets.0.options.validate: Input should be a valid boolean, got 'yes'",
        "datasets.0.options.name: Input should be a valid string, got 3",
    )


def test_resume_and_score_refuse_bad_scorer_parameters_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, scoring=SCORING)
    assert _run(str(path), "--limit", "1") == 0
    run = _only_run(tmp_path)
    before = (run / "scores.jsonl").read_bytes()
    capsys.readouterr()
    bad = "scoring.params={fake_scaled: {scale: 2, zzz_unknown: 1}}"
    assert _run("--resume", str(run), "--set", bad) == 2
    err = capsys.readouterr().err
    assert "error: the run cannot resume:" in err and "'zzz_unknown'" in err
    assert "Traceback" not in err
    # a recorded config with a misspelt scorer name (an older version did not check it, and
    # recorded its hash as it wrote it)
    config = run / "config.resolved.yaml"
    data = yaml.safe_load(config.read_text())
    data["scoring"]["params"] = {"page": {"profile": "paper"}}
    config.write_text(yaml.safe_dump(data))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config_hash"] = RunDir(run).recorded_config_hash()
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["score", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"error: cannot score {run}:" in err
    assert "scoring.params.page: unknown scorer 'page' (did you mean 'pages'?)" in err
    assert (run / "scores.jsonl").read_bytes() == before


def test_an_oversized_judge_prompt_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "prompt.txt"
    with open(huge, "wb") as fh:  # sparse: 50 MB without writing them
        fh.truncate(50 * 1024 * 1024)
    scoring = {"enabled": True, "scorers": ["fake_judge"], "judge_prompts": {"answer": str(huge)}}
    path = _config(tmp_path, scoring=scoring)
    started = time.perf_counter()
    assert _run(str(path)) == 2
    _refused(
        capsys.readouterr().err,
        tmp_path,
        f"scoring.judge_prompts.answer: the prompt file for 'answer' ({huge}) holds 52,428,800 "
        "bytes; a prompt file may hold at most 262,144",
    )
    assert time.perf_counter() - started < 30


# --------------------------------------------------------------------------- 2. secrets by value

KEY = "pw-Zq81xLmN0aTT-not-shaped-like-a-key"


@pytest.fixture
def servers() -> Iterator[Callable[..., FakeOpenAIServer]]:
    with server_factory() as make:
        yield make


def test_a_key_whose_variable_is_not_named_like_a_secret_is_masked_everywhere(
    tmp_path: Path,
    servers: Callable[..., FakeOpenAIServer],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reader's server repeats the key in its answer, the judge's rejects it with a 401
    that quotes it; the key must reach no file, no stdout, no stderr."""
    monkeypatch.setenv("LLMSRV_PW", KEY)
    reader_box: list[FakeOpenAIServer] = []

    def echo_key(body: dict[str, Any]) -> str:
        sent = reader_box[0].headers[-1].get("authorization", "")
        return json.dumps({"answer": f"the server key is {sent.removeprefix('Bearer ')}"})

    reader = servers(responder=echo_key)
    reader_box.append(reader)
    judge = servers(default="unauthorized")

    def entry(server: FakeOpenAIServer) -> dict[str, Any]:
        return {
            "model": "openai/m",
            "api_base": server.api_base,
            "api_key_env": "LLMSRV_PW",
            "timeout_s": 5,
        }

    config = {
        "name": "keys",
        "datasets": [tiny_synthetic(2)],
        "strategies": [{"name": "full_doc", "params": {"output": "json", "max_tokens": 64}}],
        "models": {
            "agents": {"reader": "reader-srv"},
            "judges": {"default": "judge-srv"},
            "entries": {"reader-srv": entry(reader), "judge-srv": entry(judge)},
        },
        "runner": {
            "cache_dir": str(tmp_path / "cache"),
            "runs_dir": str(tmp_path / "runs"),
            "llm": {"max_retries": 0},
        },
        "scoring": {"scorers": ["answer"]},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    _run(str(path))
    run = _only_run(tmp_path)
    assert main(["report", str(run)]) == 0
    assert main(["export", str(run), "--resamples", "0"]) == 0
    out, err = capsys.readouterr()
    assert all(h["authorization"] == f"Bearer {KEY}" for h in reader.headers + judge.headers)
    assert reader.requests and judge.requests  # both servers saw it, and sent it back
    rows = _rows(run)
    assert all("the server key is ***" in (r["answer"] or "") for r in rows)
    judged = [j for r in _rows(run, "scores.jsonl") for j in r.get("judges", [])]
    assert judged and all("***" in json.dumps(j) for j in judged)
    assert KEY not in out + err
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaks == []  # run folder, report, exports, response cache


# --------------------------------------------------------------------------- 3. page files


def test_a_page_file_edited_in_place_is_rebuilt_not_believed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _config(
        tmp_path, strategies=[{"name": "fake_reader", "label": "read", "params": {"k": 4}}]
    )
    assert _run(str(path), "--limit", "4") == 0
    first = {r["sample_id"]: r["answer"] for r in _rows(_only_run(tmp_path))}
    assert first["q0-3"] == "v0x3"
    (page_file,) = [
        p
        for p in (tmp_path / "cache" / "documents").glob("*.pages.sqlite")
        if b"v0x3" in p.read_bytes()
    ]
    data = page_file.read_bytes()
    with open(page_file, "r+b") as fh:  # same length, same inode: "3 units" becomes "9 units"
        fh.write(data.replace(b"v0x3", b"v0x9"))
    for run in (tmp_path / "runs").iterdir():
        run.rename(tmp_path / f"old-{run.name}")
    PAGE_CACHE.clear()  # as a new process would start
    with caplog.at_level(logging.WARNING):
        assert _run(str(path), "--limit", "4") == 0
    again = {r["sample_id"]: r["answer"] for r in _rows(_only_run(tmp_path))}
    assert again == first  # not "v0x9"
    assert "do not match the checksum" in caplog.text and str(page_file) in caplog.text


# --------------------------------------------------------------------------- 4. YAML bounds


def test_an_alias_bomb_config_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = rf.make_config(tmp_path)
    path = tmp_path / "bomb.yaml"
    text = yaml.safe_dump(config)
    levels = ["      l0: &l0 [" + ", ".join(["aaaaaaaaa"] * 9) + "]"]
    levels += [f"      l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 7)]
    model = f"    reader:\n      model: {rf.MODEL_NAME}\n      extra_body:\n  " + "\n  ".join(
        levels
    )
    text = text.replace(f"    reader: {rf.MODEL_NAME}", model)
    path.write_text(text)
    started = time.perf_counter()
    assert _run(str(path)) == 2
    _refused(
        capsys.readouterr().err,
        tmp_path,
        "YAML refused: its aliases expand to more than 100,000 values",
    )
    assert time.perf_counter() - started < 10


# --------------------------------------------------------------------------- 5. row indexes


def _entries(index: Path) -> tuple[str, list[dict[str, Any]]]:
    header, *lines = index.read_text().splitlines()
    return header, [json.loads(line) for line in lines]


def test_an_edited_index_neither_repeats_nor_wedges_a_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    assert _run(str(path), "--concurrency", "1", "--budget-tokens", "100") == 3  # stopped early
    run = _only_run(tmp_path)
    done = len(_rows(run))
    assert 2 <= done < 24
    index = run / "trajectories.index.jsonl"
    header, entries = _entries(index)
    # a middle key pointed at an item that has not run yet: it would be skipped forever, and
    # the item it hides would run twice
    entries[1]["key"] = ["first_pages", "q2-4"]
    index.write_text(header + "\n" + "".join(json.dumps(e) + "\n" for e in entries))
    capsys.readouterr()
    assert _run("--resume", str(run), "--no-budget") == 0
    rows = _rows(run)
    keys = [(r["run_key"], r["sample_id"]) for r in rows]
    assert len(rows) == 24 and len(set(keys)) == 24  # every item once
    assert len(_rows(run, "scores.jsonl")) == 24
    assert "unscored" not in capsys.readouterr().err


# --------------------------------------------------------------------------- 6. smaller cases


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--limit", "0"], "argument --limit: must be at least 1, got 0"),
        (["--concurrency", "0"], "argument --concurrency: must be at least 1, got 0"),
        (["--budget-usd", "-1"], "argument --budget-usd: must be greater than 0, got -1"),
    ],
)
def test_a_bad_flag_is_blamed_on_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: list[str], message: str
) -> None:
    path = _config(tmp_path)
    with pytest.raises(SystemExit) as code:
        _run(str(path), *flag)
    assert code.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "datasets.0.limit" not in err and "runner." not in err


def test_a_folder_given_as_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(str(tmp_path)) == 2
    assert (
        f"invalid config {tmp_path}:\n  is a folder, not a config file" in capsys.readouterr().err
    )


def test_a_question_of_the_wrong_kind_is_named_in_the_load_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path)
    questions = tmp_path / "questions.jsonl"
    rows = [json.loads(line) for line in questions.read_text().splitlines()]
    rows[0]["question"] = ["What", "is", "it?"]
    rows[1]["question"] = None
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _run(str(path)) == 0
    datasets = json.loads((_only_run(tmp_path) / "datasets.json").read_text())
    reasons = [d["reason"] for d in datasets[0]["report"]["dropped"]]
    assert reasons == [
        "field 'question' must be a non-empty string, got a list (['What', 'is', 'it?'])",
        "field 'question' must be a non-empty string, got null",
    ]


def test_exports_and_reports_into_a_file_or_of_one_run_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    assert _run(str(path), "--limit", "1") == 0
    run = _only_run(tmp_path)
    taken = tmp_path / "results.csv"
    taken.write_text("keep me")
    capsys.readouterr()
    assert main(["export", str(run), "--out", str(taken)]) == 2
    assert main(["report", str(run), "--out", str(taken)]) == 2
    err = capsys.readouterr().err
    assert err.count(f"error: --out {taken} is a file; give a folder to write into") == 2
    assert taken.read_text() == "keep me"
    out = tmp_path / "exports"
    twice = f"{run}/"
    assert main(["export", str(run), twice, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"error: run folder {run.resolve()} is given twice" in err and "Traceback" not in err
    assert not out.exists()


def test_imports_into_a_file_or_of_an_empty_infer_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    infer = tmp_path / "infer.jsonl"
    infer.write_text('{"question_id": "q1", "raw": "x"}\n')
    taken = tmp_path / "results.csv"
    taken.write_text("keep me")
    bench = tmp_path / "benchmark.json"
    args = ["import", "docscope-infer", str(infer), "--benchmark", str(bench), "--out"]
    assert main([*args, str(taken)]) == 2
    assert f"--out {taken} is a file" in capsys.readouterr().err
    for text in ("", "garbage\n[]\n"):
        infer.write_text(text)
        assert main([*args, str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err
        assert f"{infer} holds no inference record" in err and "Traceback" not in err
        assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------- 7. hostile rows
# (issue 31.1: each crashed the whole run, after its folder existed)


def _rewrite_rows(root: Path, change: Callable[[list[str]], None]) -> None:
    """Rewrite the toy dataset's JSONL lines (``change`` edits the list of lines in place)."""
    questions = root / "questions.jsonl"
    lines = questions.read_text().splitlines()
    change(lines)
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _set_field(index: int, field: str, value: str) -> Callable[[list[str]], None]:
    def change(lines: list[str]) -> None:
        row = json.loads(lines[index])
        row[field] = value
        lines[index] = json.dumps(row)  # ascii escapes: a lone surrogate is "\ud800"

    return change


def _manifest_datasets(run: Path) -> dict[str, Any]:
    (entry,) = json.loads((run / "manifest.json").read_text())["datasets"]
    return entry


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("question", "What is \ud800?", "field 'question' holds a lone surrogate (U+D800)"),
        ("id", "q\ud800", "field 'id' holds a lone surrogate (U+D800) at character 1"),
        ("answer", "v0x1\ud800", "field 'answer' holds a lone surrogate (U+D800)"),
        ("doc", "doc0\ud800.pdf", "field 'doc' holds a lone surrogate (U+D800)"),
    ],
)
def test_a_lone_surrogate_drops_its_row_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str, reason: str
) -> None:
    path = _config(tmp_path)
    _rewrite_rows(tmp_path, _set_field(0, field, value))
    assert _run(str(path), "--limit", "3") == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "1 rows dropped (row 0: line 1" in err
    run = _only_run(tmp_path)
    dropped = _manifest_datasets(run)["report"]["dropped"]
    assert [(d["row"], reason in d["reason"]) for d in dropped] == [(0, True)]
    assert {r["sample_id"] for r in _rows(run)} == {"q0-2", "q0-3", "q0-4"}
    assert all(r["status"] == "ok" for r in _rows(run))


def test_a_half_made_folder_of_a_surrogate_row_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The folder an older version left (config written, samples.jsonl.tmp half written, no
    manifest) resumes: the row is dropped now and every other item runs."""
    from scanrag.config import load_config

    path = _config(tmp_path)
    _rewrite_rows(tmp_path, _set_field(0, "question", "What \ud800?"))
    half = RunDir.create(tmp_path / "runs", "fake")
    half.write_config(load_config(path, limit=2))
    half.file("samples.jsonl.tmp").write_text('{"id": "q0-2", "doc": "doc0.pdf", "que')
    assert _run("--resume", str(half.path)) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert {r["sample_id"] for r in _rows(half.path)} == {"q0-2", "q0-3"}
    assert (half.path / "manifest.json").is_file()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("doc0.pdf\u0000../x", "document name 'doc0.pdf\\x00../x' holds a NUL character"),
        ("a" * 5_000 + ".pdf", "has a part of 5,004 bytes; a file or folder name may be at most"),
        ("a/" * 2_100 + "doc0.pdf", "is 4,208 bytes long; a path may be at most 4,096"),
    ],
)
def test_a_document_name_no_file_can_have_is_an_input_error_of_its_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    path = _config(tmp_path)
    _rewrite_rows(tmp_path, _set_field(0, "doc", name))
    assert _run(str(path), "--limit", "3") == 0
    assert "Traceback" not in capsys.readouterr().err
    run = _only_run(tmp_path)
    rows = {r["sample_id"]: r for r in _rows(run) if r["run_key"] == "first_pages"}
    assert rows["q0-1"]["status"] == "input_error" and reason in rows["q0-1"]["errors"][0]
    assert {rows[k]["status"] for k in ("q0-2", "q0-3")} == {"ok"}
    assert reason in _manifest_datasets(run)["input_errors"]["q0-1"]


def test_a_row_nested_100000_deep_is_dropped_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path)
    deep = '{"id": "deep", "doc": "doc0.pdf", "question": "q?", "m": ' + "[" * 100_000
    _rewrite_rows(tmp_path, lambda lines: lines.insert(0, deep + "]" * 100_000 + "}"))
    assert _run(str(path), "--limit", "2") == 0
    assert "Traceback" not in capsys.readouterr().err
    run = _only_run(tmp_path)
    (dropped,) = _manifest_datasets(run)["report"]["dropped"]
    assert dropped["reason"] == "line 1 nests deeper than 64 levels (too deep to read)"
    assert {r["sample_id"] for r in _rows(run)} == {"q0-1", "q0-2"}


def test_text_with_unicode_line_separators_survives_the_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """U+2028 and \\x1c are text inside a JSON string; samples.jsonl kept them raw and
    reading it back split the row there (str.splitlines)."""
    path = _config(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    question = "What is the secret value of item D0P1?\u2028Answer\x1cbriefly."
    _rewrite_rows(tmp_path, _set_field(0, "question", question))
    assert _run(str(path), "--limit", "2") == 0
    run = _only_run(tmp_path)
    assert main(["score", str(run), "--quiet"]) == 0
    assert "unreadable" not in capsys.readouterr().err
    samples, _, bad = RunDir(run).samples()
    assert bad == [] and samples[0].question == question


def test_an_unexpected_error_after_the_folder_exists_removes_a_folder_with_no_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.runner import datasets as run_datasets

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(run_datasets, "freeze", broken)
    path = _config(tmp_path)
    assert _run(str(path), "--limit", "1") == 1
    err = capsys.readouterr().err
    assert "error: the run stopped: UnicodeEncodeError:" in err and "Traceback" not in err
    assert "no item had run; its folder " in err and " was removed" in err
    assert list((tmp_path / "runs").iterdir()) == []


# --------------------------------------------------------------------------- 8. damaged files
# (issue 31.2: a config.resolved.yaml cut to half was believed: the lost scoring section fell
# back to the default scorers, judge calls were made and rows appended)


def _half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _without_scoring(path: Path) -> None:
    """Cut where the scoring section starts: still valid YAML, the section gone."""
    text = path.read_text()
    path.write_text(text[: text.index("\nscoring:") + 1])


def _commands(run: Path) -> list[list[str]]:
    return [
        ["score", str(run), "--quiet"],
        ["run", "--resume", str(run), "--no-progress"],
        ["report", str(run), "--out", str(run.parent / "report-out")],
        ["export", str(run), "--out", str(run.parent / "export-out")],
    ]


def _unparsable(path: Path) -> None:
    path.write_text(path.read_text() + "scoring: [unclosed\n")


MISMATCH = "config.resolved.yaml does not match the run's manifest (config_hash "
UNREADABLE = "config.resolved.yaml is not readable YAML ("


@pytest.mark.parametrize(
    ("damage", "messages"),
    [
        (_half, (MISMATCH, UNREADABLE)),  # which one depends on where the half falls
        (_without_scoring, (MISMATCH,)),
        (_unparsable, (UNREADABLE,)),
    ],
)
def test_a_damaged_config_is_refused_by_every_command_that_reads_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], None],
    messages: tuple[str, ...],
) -> None:
    scoring = {"enabled": True, "scorers": ["fake_judge"], "params": {}}
    path = _config(tmp_path, scoring=scoring, models={"judges": {"default": "scripted/fake-judge"}})
    assert _run(str(path), "--limit", "2") == 0
    run = _only_run(tmp_path)
    damage(run / "config.resolved.yaml")
    kept = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".lock"}
    judged = len(rf.JUDGE.requests)
    capsys.readouterr()
    for argv in _commands(run):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert any(m in err for m in messages), (argv, err)
        assert str(run / "config.resolved.yaml") in err
        assert "It was edited or damaged since the run wrote it: restore it" in err
        assert "Traceback" not in err
    now = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".lock"}
    assert now == kept  # nothing appended, nothing rewritten
    assert len(rf.JUDGE.requests) == judged  # no judge call
    assert not (run.parent / "report-out").exists() and not (run.parent / "export-out").exists()


def test_a_damaged_samples_file_is_refused_and_a_wanted_edit_can_be_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    assert _run(str(path), "--limit", "2") == 0
    run = _only_run(tmp_path)
    samples = run / "samples.jsonl"
    samples.write_text(samples.read_text().splitlines()[0] + "\n")  # one sample lost
    capsys.readouterr()
    assert main(["score", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{samples} does not match the run's manifest (sha256 " in err
    assert "remove 'samples.jsonl' under 'files' from" in err
    # the recovery the message names: accept the file as it stands
    manifest = json.loads((run / "manifest.json").read_text())
    del manifest["files"]["samples.jsonl"]
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["score", str(run), "--quiet"]) in (0, 1)
    assert "does not match" not in capsys.readouterr().err


def test_a_resume_that_changes_the_config_records_its_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    assert _run(str(path), "--limit", "1") == 0
    run = _only_run(tmp_path)
    assert _run("--resume", str(run), "--set", "scoring.resamples=7") == 0
    assert yaml.safe_load((run / "config.resolved.yaml").read_text())["scoring"]["resamples"] == 7
    assert main(["score", str(run), "--quiet"]) == 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config_hash"] == RunDir(run).recorded_config_hash()
    assert "config_hash_next" not in manifest


# --------------------------------------------------------------------------- 9. counts, answers


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1000000000000", "runner.concurrency: Input should be less than or equal to 1024"),
        ("true", "runner.concurrency: must be a whole number, got a boolean (true)"),
    ],
)
def test_a_concurrency_out_of_bounds_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    """Issue 31.4: both ran with exit 0."""
    path = _config(tmp_path)
    path.write_text(path.read_text().replace("concurrency: 4", f"concurrency: {value}"))
    assert _run(str(path)) == 2
    _refused(capsys.readouterr().err, tmp_path, f"invalid config {path}:", message)
    with pytest.raises(SystemExit) as code:
        _run(str(_config(tmp_path)), "--concurrency", "1000000000000")
    assert code.value.code == 2
    assert "argument --concurrency: must be at most 1,024" in capsys.readouterr().err


def test_an_answer_that_would_compute_for_minutes_is_scored_0_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31.5: ``[((9**999)**999)**999]`` ran > 20 s in process; through ``scanrag score``
    it was killed at 90 s and 445 MB with no row written."""
    from scanrag.llm import scripted

    bomb = "[((9**999)**999)**999]"
    model = scripted.ScriptedModel(responder=lambda request: bomb, name="scripted/bomb")
    monkeypatch.setitem(scripted._SCRIPTED, "bomb", model)  # this test's alone

    def as_lists(lines: list[str]) -> None:
        for i, line in enumerate(lines):
            row = json.loads(line)
            lines[i] = json.dumps({**row, "answer": "['a']", "answer_format": "List"})

    path = _config(
        tmp_path,
        models={
            "agents": {"reader": "scripted/bomb"},
            "judges": {"default": "scripted/fake-judge"},
        },
        strategies=[{"name": "fake_reader", "label": "read", "params": {"k": 1}}],
        scoring={"enabled": True, "scorers": ["mmlongbench"], "resamples": 0},
    )
    _rewrite_rows(tmp_path, as_lists)
    started = time.perf_counter()
    assert _run(str(path), "--limit", "2") == 0
    run = _only_run(tmp_path)
    assert main(["score", str(run), "--quiet"]) == 0
    assert time.perf_counter() - started < 120  # seconds of setup; the scoring is microseconds
    rows = _rows(run, "scores.jsonl")
    assert len(rows) == 2 and {r["metrics"]["score"] for r in rows} == {0.0}
    for row in rows:
        assert "a power of up to 3,163,833 bits" in row["details"]["refused"]
