"""CLI test fixtures: a finished run (real runner, scripted models) made by the report tests'
``report_fixtures`` (``tests/evaluation/report``), for the commands that read one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPORT_TESTS = Path(__file__).resolve().parents[1] / "report"
if str(REPORT_TESTS) not in sys.path:
    sys.path.insert(0, str(REPORT_TESTS))

import report_fixtures  # noqa: E402

from scanrag.schemas import BBox, Citation, Fact, Region, Sample, Trajectory  # noqa: E402


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixtures.make_run(tmp_path_factory.mktemp("report-run"))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run folder ``scanrag run`` did not write: three items of one cell, each citing its
    gold box and answering 12."""
    import pymupdf

    from scanrag.datasets import write_generic

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    doc = pymupdf.open()
    for _ in range(2):
        doc.new_page(width=200, height=300).insert_text((20, 40), "Revenue was 12.")
    doc.save(pdfs / "doc.pdf")
    box = BBox.from_list([0.1, 0.1, 0.5, 0.2])
    samples = [
        Sample(
            id=f"q{i}",
            doc_ids=["doc.pdf"],
            question="Revenue?",
            answer="12",
            answer_format="Int",
            gold_pages=[2],
            gold_regions=[Region(page=2, bbox=box)],
            gold_facts=[Fact(page=2, text="Revenue was 12.")],
        )
        for i in range(3)
    ]
    run = tmp_path / "run"
    run.mkdir()
    write_generic(samples, run / "samples.jsonl")
    (run / "datasets.json").write_text(json.dumps([{"name": "t", "pdf_dir": str(pdfs)}]))
    with open(run / "trajectories.jsonl", "w") as fh:
        for s in samples:
            t = Trajectory(
                sample_id=s.id,
                strategy="topk",
                run_key="topk-bm25",
                pages=[2],
                regions=[Region(page=2, bbox=box)],
                citations=[Citation(sentence="Revenue was 12.", page=2, bbox=box.as_list())],
                answer="12",
            )
            fh.write(t.model_dump_json() + "\n")
    (run / "summary.json").write_text(json.dumps({"name": "exp", "cells": {}}))
    return run
