"""Config problems that only the runner can see are reported before a run folder exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import runner_fakes as rf
import yaml

from scanrag.config import config_from_dict
from scanrag.runner import SetupError, start_run
from scanrag.runner.preflight import preflight


def _config(root: Path, **sections):
    return config_from_dict(rf.make_config(root, **sections))


def test_a_good_config_passes(tmp_path: Path) -> None:
    preflight(_config(tmp_path))


def test_every_problem_is_listed_under_its_key_and_no_folder_is_made(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    config["retrievers"] = {
        "overlap": {"type": "fake_overlap", "params": {"depth": 3}},
        "bm25": {"params": {"k1": 1.2, "kay_one": 2}},
    }
    config["datasets"][0]["options"] = {"validat": False}
    config["datasets"].append(
        {"name": "gone", "path": str(tmp_path / "none.jsonl"), "pdf_dir": str(tmp_path / "nope")}
    )
    config["datasets"].append({"name": "syn", "synthetic": {"options": {"pages": 3}}})
    config["datasets"].append({"name": "short", "synthetic": {"options": {"min_pages": 8}}})
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    text = str(info.value)
    assert "retrievers.overlap.params: got an unexpected keyword argument 'depth'" in text
    assert "retrievers.bm25.params: got an unexpected keyword argument 'kay_one'" in text
    assert "accepted: k1, b, epsilon, tokenizer" in text
    assert "datasets.0.options: got an unexpected keyword argument 'validat'" in text
    assert f"datasets.1.path: {tmp_path / 'none.jsonl'} does not exist" in text
    assert f"datasets.1.pdf_dir: {tmp_path / 'nope'} is not a folder" in text
    assert "datasets.2.synthetic.options: got an unexpected keyword argument 'pages'" in text
    assert "datasets.3.synthetic: need 10 <= min_pages <= max_pages" in text
    assert not (tmp_path / "runs").exists()


def test_injected_arguments_are_not_config_errors(tmp_path: Path) -> None:
    preflight(_config(tmp_path, retrievers={"oracle": {}, "hybrid": {"params": {"k_rrf": 10}}}))


def test_retriever_typos_types_and_ranges_stop_the_run_before_its_folder(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    config["retrievers"] = {
        "overlap": {"type": "fake_overlap"},
        "bm25": {},
        "bge": {"type": "dense", "params": {"model": "BAAI/bge-small-en-v1.5", "chunk_token": 200}},
        "hybrid": {"params": {"retrievers": ["bm25", "bge", "bgee"], "k_rrf": -1, "depth": "x"}},
        "colpali": {"params": {"model": "vidore/colpali-v1.3", "max_visual_tokens": 64}},
    }
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    text = str(info.value)
    assert "retrievers.bge.params: got an unexpected keyword argument 'chunk_token'" in text
    assert "accepted: model, query_prefix" in text and "chunk_tokens" in text
    assert "retrievers.hybrid.params.depth: Input should be a valid integer, got 'x'" in text
    assert "retrievers.hybrid.params: need k_rrf > 0 and depth >= 1, got -1, 100" in text
    assert "retrievers.hybrid.params.retrievers.2: 'bgee' is neither a retriever alias" in text
    assert "retrievers.colpali.params: max_visual_tokens is not supported" in text
    assert not (tmp_path / "runs").exists()


def test_aliases_inside_a_composite_pass_and_cycles_do_not(tmp_path: Path) -> None:
    good = {
        "bm25": {},
        "bge": {"type": "dense", "params": {"model": "BAAI/bge-small-en-v1.5"}},
        "hybrid": {"params": {"retrievers": ["bm25", "bge"], "k_rrf": 60}},
        "with_oracle": {"type": "hybrid", "params": {"retrievers": ["hybrid", "oracle"]}},
    }
    preflight(_config(tmp_path, retrievers=good))
    looped = {
        "a": {"type": "hybrid", "params": {"retrievers": ["bm25", "b"]}},
        "b": {"type": "hybrid", "params": {"retrievers": ["a"]}},
    }
    with pytest.raises(SetupError, match="refer to each other in a cycle: a → b → a"):
        preflight(_config(tmp_path, retrievers=looped))


# -- datasets that cannot give the run anything ------------------------------------------------


def _dataset(root: Path, name: str, text: str, **spec: Any) -> dict[str, Any]:
    path = root / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return {"name": name, "path": str(path), "pdf_dir": str(root / "pdfs"), **spec}


def test_datasets_that_cannot_run_are_refused_with_their_keys(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    good = (tmp_path / "questions.jsonl").read_text(encoding="utf-8")
    no_question = "".join(json.dumps({"id": f"x{i}", "doc": "doc0.pdf"}) + "\n" for i in range(3))
    missing_pdfs = good.replace('"doc0.pdf"', '"gone0.pdf"').replace('"doc1.pdf"', '"gone1.pdf"')
    missing_pdfs = missing_pdfs.replace('"doc2.pdf"', '"gone2.pdf"').replace('"id": "q', '"id": "m')
    config["datasets"] = [
        _dataset(tmp_path, "empty", ""),
        _dataset(tmp_path, "blank", "\n  \n\n"),
        _dataset(tmp_path, "invalid", no_question),
        _dataset(tmp_path, "wrong_loader", good, loader="mmlongbench"),
        {**config["datasets"][0], "ids": ["q0-1", "nope", "zip"]},
        _dataset(tmp_path, "no_pdfs", missing_pdfs),
        _dataset(tmp_path, "no_tasks", good.replace('"id": "q', '"id": "t'), tasks=["verify"]),
        _dataset(tmp_path, "twin", good),
    ]
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    text = str(info.value)
    assert "datasets.0.path: " in text and "empty.jsonl holds no rows" in text
    assert "datasets.1.path: " in text and "blank.jsonl holds no rows" in text
    assert "datasets.2.loader: loader 'generic' dropped every one of the 3 rows" in text
    assert "row 0: missing field 'question'" in text
    assert "datasets.3.loader: loader 'mmlongbench' dropped every one of the 12 rows" in text
    assert "is it the right loader" in text
    assert "datasets.4.ids: 2 of the ids match no sample: 'nope', 'zip'" in text
    assert "datasets.5.pdf_dir: none of the 12 samples can run (missing PDF 'gone" in text
    assert "datasets.6.tasks: no sample left of 12 after the filters" in text
    assert "datasets.7: sample id 'q0-1' appears in datasets 'toy' and 'twin'" in text
    assert "'q0-2' appears" not in text  # the ids filter left only q0-1 in 'toy'
    assert len(text.splitlines()) == 1 + 8  # the heading, then one line per problem
    assert not (tmp_path / "runs").exists()


def test_an_unreadable_dataset_is_refused_before_the_folder(tmp_path: Path, capsys) -> None:
    from scanrag.cli import main

    config = rf.make_config(tmp_path)
    config["datasets"] = [_dataset(tmp_path, "array", '[{"id": 1}]')]
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "datasets.0: dataset 'array': " in err and "holds a JSON array" in err
    assert not (tmp_path / "runs").exists()


def test_preflight_loads_each_dataset_once_and_the_run_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.datasets import base

    calls: list[str] = []
    original = base.load_dataset

    def counting(loader: str, path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(path))
        return original(loader, path, *args, **kwargs)

    monkeypatch.setattr(base, "load_dataset", counting)
    monkeypatch.setattr("scanrag.datasets.load_dataset", counting)
    result = start_run(_config(tmp_path), llm=rf.MODEL, log=None)
    assert result.complete and calls == [str(tmp_path / "questions.jsonl")]
