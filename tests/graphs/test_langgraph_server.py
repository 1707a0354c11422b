"""LangGraph's own server (``langgraph dev``, the in-memory API that LangGraph Studio talks
to) serves the graphs of ``langgraph.json``: it lists them, gives their schemas and runs one
through its HTTP API with a JSON context. Needs ``langgraph-cli[inmem]`` (the dev extra)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.langgraph_server
pytest.importorskip("langgraph_api", reason="needs langgraph-cli[inmem] (the dev extra)")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from test_studio import CONFIG, studio_item  # noqa: E402

from tests.conftest import sized  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _call(url: str, body: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
    """One request to the server, waited for ``timeout`` (default: a minute, sized to the
    machine's load)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout or sized(60)) as reply:
        return json.loads(reply.read())


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _start(cli: str, log: Path) -> tuple[subprocess.Popen[bytes], str] | str:
    """``langgraph dev`` on a free port, once it answers: ``(process, base)``; or why it did
    not (it exited, or did not answer within a wait sized to the machine)."""
    port = _free_port()
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    command = [cli, "dev", "--no-browser", "--no-reload", "--allow-blocking"]
    command += [
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(REPO / "langgraph.json"),
    ]
    with log.open("wb") as out:  # from the repository root: langgraph.json's paths start there
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + sized(120)
    while True:
        try:
            if _call(f"{base}/ok", timeout=2).get("ok"):
                return process, base
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            _stop(process)
            return f"langgraph dev did not start:\n{log.read_text()[-3000:]}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` on 127.0.0.1 (a free port), stopped after the module; a start that
    fails is tried once more (a loaded machine)."""
    cli = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which(
        "langgraph"
    )
    if cli is None:
        pytest.skip("the langgraph command is not installed")
    state = REPO / ".langgraph_api"  # where the server keeps its runs (git-ignored)
    had_state = state.exists()
    folder = tmp_path_factory.mktemp("langgraph")
    try:
        started = _start(cli, folder / "server.log")
        if isinstance(started, str):
            started = _start(cli, folder / "server-again.log")
        if isinstance(started, str):
            pytest.fail(started)
        process, base = started
        try:
            yield base
        finally:
            _stop(process)
    finally:
        if not had_state:
            shutil.rmtree(state, ignore_errors=True)


def test_the_server_lists_every_graph_with_its_schemas(server: str) -> None:
    assistants = _call(f"{server}/assistants/search", {"limit": 50})
    by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
    assert set(by_graph) == set(CONFIG["graphs"])
    for graph_id, assistant in by_graph.items():
        schemas = _call(f"{server}/assistants/{assistant}/schemas")
        assert "trajectory" in schemas["input_schema"]["properties"], graph_id
        assert "trajectory" in schemas["output_schema"]["properties"], graph_id
        assert schemas["context_schema"]["title"] == "ItemContext", graph_id


def test_a_graph_runs_through_the_http_api(server: str, tmp_path: Path) -> None:
    start, context = studio_item(tmp_path)
    body = {"assistant_id": "oracle_pages", "input": start, "context": context}
    final = _call(f"{server}/runs/wait", body, timeout=sized(120))
    trajectory = final["trajectory"]
    assert trajectory["status"] == "ok", trajectory.get("errors")
    assert trajectory["answer"] == "30" and trajectory["pages"] == [2]
    assert [s["kind"] for s in trajectory["steps"]] == ["prepare", "select", "read"]


READER_PLUGIN = """
from scanrag.llm.scripted import ScriptedModel, register_scripted

REPLY = 'The total is 30 [page=2, doc_page="2", bbox=[0, 0, 1, 1]]. <answer>30</answer>'
register_scripted("readme-reader", ScriptedModel([REPLY] * 10))
"""


def _readme_example() -> str:
    import re

    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return next(b for b in blocks if "/runs/wait" in b)


def _pointed(code: str, **values: Any) -> str:
    """``code`` with its top-level settings (``server = ...``) set to ``values``; every
    other line runs as the README writes it."""
    import ast

    tree = ast.parse(code)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in values:
                node.value = ast.parse(repr(values[name]), mode="eval").body
                names.add(name)
    assert names == set(values), f"the README example lacks the settings {set(values) - names}"
    return ast.unparse(tree)


def test_the_readme_http_example_runs_a_samples_jsonl_line_with_params(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's example as written, pointed at this server, a run folder whose
    ``samples.jsonl`` a run wrote (boxes as lists, ``doc``/``evidence_pages``) and a scripted
    reader: the line is accepted as ``context.sample`` and ``params`` reach the graph."""
    import pymupdf

    from scanrag.rundir import RunDir
    from scanrag.schemas import BBox, Region, Sample

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    doc = pymupdf.open()
    for text in ("Introduction.", "The total is 30.", "The end.", "Appendix."):
        doc.new_page().insert_text((72, 72), text)
    doc.save(pdfs / "report.pdf")
    (tmp_path / "readme_reader.py").write_text(READER_PLUGIN, encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    region = Region(page=2, bbox=BBox(x1=0.1, y1=0.1, x2=0.6, y2=0.2), text="The total is 30.")
    sample = Sample(
        id="q1",
        doc_ids=["report.pdf"],
        question="What is the total?",
        answer="30",
        gold_pages=[2],
        gold_regions=[region],
    )
    RunDir(run).write_samples([sample])
    line = json.loads((run / "samples.jsonl").read_text().splitlines()[0])
    assert "doc_ids" not in line and isinstance(line["gold_regions"][0]["bbox"], list)
    item = {
        "model": "scripted/readme-reader",
        "pdf_dir": str(pdfs),
        "retriever": "bm25",
        "plugins": [str(tmp_path / "readme_reader.py")],
    }
    code = _pointed(_readme_example(), server=server, run=str(run), item=item)
    namespace: dict[str, Any] = {"__name__": "readme_http_example"}
    exec(compile(code, "README:http-example", "exec"), namespace)
    assert capsys.readouterr().out.strip() == "ok 30 [2]"
    trajectory = namespace["trajectory"]
    assert trajectory["doc_ids"] == ["report.pdf"]
    retrieve = next(s for s in trajectory["steps"] if s["kind"] == "retrieve")
    assert retrieve["data"]["k"] == 3  # the context's params built the graph


def test_configurable_params_beside_a_context_are_refused_by_the_server(
    server: str, tmp_path: Path
) -> None:
    """Why parameters travel in the context: the server refuses the older way."""
    import urllib.error

    start, context = studio_item(tmp_path)
    body = {
        "assistant_id": "topk_rag",
        "input": start,
        "context": context,
        "config": {"configurable": {"params": {"k": 3}}},
    }
    with pytest.raises(urllib.error.HTTPError) as refused:
        _call(f"{server}/runs/wait", body)
    assert "Cannot specify both configurable and context" in refused.value.read().decode()
