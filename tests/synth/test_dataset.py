"""The ``synthetic`` loader: generate on demand, reuse, detect tampering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.datasets import DatasetError, load_dataset
from scanrag.synth.dataset import load_synthetic, verify_corpus

PARAMS = {"seed": 2, "n_docs": 1, "min_pages": 10, "max_pages": 12, "questions_per_doc": 3}


def test_generates_then_reuses(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    first = load_dataset("synthetic", out, **PARAMS)
    assert first.loader == "synthetic" and first.name == "corpus"
    assert first.report.rows_kept == 3 + 2  # the single document is a scan document
    stamp = (out / "manifest.json").stat().st_mtime_ns
    again = load_synthetic(out, **PARAMS)  # same parameters: nothing regenerated
    assert (out / "manifest.json").stat().st_mtime_ns == stamp
    assert again.samples == first.samples
    plain = load_synthetic(out)  # no parameters: whatever is there
    assert plain.samples == first.samples


def test_other_parameters_regenerate(tmp_path: Path) -> None:
    load_synthetic(tmp_path, **PARAMS)
    other = load_synthetic(tmp_path, **{**PARAMS, "seed": 3})
    assert json.loads((tmp_path / "manifest.json").read_text())["seed"] == 3
    assert all(s.id.startswith("synth-s3-") for s in other.samples)


def test_modified_files_are_detected(tmp_path: Path) -> None:
    load_synthetic(tmp_path, **PARAMS)
    pdf = next((tmp_path / "pdfs").glob("*.pdf"))
    pdf.write_bytes(pdf.read_bytes() + b"\n% edited\n")
    assert verify_corpus(tmp_path) == [str(pdf)]
    with pytest.raises(DatasetError, match="modified"):
        load_synthetic(tmp_path)
    repaired = load_synthetic(tmp_path, regenerate=True, **PARAMS)
    assert verify_corpus(tmp_path) == [] and len(repaired) == 5


def test_refuses_to_overwrite_a_foreign_dataset(tmp_path: Path) -> None:
    (tmp_path / "samples.jsonl").write_text('{"id": "mine"}\n')
    with pytest.raises(DatasetError, match="not a generated corpus"):
        load_synthetic(tmp_path, **PARAMS)
    assert (tmp_path / "samples.jsonl").read_text() == '{"id": "mine"}\n'


def test_unknown_parameter_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="n_pages"):
        load_synthetic(tmp_path, n_pages=3)
