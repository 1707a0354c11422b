"""``scanrag plan CONFIG``: per grid cell what a run would call, count and cut, before
anything is spent — against a real HTTP server on 127.0.0.1 that records every request and
receives nothing but token counts; then the run itself, whose calls match the plan."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.cli import main

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS / "llm", TESTS / "runner"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import runner_fakes as rf  # noqa: E402
from fake_openai import FakeOpenAIServer, tiny_synthetic  # noqa: E402

TOKENIZE = "POST /extras/tokenize/count"
MARGIN = 8  # the template margin per message the gateway adds to a server's count


def _config(root: Path, server: FakeOpenAIServer) -> Path:
    entry = {"model": "openai/fake-model", "api_base": server.api_base, "context_window": 4096}
    data = {
        "name": "planned",
        "datasets": [tiny_synthetic(3)],
        "strategies": [
            {"name": "full_doc", "params": {"output": "json", "max_tokens": 64}},
            {"name": "oracle_pages", "params": {"output": "json", "max_tokens": 64}},
        ],
        "models": {
            "agents": {"reader": "reader-srv"},
            "judges": {"default": "judge-srv"},
            "entries": {"reader-srv": entry, "judge-srv": {**entry, "max_tokens": 128}},
        },
        "runner": {
            "cache_dir": str(root / "cache"),
            "runs_dir": str(root / "runs"),
            "progress": False,
            "page_caps": {"max_pages": 3},  # the 10-page reports: full_doc degrades
        },
        "scoring": {"scorers": ["answer_rules", "answer"]},
    }
    path = root / "planned.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _sent_tokens(bodies: list[dict[str, Any]]) -> int:
    """Tokens of the prompts a server received, as its tokenizer counts them for planning."""
    total = 0
    for body in bodies:
        text = "\n".join(str(m["content"]) for m in body["messages"])
        total += len(text.split()) + MARGIN * len(body["messages"])
    return total


def test_plan_counts_what_the_run_then_does_and_calls_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(tokenize=True) as server:
        config = _config(tmp_path, server)
        assert main(["plan", str(config), "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        asked = list(server.paths)
        assert asked and set(asked) == {TOKENIZE}  # nothing but token counting
        assert not server.requests and not (tmp_path / "runs").exists()  # no call, no folder

        cells = {c["run_key"]: c for c in plan["cells"]}
        full, oracle = cells["full_doc"], cells["oracle_pages"]
        assert full["label"] == "full_doc ≤3p" and full["items"] == oracle["items"] == 3
        assert full["degraded"] == 3 and full["degraded_by_kind"] == {"page_cap": 3}
        assert full["gold_pages_dropped"] >= 1 and oracle["degraded"] == 0
        assert full["reader_calls"] == 3 and full["reader_calls_by_stage"] == {"reader": 3}
        assert full["reader_max_output_tokens"] == 3 * 64
        assert full["judge_calls"] == 3 and full["judge_max_output_tokens"] == 3 * 128
        assert full["usd_input"] is None and plan["prices"] == {
            "judge-srv": None,
            "reader-srv": None,
        }
        assert plan["token_counting"]["reader-srv"].startswith(
            "server tokenizer /extras/tokenize/count"
        )

        from scanrag.runner import start_run

        server.paths.clear()
        # the plan counts calls before the response cache: the run sends every one
        result = start_run(config, overrides=["runner.llm.cache=false"], log=None)
    summary = result.summary
    reader = [b for b in server.requests if b["max_tokens"] == 64]  # the judge's entry: 128
    judge = [b for b in server.requests if b["max_tokens"] == 128]
    assert len(reader) + len(judge) == len(server.requests)  # every call is one or the other
    assert len(reader) == sum(c["reader_calls"] for c in plan["cells"])
    assert len(judge) == sum(c["judge_calls"] for c in plan["cells"])
    # the reader's prompts are the ones the plan counted, with the counter the run uses
    assert _sent_tokens(reader) == sum(c["reader_input_tokens"] for c in plan["cells"])
    # a judge's prompt quotes the reader's answer, which the plan does not know
    planned_judge = sum(c["judge_input_tokens"] for c in plan["cells"])
    assert _sent_tokens(judge) == pytest.approx(planned_judge, rel=0.05)
    for key, cell in cells.items():
        assert summary["cells"][key]["degraded"] == cell["degraded"]
        assert summary["cells"][key]["gold_pages_dropped"] == cell["gold_pages_dropped"]


def test_plan_prints_a_table_per_cell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(tokenize=True) as server:
        config = _config(tmp_path, server)
        assert main(["plan", str(config), "--set", "runner.on_degraded=fail"]) == 0
    out = capsys.readouterr().out
    assert "plan of planned  (6 items; no model called, no run folder)" in out
    row = next(line for line in out.splitlines() if line.startswith("full_doc ≤3p"))
    assert "3 (3 page_cap)" in row and "3 degraded" in row  # they would fail before a call
    assert "runner.on_degraded: fail: the 3 degraded item(s) fail before any call" in out
    assert "price unknown: reader-srv" in out
    assert "tokens counted: reader-srv → server tokenizer" in out


def test_plan_of_a_dataset_file_with_known_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The four default strategies over a questions file (what the former
    benchmarks/degraded_count.py did), a scripted reader with a price: the cost is given."""
    rf.register_models()
    questions = rf.make_dataset(tmp_path)
    args = ["plan", "--dataset", str(questions), "--model", rf.MODEL_NAME, "--json"]
    assert main([*args, "--plugin", "runner_fakes", "--cache-dir", str(tmp_path / "c")]) == 0
    plan = json.loads(capsys.readouterr().out)
    keys = [c["run_key"] for c in plan["cells"]]
    assert keys == ["full_doc", "topk_rag+bm25", "agentic_rag+bm25", "oracle_pages"]
    assert all(c["items"] == 12 and c["reader_calls"] >= 12 for c in plan["cells"])
    assert plan["prices"][rf.MODEL_NAME] == [1e-5, 1e-5]
    full = plan["cells"][0]
    assert full["usd_input"] == pytest.approx(full["reader_input_tokens"] * 1e-5)
    assert full["usd_max"] == pytest.approx(
        (full["reader_input_tokens"] + full["reader_max_output_tokens"]) * 1e-5
    )


def test_prices_from_litellms_table_and_the_embedded_models() -> None:
    from scanrag.llm.gateway import LLMClient
    from scanrag.runner.plan_calls import model_price

    client = LLMClient()
    known = model_price(client, "openai/gpt-4o-mini")
    assert known is not None and 0 < known[0] < known[1]
    assert model_price(client, "local/qwen2.5-0.5b") == (0.0, 0.0)
    assert model_price(client, "hosted_vllm/my-own-finetune") is None


def test_a_config_that_cannot_run_is_refused_like_run(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "datasets": [], "strategies": [{"name": "nope"}]}))
    assert main(["plan", str(path)]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["plan"]) == 2
