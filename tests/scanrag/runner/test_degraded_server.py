"""A small model with a small context on llama.cpp's OpenAI server, and full_doc over a long
PDF: every reduced item is ``degraded`` with what was dropped recorded, and every output shows
it (summary, stderr, report, exports); ``runner.on_degraded: fail`` turns them into errors.

The server (``python -m llama_cpp.server``, SmolLM2-135M, a 2,048-token window) is started and
stopped by the test (marker ``llamaserver``). llama-cpp-python's server does not report its
window, so the model entry names it (``context_window``); prompts are counted with the
server's own tokenizer (``/extras/tokenize/count``) and planned before any call, so no call
is refused.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.runner import start_run
from tests.conftest import sized

pytestmark = [pytest.mark.llamaserver, pytest.mark.model]
pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python[server]")

MODEL = "smollm2-135m"
WINDOW = 2048
PAGES = 80  # beyond the default page cap of 60


@pytest.fixture(scope="module")
def api_base(bench_script: Any) -> Iterator[str]:
    from scanrag.llm.local_models import get_local_spec

    try:
        get_local_spec(MODEL).locate()
    except Exception as exc:  # the weights package is not installed
        pytest.skip(f"no {MODEL} weights: {exc}")
    server = bench_script("server_parity").llama_server
    # on a loaded machine: waits sized to it, a second start, a first call made before the test
    with server(MODEL, n_ctx=WINDOW, startup_s=sized(180), attempts=2, warm_up_s=sized(60)) as base:
        yield base


def _long_pdf(path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, PAGES + 1):
        page = doc.new_page()
        text = (
            f"Inventory sheet {n}. Warehouse {n} holds {n * 7} crates of copper fittings. "
            "The crates are counted every month by two clerks and the count is signed by the "
            "site manager before it is filed with the regional office."
        )
        page.insert_textbox(pymupdf.Rect(50, 60, 550, 400), text, fontsize=11)
    doc.save(path)


def _config(tmp_path: Path, api_base: str) -> Path:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    _long_pdf(pdfs / "inventory.pdf")
    rows = [
        {
            "id": "far",
            "doc": "inventory.pdf",
            "question": "How many crates does warehouse 75 hold?",
            "answer": "525",
            "evidence_pages": [75],
        },
        {
            "id": "near",
            "doc": "inventory.pdf",
            "question": "How many crates does warehouse 2 hold?",
            "answer": "14",
            "evidence_pages": [2],
        },
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    entry = {
        "model": f"openai/{MODEL}",
        "name": "small-server",
        "api_base": api_base,
        "context_window": WINDOW,
        "extra_body": {"repeat_penalty": 1.0},
        # one call per item and no retry (max_retries: 0 below), so the call gets the time a
        # 2,000-token prompt needs on this machine now: seconds idle, minutes at load 16
        "timeout_s": sized(120),
    }
    config = {
        "name": "small-context",
        "datasets": [{"name": "inv", "path": str(questions), "pdf_dir": str(pdfs)}],
        "strategies": [{"name": "full_doc", "params": {"max_tokens": 48}}],
        "models": {"agents": {"reader": entry}},
        "runner": {
            "cache_dir": str(tmp_path / "cache"),
            "runs_dir": str(tmp_path / "runs"),
            "concurrency": 1,
            "progress": False,
            "llm": {"cache": False, "max_retries": 0},
        },
        "scoring": {"scorers": ["pages", "answer_rules"], "resamples": 0},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "trajectories.jsonl").read_text().splitlines()
    return {row["sample_id"]: row for row in map(json.loads, lines)}


def test_full_doc_on_a_small_context_is_degraded_everywhere(api_base: str, tmp_path: Path) -> None:
    from scanrag.evaluation.report import build_report
    from scanrag.evaluation.report.export import export_runs

    config = _config(tmp_path, api_base)
    lines: list[str] = []
    result = start_run(config, log=lines.append)
    rows = _rows(result.run_dir)
    for row in rows.values():
        # a 135M model's reply may be cut or unreadable; the item itself ran to the end
        assert row["status"] in ("ok", "truncated", "unparsed") and row["degraded"] is True
        calls = row["calls"]
        assert len(calls) == 1 and calls[0]["error"] is None  # planned: no refused call
        by_kind = {r["kind"]: r for r in row["reductions"]}
        assert by_kind["page_cap"]["pages_dropped"] == list(range(61, PAGES + 1))
        assert by_kind["page_cap"]["cause"] == "runner.page_caps.max_pages=60"
        context = by_kind["context"]
        assert context["pages_dropped"] and context["limit"] == WINDOW
        assert "context window of 2048 tokens (model entry context_window)" in context["cause"]
        plan = next(s["data"] for s in row["steps"] if s["kind"] == "fallback")
        assert plan["trigger"] == "planned"
        assert plan["count_method"].startswith("server tokenizer /extras/tokenize/count")
        assert calls[0]["usage"]["prompt_tokens"] + 48 <= WINDOW
    assert rows["far"]["gold_pages_dropped"] == [75]
    assert rows["near"]["gold_pages_dropped"] == []  # page 2 was shown, cut

    cell = result.summary["cells"]["full_doc"]
    assert cell["label"] == "full_doc ≤60p"
    assert (cell["degraded"], cell["gold_pages_dropped"]) == (2, 1)
    assert cell["by_kind"] == {"context": 2, "page_cap": 2}
    text = "\n".join(lines)
    assert "degraded: 2 of 2 item(s)" in text and "1 lost gold evidence pages" in text
    assert "full_doc: 2 of 2 (2 context, 2 page_cap)" in text

    index = build_report([result.run_dir], tmp_path / "report")
    html = index.read_text()
    assert "full_doc ≤60p" in html and 'data-degraded="1"' in html and "◐" in html
    long_csv, wide_csv = export_runs([result.run_dir], tmp_path / "exports")
    items = [r for r in csv.DictReader(long_csv.open()) if r["scorer"] == "trajectory"]
    assert {r["degraded"] for r in items} == {"1"}
    assert {r["sample_id"]: r["gold_pages_dropped"] for r in items if r["metric"] == "calls"} == {
        "far": "[75]",
        "near": "[]",
    }
    [wide] = list(csv.DictReader(wide_csv.open()))
    assert (wide["n_degraded"], wide["n_gold_pages_dropped"]) == ("2", "1")

    failing: list[str] = []
    strict = start_run(config, overrides=["runner.on_degraded=fail"], log=failing.append)
    for row in _rows(strict.run_dir).values():
        assert row["status"] == "degraded" and row["calls"] == []  # never sent reduced
        assert "runner.on_degraded: fail" in row["errors"][0]
    assert strict.summary["cells"]["full_doc"]["status"] == {"degraded": 2}
    assert strict.exit_code == 5  # every item of the cell failed
    assert any("degraded: 2" in line for line in failing)
