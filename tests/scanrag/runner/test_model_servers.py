"""A run whose reader and judge live on two OpenAI-compatible servers (fakes on 127.0.0.1),
and what each server fault does to the items' statuses, stderr and the exit code.

The real agents (``full_doc`` with JSON output) and the real answer judge run over a small
synthetic corpus; only the servers are fakes.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scanrag.config import config_from_dict
from scanrag.rundir import JsonlLog
from scanrag.runner import start_run
from scanrag.runner.outcome import ALL_FAILED_EXIT, THRESHOLD_EXIT

LLM_TESTS = Path(__file__).resolve().parents[1] / "llm"
if str(LLM_TESTS) not in sys.path:
    sys.path.insert(0, str(LLM_TESTS))

from fake_openai import PROSE, FakeOpenAIServer, server_factory, tiny_synthetic  # noqa: E402

N_ITEMS = 2


@pytest.fixture
def servers() -> Iterator[Callable[..., FakeOpenAIServer]]:
    with server_factory() as make:
        yield make


def _config(tmp_path: Path, reader: FakeOpenAIServer | str, judge: FakeOpenAIServer, **runner: Any):  # type: ignore[no-untyped-def]
    reader_base = reader if isinstance(reader, str) else reader.api_base
    data = {
        "name": "two-servers",
        "datasets": [tiny_synthetic(N_ITEMS)],
        "strategies": [{"name": "full_doc", "params": {"output": "json", "max_tokens": 64}}],
        "models": {
            "agents": {"reader": "reader-srv"},
            "judges": {"default": "judge-srv"},
            "entries": {
                "reader-srv": {
                    "model": "openai/reader-model",
                    "api_base": reader_base,
                    "extra_body": {"repeat_penalty": 1.0},
                    "timeout_s": 1.0,
                },
                "judge-srv": {
                    "model": "openai/judge-model",
                    "api_base": judge.api_base,
                    "output_mode": "json_object",
                    "api_key_env": "JUDGE_SERVER_KEY",
                },
            },
        },
        "runner": {
            "cache_dir": str(tmp_path / "cache"),
            "runs_dir": str(tmp_path / "runs"),
            "concurrency": 2,
            "progress": False,
            "llm": {"max_retries": 1},
            **runner,
        },
        "scoring": {"scorers": ["answer"]},
    }
    return config_from_dict(data)


def _rows(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return list(JsonlLog(run_dir / name).rows())


@pytest.fixture(autouse=True)
def _judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_SERVER_KEY", KEY)


KEY = "judge-key-0123456789"


def test_reader_and_judge_on_two_servers(tmp_path: Path, servers, capsys) -> None:  # type: ignore[no-untyped-def]
    reader, judge = servers(), servers()
    result = start_run(_config(tmp_path, reader, judge))
    assert result.exit_code == 0 and result.complete

    trajectories = _rows(result.run_dir, "trajectories.jsonl")
    assert len(trajectories) == N_ITEMS
    assert all(t["status"] == "ok" and t["models"]["reader"] == "reader-srv" for t in trajectories)
    scores = _rows(result.run_dir, "scores.jsonl")
    judged = [j for row in scores for j in row.get("judges", [])]
    assert judged and all(j["model"] == "judge-srv" for j in judged)

    # every reader call went to the reader's server, every judge call to the judge's
    assert len(reader.requests) == N_ITEMS and len(judge.requests) == len(judged)
    assert all(b["model"] == "reader-model" and b["repeat_penalty"] == 1.0 for b in reader.requests)
    assert all(b["response_format"]["type"] == "json_schema" for b in reader.requests)
    assert all(isinstance(m["content"], str) for b in reader.requests for m in b["messages"])
    assert all(b["model"] == "judge-model" for b in judge.requests)
    assert all(b["response_format"]["type"] == "json_object" for b in judge.requests)

    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    models = manifest["models"]
    assert models["roles"] == {"reader": ["reader-srv"]}
    assert models["entries"]["reader-srv"] == {
        "model": "openai/reader-model",
        "endpoint": f"127.0.0.1:{reader.port}/v1",
        "sampling": {"repeat_penalty": 1.0},
        "output_mode": "json_schema",
        "timeout_s": 1.0,
    }
    assert models["entries"]["judge-srv"]["endpoint"] == f"127.0.0.1:{judge.port}/v1"
    assert models["entries"]["judge-srv"]["output_mode"] == "json_object"
    assert models["entries"]["judge-srv"]["api_key_env"] == "JUDGE_SERVER_KEY"
    assert all(h["authorization"] == f"Bearer {KEY}" for h in judge.headers)
    assert all(h["authorization"] == "Bearer not-needed" for h in reader.headers)
    for path in result.run_dir.rglob("*"):  # the key itself is nowhere in the run folder
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
    assert "not ok" not in capsys.readouterr().err


# mode → (status of every item, exit code, words of the first message on stderr)
FAULTS = {
    "rate_limit": ("model_error", ALL_FAILED_EXIT, "rate limited (HTTP 429)"),
    "server_error": ("model_error", ALL_FAILED_EXIT, "server error (HTTP 500): the model crashed"),
    "hang": ("model_error", ALL_FAILED_EXIT, "timed out after 1 s (timeout_s)"),
    "not_json": ("model_error", ALL_FAILED_EXIT, "invalid response from LLM endpoint"),
    "empty": ("unparsed", ALL_FAILED_EXIT, "nothing usable in the reply"),
    "length": ("truncated", ALL_FAILED_EXIT, "token limit"),
}


@pytest.mark.parametrize("mode", sorted(FAULTS))
def test_fault_modes_are_loud(tmp_path: Path, servers, capsys, mode: str) -> None:  # type: ignore[no-untyped-def]
    status, code, words = FAULTS[mode]
    reader = servers(default=mode, retry_after="0", hang_s=5)
    judge = servers()
    result = start_run(_config(tmp_path, reader, judge))
    rows = _rows(result.run_dir, "trajectories.jsonl")
    assert [r["status"] for r in rows] == [status] * N_ITEMS
    assert result.exit_code == code
    err = capsys.readouterr().err
    assert f"not ok: {N_ITEMS} of {N_ITEMS} item(s)" in err
    line = next(ln for ln in err.splitlines() if ln.strip().startswith(f"{status}: {N_ITEMS}"))
    assert words in line
    assert "every item failed in: full_doc (exit code 5)" in err


def test_prose_that_ignores_the_format_is_kept_as_the_answer(  # type: ignore[no-untyped-def]
    tmp_path: Path, servers, capsys
) -> None:
    reader = servers(default="prose")
    result = start_run(_config(tmp_path, reader, servers()))
    rows = _rows(result.run_dir, "trajectories.jsonl")
    assert [(r["status"], r["parse"]) for r in rows] == [("ok", "bare_text")] * N_ITEMS
    assert all(r["answer"] == PROSE and r["raw_output"] == PROSE for r in rows)
    assert result.exit_code == 0
    assert "not ok" not in capsys.readouterr().err


def test_transient_rate_limit_recovers(tmp_path: Path, servers) -> None:  # type: ignore[no-untyped-def]
    reader = servers("rate_limit", retry_after="0.2")
    result = start_run(_config(tmp_path, reader, servers()), log=None)
    assert result.exit_code == 0
    assert [r["status"] for r in _rows(result.run_dir, "trajectories.jsonl")] == ["ok"] * N_ITEMS


def test_failure_threshold(tmp_path: Path, servers) -> None:  # type: ignore[no-untyped-def]
    reader = servers("server_error", "server_error")  # the first item fails, the second is ok
    config = _config(tmp_path, reader, servers(), fail_threshold=0.25, concurrency=1)
    result = start_run(config, log=None)
    statuses = sorted(r["status"] for r in _rows(result.run_dir, "trajectories.jsonl"))
    assert statuses == ["model_error", "ok"]
    assert result.exit_code == THRESHOLD_EXIT


def test_dead_reader_with_a_warm_cache_is_a_miss(tmp_path: Path, servers) -> None:  # type: ignore[no-untyped-def]
    reader, judge = servers(), servers()
    assert start_run(_config(tmp_path, reader, judge), log=None).exit_code == 0
    again = start_run(_config(tmp_path, reader, judge), log=None)  # warm: nothing reaches it
    assert again.exit_code == 0 and len(reader.requests) == N_ITEMS

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    result = start_run(_config(tmp_path, dead, judge), log=None)
    rows = _rows(result.run_dir, "trajectories.jsonl")
    assert [r["status"] for r in rows] == ["model_error"] * N_ITEMS
    assert all("gave up after 2 attempt(s)" in r["errors"][0] for r in rows)
    assert result.exit_code == ALL_FAILED_EXIT
