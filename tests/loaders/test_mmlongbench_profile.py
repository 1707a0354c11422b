"""The MMLongBench-Doc loader's ``profile`` option: the samples ask the scorer for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.datasets import DatasetError
from scanrag.loaders.mmlongbench import load_mmlongbench

ROW = {
    "doc_id": "d.pdf",
    "doc_type": "Report",
    "question": "How many?",
    "answer": "4",
    "evidence_pages": "[1]",
    "evidence_sources": "['Table']",
    "answer_format": "Int",
}


def test_the_profile_is_a_sample_field(tmp_path: Path) -> None:
    path = tmp_path / "samples.json"
    path.write_text(json.dumps([ROW]))
    plain = load_mmlongbench(path, tmp_path, validate=False).samples[0]
    assert "scoring_profile" not in plain.metadata
    lenient = load_mmlongbench(path, tmp_path, validate=False, profile="lenient").samples[0]
    assert lenient.metadata["scoring_profile"] == "lenient"
    with pytest.raises(DatasetError, match="profile must be one of official, lenient"):
        load_mmlongbench(path, tmp_path, validate=False, profile="paper")
