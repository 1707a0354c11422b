"""The runner end to end with fake components: rows, manifest, resume, budget, faults."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.datasets import load_generic
from scanrag.rundir import DiskFullError, JsonlLog
from scanrag.runner import resume_run, start_run
from scanrag.schemas import Trajectory


def rows(run_dir: Path, name: str = "trajectories.jsonl") -> list[dict[str, Any]]:
    return list(JsonlLog(run_dir / name).rows())


def keys(run_dir: Path) -> list[tuple[str, str]]:
    return [(r["run_key"], r["sample_id"]) for r in rows(run_dir)]


def run(root: Path, **sections: Any):
    return start_run(config_from_dict(rf.make_config(root, **sections)), llm=rf.MODEL, log=None)


def test_end_to_end_rows_manifest_and_summary(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result.complete and result.exit_code == 0
    run_dir = result.run_dir
    assert run_dir.parent == tmp_path / "runs" and run_dir.name.endswith("_fake")
    found = keys(run_dir)
    assert len(found) == len(set(found)) == 24
    trajectories = [Trajectory.model_validate(r) for r in rows(run_dir)]
    rag = [t for t in trajectories if t.run_key == "rag+overlap"]
    assert all(t.status == "ok" for t in trajectories)
    # the overlap retriever finds the page naming the item, so the reader answers correctly
    samples = {s.id: s for s in load_generic(run_dir / "samples.jsonl", validate=False).samples}
    assert len(samples) == 12
    assert all(t.answer == samples[t.sample_id].answer for t in rag)
    assert all(t.pages == samples[t.sample_id].gold_pages for t in rag)
    assert all(t.usage["reader"].calls == 1 for t in trajectories)

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["environment"]["python"].count(".") == 2
    assert "pydantic" in manifest["environment"]["libraries"]
    assert "commit" in manifest["environment"]["git"]
    assert manifest["models"]["agents"] == [rf.MODEL_NAME]
    assert manifest["render_dpi"] == 144 and manifest["page_caps"]["max_pages"] == 60
    cell = manifest["cells"][0]
    assert cell["run_key"] == "rag+overlap"
    assert cell["prompt_hashes"] == {"reader": rf.PROMPT_HASH}
    assert manifest["retrievers"]["overlap"]["manifest"]["pages"] == 12
    assert manifest["datasets"][0]["report"]["rows_read"] == 12
    assert len(manifest["documents"]) == 3

    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["complete"] is True
    assert summary["counts"]["trajectories"] == 24
    assert summary["cells"]["first_pages"]["status"] == {"ok": 12}
    assert summary["usage"]["run"]["reader"]["calls"] == 24
    assert (run_dir / "config.resolved.yaml").is_file()


def test_resume_of_a_finished_run_adds_nothing(tmp_path: Path) -> None:
    first = run(tmp_path)
    before = (first.run_dir / "trajectories.jsonl").read_bytes()
    again = resume_run(first.run_dir, llm=rf.MODEL, log=None)
    assert again.complete
    assert (first.run_dir / "trajectories.jsonl").read_bytes() == before
    manifest = json.loads((first.run_dir / "manifest.json").read_text())
    assert [s["resumed"] for s in manifest["sessions"]] == [False, True]


def test_budget_stops_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    # each call costs ~35 tokens; 200 tokens stop the run after a handful of items
    result = run(tmp_path, runner={"concurrency": 1, "budget": {"tokens": 200}})
    assert not result.complete and result.exit_code == 3
    assert result.stop_reason.startswith("budget reached: used")
    done = keys(result.run_dir)
    assert 0 < len(done) < 24
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["complete"] is False and summary["stop_reason"].startswith("budget")
    assert summary["resume"] == f"scanrag run --resume {result.run_dir}"

    # the same budget is spent already: resuming stops at once without new rows
    stalled = resume_run(result.run_dir, llm=rf.MODEL, log=None)
    assert stalled.exit_code == 3 and keys(result.run_dir) == done

    finished = resume_run(
        result.run_dir, overrides=["runner.budget.tokens=100000"], llm=rf.MODEL, log=None
    )
    assert finished.complete
    final = keys(result.run_dir)
    assert len(final) == len(set(final)) == 24
    assert final[: len(done)] == done


def test_resume_overrides_are_limited_to_runner_and_scoring(tmp_path: Path) -> None:
    from scanrag.config import ConfigError

    result = run(tmp_path, runner={"budget": {"tokens": 50}})
    with pytest.raises(ConfigError, match="cannot change on resume"):
        resume_run(result.run_dir, overrides=["strategies.0.params.k=3"], llm=rf.MODEL, log=None)


def test_missing_pdf_makes_input_error_rows(tmp_path: Path) -> None:
    rf.make_dataset(tmp_path)
    (tmp_path / "pdfs" / "doc1.pdf").unlink()
    result = run(tmp_path)
    assert result.complete
    statuses = Counter((r["sample_id"][:2], r["status"]) for r in rows(result.run_dir))
    assert statuses[("q1", "input_error")] == 8  # 4 questions × 2 cells
    assert statuses[("q0", "ok")] == 8 and statuses[("q2", "ok")] == 8
    bad = next(r for r in rows(result.run_dir) if r["status"] == "input_error")
    assert "missing PDF 'doc1.pdf'" in bad["errors"][0]
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert len(manifest["datasets"][0]["input_errors"]) == 4


def test_per_item_failures_are_recorded_and_retried(tmp_path: Path) -> None:
    questions = rf.make_dataset(tmp_path)
    with open(questions, "a") as fh:
        row = {"id": "down", "doc": "doc0.pdf", "question": "PROVIDER-DOWN item D0P1?"}
        fh.write(json.dumps(row) + "\n")
    strategies = [
        {
            "name": "fake_reader",
            "label": "rag",
            "retriever": "overlap",
            "params": {"crash_on": ["q0-2"]},
        },
        {"name": "fake_reader", "label": "broken", "retriever": "broken"},
    ]
    retrievers = {"overlap": {"type": "fake_overlap"}, "broken": {"type": "fake_broken"}}
    result = run(tmp_path, strategies=strategies, retrievers=retrievers)
    by_key = {(r["run_key"], r["sample_id"]): r for r in rows(result.run_dir)}
    assert len(by_key) == 26
    assert by_key[("rag+overlap", "q0-2")]["status"] == "internal_error"
    assert "strategy bug on q0-2" in by_key[("rag+overlap", "q0-2")]["errors"][0]
    assert by_key[("rag+overlap", "down")]["status"] == "model_error"
    assert "503" in by_key[("rag+overlap", "down")]["errors"][0]
    assert {r["status"] for k, r in by_key.items() if k[0] == "broken+broken"} == {
        "retriever_error"
    }
    assert by_key[("rag+overlap", "q1-1")]["status"] == "ok"

    again = resume_run(result.run_dir, retry_errors=True, llm=rf.MODEL, log=None)
    assert again.complete
    final = keys(result.run_dir)
    assert len(final) == len(set(final)) == 26


def test_full_disk_stops_cleanly_and_resume_completes(tmp_path: Path, monkeypatch) -> None:
    real_append = JsonlLog.append
    written = {"n": 0}

    def append(self: JsonlLog, row: Any) -> None:
        if self.path.name == "trajectories.jsonl":
            if written["n"] >= 5:
                raise DiskFullError(28, f"no space left on device while writing {self.path}")
            written["n"] += 1
        real_append(self, row)

    monkeypatch.setattr(JsonlLog, "append", append)
    result = run(tmp_path, runner={"concurrency": 2})
    assert result.exit_code == 4 and result.stop_reason.startswith("disk full")
    assert len(keys(result.run_dir)) == 5
    monkeypatch.setattr(JsonlLog, "append", real_append)
    finished = resume_run(result.run_dir, llm=rf.MODEL, log=None)
    assert finished.complete
    final = keys(result.run_dir)
    assert len(final) == len(set(final)) == 24


def test_torn_line_is_repaired_on_resume(tmp_path: Path) -> None:
    result = run(tmp_path, runner={"budget": {"tokens": 300}, "concurrency": 1})
    path = result.run_dir / "trajectories.jsonl"
    done = keys(result.run_dir)
    with open(path, "ab") as fh:
        fh.write(b'{"schema_version":"1.0","sample_id":"q2-4","strat')
    messages: list[str] = []
    resumed = resume_run(
        result.run_dir, overrides=["runner.budget.tokens=null"], llm=rf.MODEL, log=messages.append
    )
    assert resumed.complete
    assert any("removed a torn last line" in m for m in messages)
    final = keys(result.run_dir)
    assert len(final) == len(set(final)) == 24 and final[: len(done)] == done


@pytest.mark.parametrize("damage", ["none", "missing", "torn", "stale", "torn_log"])
def test_resume_reads_the_row_index_or_falls_back(tmp_path: Path, damage: str) -> None:
    result = run(tmp_path, runner={"budget": {"tokens": 300}, "concurrency": 1})
    index = result.run_dir / "trajectories.index.jsonl"
    path = result.run_dir / "trajectories.jsonl"
    done = keys(result.run_dir)
    assert 0 < len(done) < 24 and index.is_file()
    if damage == "missing":
        index.unlink()
    elif damage == "torn":
        index.write_bytes(index.read_bytes()[:-7])
    elif damage == "stale":  # the last rows reached the log but not the index
        lines = index.read_bytes().splitlines(keepends=True)
        index.write_bytes(b"".join(lines[:-2]))
    elif damage == "torn_log":
        with open(path, "ab") as fh:
            fh.write(b'{"schema_version":"1.0","sample_id":"q2-4","strat')
    resumed = resume_run(
        result.run_dir, overrides=["runner.budget.tokens=null"], llm=rf.MODEL, log=None
    )
    assert resumed.complete
    final = keys(result.run_dir)
    assert len(final) == len(set(final)) == 24 and final[: len(done)] == done
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["usage"]["run"]["reader"]["calls"] == 24


def test_api_keys_never_reach_the_run_dir(tmp_path: Path, monkeypatch) -> None:
    secret = "sk-test-THISMUSTNOTLEAK0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-another-secret-42")
    monkeypatch.setattr("sys.argv", ["scanrag", "run", "--set", f"x.api_key={secret}"])
    config = rf.make_config(tmp_path)
    config["retrievers"]["overlap"]["params"] = {"lowercase": True}
    config["runner"]["settings"] = {"api_key": secret, "note": f"key is {secret}"}
    result = start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    assert result.complete
    for path in result.run_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert secret not in text, path
            assert "tok-another-secret-42" not in text, path
    manifest = (result.run_dir / "manifest.json").read_text()
    assert "***" in manifest


def test_secret_named_config_keys_are_masked_in_every_file(tmp_path: Path, monkeypatch) -> None:
    argv = ["scanrag", "run", "cfg.yaml", "--set", "runner.settings.cli_token=plainvalue-777"]
    monkeypatch.setattr("sys.argv", argv)
    config = rf.make_config(tmp_path)
    config["runner"]["settings"] = {
        "cli_token": "plainvalue-777",
        "password": "hunter2-hunter2",
        "nested": {"authorization": "Basic dXNlcjpwYXNz"},
    }
    messages: list[str] = []
    result = start_run(config_from_dict(config), llm=rf.MODEL, log=messages.append)
    assert result.complete
    files = {
        p.name: p.read_text(errors="replace") for p in result.run_dir.rglob("*") if p.is_file()
    }
    for name in ("config.resolved.yaml", "manifest.json", "summary.json"):
        assert name in files
    for name, text in files.items():
        for secret in ("plainvalue-777", "hunter2-hunter2", "dXNlcjpwYXNz"):
            assert secret not in text, (name, secret)
    assert "cli_token: '***'" in files["config.resolved.yaml"]
    assert "runner.settings.cli_token=***" in files["summary.json"]  # the recorded argv
    resumed: list[str] = []
    resume_run(result.run_dir, llm=rf.MODEL, log=resumed.append)
    assert any("runner.settings.cli_token" in m and "***" in m for m in resumed)


def test_console_messages_are_scrubbed(capsys) -> None:
    from scanrag.runner.progress import stderr_log

    stderr_log("provider said: invalid api_key=abc123xyz for Bearer tok_abcdefgh")
    err = capsys.readouterr().err
    assert "abc123xyz" not in err and "tok_abcdefgh" not in err and "***" in err


SCORING = {"enabled": True, "scorers": ["fake_exact", "fake_judge"]}
JUDGED = {"agents": {"reader": rf.MODEL_NAME}, "judges": {"default": rf.MODEL_NAME}}


def test_scoring_writes_rows_and_metrics(tmp_path: Path) -> None:
    result = run(tmp_path, scoring=SCORING, models=JUDGED)
    assert result.complete
    scores = rows(result.run_dir, "scores.jsonl")
    keys_ = [(r["run_key"], r["sample_id"], r["scorer"]) for r in scores]
    assert len(keys_) == len(set(keys_)) == 48
    summary = result.summary
    assert summary["headline"]["rag+overlap"] == {"fake_exact.accuracy": 1.0}
    assert summary["metrics"]["first_pages"]["fake_judge.agree"] == 0.5
    assert summary["scoring"]["groups"]["rag+overlap"]["items"] == 12
    assert summary["usage"]["score"]["judge.answer"]["calls"] == 24
    assert summary["counts"]["score_pending"] == 0
    judged = next(r for r in scores if r["scorer"] == "fake_judge")
    assert judged["judges"][0]["model"] == rf.MODEL_NAME


def test_scoring_resumes_after_lost_score_rows(tmp_path: Path) -> None:
    result = run(tmp_path, scoring=SCORING, models=JUDGED)
    path = result.run_dir / "scores.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:20]) + lines[20][:30])  # crash during scoring
    again = resume_run(result.run_dir, llm=rf.MODEL, log=None)
    assert again.complete
    scores = rows(result.run_dir, "scores.jsonl")
    keys_ = [(r["run_key"], r["sample_id"], r["scorer"]) for r in scores]
    assert len(keys_) == len(set(keys_)) == 48
    assert again.summary["usage"]["score"]["judge.answer"]["calls"] >= 24


def test_budget_also_stops_scoring(tmp_path: Path) -> None:
    # the run itself spends ~830 tokens; scoring stops once 900 are used
    result = run(
        tmp_path,
        scoring=SCORING,
        models=JUDGED,
        runner={"budget": {"tokens": 900}, "concurrency": 1},
    )
    assert result.exit_code == 3
    assert len(keys(result.run_dir)) == 24
    scored = len(rows(result.run_dir, "scores.jsonl"))
    assert 0 < scored < 48
    finished = resume_run(result.run_dir, overrides=["runner.budget=null"], llm=rf.MODEL, log=None)
    assert finished.complete and len(rows(result.run_dir, "scores.jsonl")) == 48


def test_out_of_range_gold_pages_make_input_error_rows(tmp_path: Path) -> None:
    questions = rf.make_dataset(tmp_path)
    with open(questions, "a") as fh:
        row = {"id": "far", "doc": "doc0.pdf", "question": "Item D0P1?", "evidence_pages": [9]}
        fh.write(json.dumps(row) + "\n")
        fh.write("{not json\n")
    messages: list[str] = []
    config = config_from_dict(rf.make_config(tmp_path))
    result = start_run(config, llm=rf.MODEL, log=messages.append)
    bad = [r for r in rows(result.run_dir) if r["sample_id"] == "far"]
    assert [r["status"] for r in bad] == ["input_error", "input_error"]
    assert "gold page 9 outside 1..4" in bad[0]["errors"][0]
    assert result.summary["cells"]["rag+overlap"]["status"] == {"input_error": 1, "ok": 12}
    assert result.summary["datasets"] == [
        {"name": "toy", "samples": 13, "rows_dropped": 1, "input_errors": 1}
    ]
    line = next(m for m in messages if m.startswith("dataset toy:"))
    assert "13 samples, 1 rows dropped (row 13: line 14 is not valid JSON" in line
    assert "1 input errors (far: gold page 9 outside 1..4" in line


def test_resume_warns_when_prompts_changed(tmp_path: Path, monkeypatch) -> None:
    result = run(tmp_path, runner={"budget": {"tokens": 100}})
    monkeypatch.setattr(rf.FakeReader, "describe", lambda self: {"prompt_hashes": {"reader": "x"}})
    messages: list[str] = []
    resume_run(result.run_dir, overrides=["runner.budget=null"], llm=rf.MODEL, log=messages.append)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert "prompt hashes changed" in manifest["warnings"][0]["message"]
    assert any("prompt hashes changed" in m for m in messages)


def test_a_raising_scorer_is_a_scorer_error_row_retried_by_retry_errors(tmp_path: Path) -> None:
    rf.FLAKY.add("q0-1")
    try:
        result = run(tmp_path, scoring={"enabled": True, "scorers": ["fake_flaky"]})
    finally:
        rf.FLAKY.clear()
    assert result.complete and result.exit_code == 0  # 2 of 24 pairs failed, none dropped
    scores = rows(result.run_dir, "scores.jsonl")
    broken = [r for r in scores if r["status"] == "scorer_error"]
    assert len(scores) == 24 and [r["sample_id"] for r in broken] == ["q0-1", "q0-1"]
    assert broken[0]["reason"] == "ValueError: scorer bug on q0-1"
    groups = result.summary["scoring"]["groups"]
    assert groups["rag+overlap"]["judge_errors"]["fake_flaky"]["causes"] == {"scorer": 1}
    again = resume_run(result.run_dir, retry_errors=True, llm=rf.MODEL, log=None)
    latest = {(r["run_key"], r["sample_id"]): r for r in rows(result.run_dir, "scores.jsonl")}
    assert again.complete and {r["status"] for r in latest.values()} == {"ok"}


def test_a_judge_that_fails_on_every_item_exits_5(tmp_path: Path) -> None:
    from scanrag.llm import ScriptedModel

    prose = ScriptedModel(responder=lambda request: "They look alike to me.")
    lines: list[str] = []
    config = rf.make_config(
        tmp_path,
        scoring={"enabled": True, "scorers": ["fake_judge", "fake_exact"]},
        models={"agents": {"reader": rf.MODEL_NAME}, "judges": {"default": "scripted/x"}},
    )
    result = start_run(config_from_dict(config), llm=rf.MODEL, judge_llm=prose, log=lines.append)
    assert result.complete and result.exit_code == 5
    assert (
        "judge errors in rag+overlap, fake_judge: every judged item failed (12 of 12): parse 12"
        in lines
    )
    assert any(
        line.startswith("every judged item failed in: first_pages: fake_judge; rag+overlap")
        and line.endswith("(exit code 5)")
        for line in lines
    )
