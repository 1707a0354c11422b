"""Config problems that only the runner can see are reported before a run folder exists."""

from __future__ import annotations

from pathlib import Path

import pytest
import runner_fakes as rf

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
