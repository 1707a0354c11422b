"""The README stays true: its Python examples run and do what it says, its config example
validates, and the commands it lists exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TEXT, flags=re.DOTALL)


def _example(marker: str) -> dict:
    block = next(b for b in _blocks("python") if marker in b)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(block, f"README:{marker}", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def kit() -> SimpleNamespace:
    spec = importlib.util.spec_from_file_location(
        "_readme_agents_kit", Path(__file__).parent / "agents" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = ("make_document", "make_sample", "make_context", "ScriptedModel")
    return SimpleNamespace(**{name: getattr(module, name) for name in names})


def test_the_two_setup_commands_are_there() -> None:
    first = _blocks("bash")[0]
    assert "make demo" in first and "make test" in first
    assert "make test" in (README.parent / ".ci" / "run").read_text()


def test_the_retriever_example_works_and_round_trips(tmp_path: Path, kit) -> None:
    ns = _example("class KeywordIndex")
    from scanrag.registry import RETRIEVERS

    RETRIEVERS.register("readme_keyword")(ns["KeywordIndex"])
    try:
        from scanrag.retriever_specs import create_retriever

        retriever = create_retriever("readme_keyword", {"lowercase": True})
        doc = kit.make_document(num_pages=3, texts=["nothing", "Revenue REVENUE revenue", "rev"])
        retriever.add([doc])
        hits = retriever.search("revenue", 2)
        assert [(h.page, h.rank, h.score) for h in hits] == [(2, 1, 3.0), (1, 2, 0.0)]
        retriever.save(tmp_path / "kw")
        assert retriever.manifest()["retriever"] == "keyword"
        again = ns["KeywordIndex"].open(tmp_path / "kw")
        assert again.search("revenue", 2) == hits
    finally:
        RETRIEVERS.unregister("readme_keyword")


async def test_the_strategy_example_reads_the_first_three_pages(kit) -> None:
    ns = _example("class FirstPagesStrategy")
    doc = kit.make_document(num_pages=6)
    reply = 'It is 30 [page=2, doc_page="2", bbox=[0, 0, 1, 1]]. <answer>30</answer>'
    model = kit.ScriptedModel([reply])
    ctx = kit.make_context(model, [doc])
    trajectory = await ns["FirstPagesStrategy"]().run(kit.make_sample(), ctx)
    assert trajectory.status == "ok" and trajectory.answer == "30" and trajectory.pages == [2]
    prompt = model.requests[0].messages[-1].text
    assert "=== Page 3" in prompt and "=== Page 4" not in prompt


def test_the_scorer_example_scores_and_aggregates() -> None:
    ns = _example("class AnswerLengthScorer")
    from scanrag.evaluation.base import RowGroup, StatsOptions
    from scanrag.schemas import Sample, Trajectory

    scorer = ns["AnswerLengthScorer"]()
    sample = Sample(id="q", doc_ids=["d.pdf"], question="?", answer="a")
    rows = [
        scorer.compute(Trajectory(sample_id="q", strategy="s", answer=text), sample)
        for text in ("one two three", "one")
    ]
    assert [r.metrics["words"] for r in rows] == [3.0, 1.0]
    result = scorer.aggregate(rows, RowGroup("s", "s"), StatsOptions(n_resamples=0))
    assert result.metrics["words"].value == 2.0


def _keyword_plugin(folder: Path) -> Path:
    """The README's retriever example saved as the plugin file it describes."""
    code = next(b for b in _blocks("python") if "class KeywordIndex" in b)
    registration = re.search(r"Register it with `([^`]+)` \(from `([\w.]+)`\)", TEXT)
    assert registration is not None
    call, module = registration.groups()
    name = RETRIEVER_PLUGIN
    text = f"{code}\n\nfrom {module} import RETRIEVERS\n\n{call}\n"
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


RETRIEVER_PLUGIN = "my_keyword.py"


@pytest.fixture
def keyword_plugin(tmp_path: Path):
    import sys

    from scanrag.registry import RETRIEVERS

    path = _keyword_plugin(tmp_path)
    try:
        yield path
    finally:
        RETRIEVERS.unregister("keyword")
        sys.modules.pop(path.stem, None)


def test_the_config_example_validates(
    keyword_plugin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loaded from a file beside its plugin, started from another folder."""
    from scanrag.config import load_config

    block = next(b for b in _blocks("yaml") if "name: my-study" in b)
    assert f"plugins: [{RETRIEVER_PLUGIN}]" in block
    (tmp_path / "study.yaml").write_text(block, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(tmp_path / "study.yaml")
    keys = [cell.run_key for cell in config.cells()]
    assert "topk_rag+hybrid@reader=openai/gpt-4o-mini" in keys and len(keys) == 10
    assert config.plugins == [str(keyword_plugin)]
    assert config.retrievers["kw"].type == "keyword"
    assert (
        config.datasets[0].path == (tmp_path / "../shared/data/mmlb-dev/questions.jsonl").resolve()
    )


def test_the_decorator_registration_reaches_retrieve_eval(
    keyword_plugin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """What the README tells a newcomer: the class, the decorator call in a file, --plugin."""
    import json

    import pymupdf

    from scanrag.cli import main

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    doc = pymupdf.open()
    for text in ("Nothing here.", "Revenue grew by 12% in Europe.", "A galaxy cluster."):
        doc.new_page().insert_text((72, 72), text)
    doc.save(pdfs / "a.pdf")
    row = {"id": "1", "doc": "a.pdf", "question": "How much did revenue grow?", "answer": "12%"}
    (tmp_path / "q.jsonl").write_text(json.dumps({**row, "evidence_pages": [2]}) + "\n")
    monkeypatch.chdir(tmp_path)
    args = ["retrieve", "eval", "--plugin", RETRIEVER_PLUGIN, "--dataset", "q.jsonl"]
    args += ["--pdf-dir", "pdfs", "--retrievers", "keyword", "--k", "1", "--json"]
    assert main([*args, "--cache-dir", str(tmp_path / "cache")]) == 0
    result = json.loads(capsys.readouterr().out)["retrievers"]["keyword"]
    assert result["macro"]["recall@1"] == 1.0


def test_every_listed_command_exists() -> None:
    from scanrag.registry import COMMANDS

    listed = set(re.findall(r"\| `scanrag (\w+)", TEXT))
    assert listed and listed <= set(COMMANDS.names())


def test_the_loader_example_loads_a_csv_file(tmp_path: Path) -> None:
    import pymupdf

    ns = _example("def load_csv_qa")
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    doc = pymupdf.open()
    for _ in range(3):
        doc.new_page()
    doc.save(pdfs / "a.pdf")
    lines = [
        "pdf,question,answer,page,kind",
        "a.pdf,What is on page two?,x,2,Report",
        "a.pdf,And page nine?,y,9,Report",
        "../a.pdf,Outside?,z,1,Report",
        ",No document?,z,1,Report",
    ]
    (tmp_path / "questions.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = ns["load_csv_qa"](tmp_path)
    assert [s.gold_pages for s in dataset.samples] == [[2]]
    assert dataset.samples[0].id.startswith("csv-qa/")
    assert dataset.samples[0].metadata["doc_type"] == "Report"
    reasons = [d.reason for d in dataset.report.dropped]
    assert "page 9 outside 1..3" in reasons[0] and "outside the PDF folder" in reasons[1]
    assert "needs a pdf" in reasons[2]


def test_the_ray_cluster_example_validates() -> None:
    from scanrag.config.sections import RunnerSpec

    block = next(b for b in _blocks("yaml") if "executor: ray" in b and "address" in b)
    runner = RunnerSpec.model_validate(yaml.safe_load(block)["runner"])
    assert runner.executor == "ray" and runner.ray.address == "ray://head-node:10001"
