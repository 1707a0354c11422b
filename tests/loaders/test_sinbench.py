"""SIN-Bench task files: chains with <xN> anchors, the four tasks, folders and validation."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import DatasetError, load_dataset
from scanrag.loaders.sinbench import SUMMARY_QUESTION, load_sinbench

SAMPLE_FILE = "sin-bench_sample.jsonl"


def _public_rows(formats_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (formats_dir / SAMPLE_FILE).read_text().splitlines()]


def test_public_rows_become_chains_per_task(formats_dir: Path) -> None:
    dataset = load_sinbench(formats_dir / SAMPLE_FILE, validate=False)
    assert dataset.report.summary() == "read 16, kept 16, dropped 0"
    assert Counter(s.task for s in dataset.samples) == {
        "find": 4,
        "chain_qa": 4,
        "summary": 4,
        "verify": 4,
    }
    find = dataset.by_id("sinbench/find-4")
    assert find.doc_ids == ["1711.06655.pdf"]
    assert [p.anchor for p in find.gold_chain] == ["<x3>", "<x2>", "<x1>"]
    assert find.gold_chain[0].text.startswith("Three distinct Gaussians")
    assert find.gold_chain[0].page is None
    assert find.metadata["image_dir"] == "content_image/1711.06655"
    qa = dataset.by_id("sinbench/chain_qa-4")
    assert qa.answer is not None and qa.answer.startswith("Yes")
    summary = dataset.by_id("sinbench/summary-1")
    assert summary.question == SUMMARY_QUESTION and len(summary.gold_chain) == 5
    verdicts = {s.id: s.metadata["verdict"] for s in dataset.samples if s.task == "verify"}
    assert verdicts["sinbench/verify-3"] is False
    assert sum(verdicts.values()) == 3


def test_anchors_are_readable_by_the_sinbench_scorer(formats_dir: Path) -> None:
    from scanrag.evaluation.sinbench.metrics import anchor_keys
    from scanrag.evaluation.sinbench.scorer import gold_verdict

    dataset = load_sinbench(formats_dir / SAMPLE_FILE, validate=False)
    for sample in dataset.samples:
        assert all(anchor_keys(pair.anchor) for pair in sample.gold_chain)
        if sample.task == "verify":
            assert gold_verdict(sample) is sample.metadata["verdict"]


def _split_into_task_files(formats_dir: Path, folder: Path) -> None:
    folder.mkdir(parents=True)
    for row in _public_rows(formats_dir):
        with open(folder / f"{row['task']}.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


def test_a_folder_of_task_files_and_task_selection(formats_dir: Path, tmp_path: Path) -> None:
    _split_into_task_files(formats_dir, tmp_path / "data" / "task")
    everything = load_dataset("sinbench", tmp_path / "data", validate=False)
    assert len(everything) == 16 and everything.loader == "sinbench"
    some = load_sinbench(tmp_path / "data" / "task", validate=False, tasks=["find", "VER"])
    assert Counter(s.task for s in some.samples) == {"find": 4, "verify": 4}
    assert some.report.rows_read == 8
    with pytest.raises(DatasetError, match="unknown SIN-Bench task"):
        load_sinbench(tmp_path / "data", validate=False, tasks=["MAP"])
    with pytest.raises(DatasetError, match="holds none of"):
        load_sinbench(tmp_path, validate=False)


def test_validation_needs_the_papers_as_pdfs(
    formats_dir: Path, tmp_path: Path, pdf_factory: Callable[[Path, int], Path]
) -> None:
    pdf_factory(tmp_path / "pdfs" / "1711.06655.pdf", 6)
    dataset = load_sinbench(formats_dir / SAMPLE_FILE, tmp_path / "pdfs")
    assert sorted(s.id for s in dataset.samples) == ["sinbench/chain_qa-4", "sinbench/find-4"]
    assert dataset.samples[0].metadata["num_pages"] == 6
    assert len(dataset.report.dropped) == 14
    assert all("missing PDF" in d.reason for d in dataset.report.dropped)


def test_bad_rows_are_dropped_with_reasons(tmp_path: Path) -> None:
    base = {"task": "FIND", "paper_id": "p1", "question": "q?"}
    rows = [
        {**base, "task_id": 1, "evidence": [{"image": "<x1>", "text": "a"}]},
        {**base, "task_id": 2, "evidence": []},
        {**base, "task_id": 3, "evidence": [{"text": "no anchor"}]},
        {**base, "task_id": 4, "task": "MAP", "evidence": [{"image": "<x1>"}]},
        {**base, "task_id": 5, "task": "VER", "answer": "maybe", "evidence": []},
        {**base, "task_id": 6, "paper_id": None, "evidence": [{"image": "<x1>"}]},
        {**base, "task_id": 7, "evidence": json.dumps([{"image": ["<x1>", "<x2>"]}])},
    ]
    path = tmp_path / "FIND.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = load_sinbench(path, validate=False)
    assert [s.id for s in dataset.samples] == ["sinbench/find-1", "sinbench/find-7"]
    assert dataset.samples[1].gold_chain[0].anchor == "<x1>, <x2>"
    reasons = {d.id: d.reason for d in dataset.report.dropped}
    assert "no evidence chain" in reasons["2"]
    assert "no image anchor" in reasons["3"]
    assert "not one of" in reasons["4"]
    assert "True or False" in reasons["5"]
    assert "paper_id" in reasons["6"]
