"""Generator determinism, manifest, parameters and the ``scanrag synth`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from scanrag.cli import main as cli_main
from scanrag.datasets import Dataset
from scanrag.hashing import file_sha256
from scanrag.synth import GENERATOR_VERSION, generate_corpus

SMALL: dict[str, Any] = {"n_docs": 2, "min_pages": 10, "max_pages": 14, "questions_per_doc": 4}


def _fingerprint(out: Path) -> tuple[dict[str, str], bytes, bytes]:
    pdfs = {p.name: file_sha256(p) for p in sorted((out / "pdfs").glob("*.pdf"))}
    return pdfs, (out / "samples.jsonl").read_bytes(), (out / "manifest.json").read_bytes()


def test_same_seed_gives_byte_identical_corpus(tmp_path: Path) -> None:
    first = _fingerprint(generate_corpus(tmp_path / "a", seed=11, **SMALL))
    second = _fingerprint(generate_corpus(tmp_path / "b", seed=11, **SMALL))
    assert first == second
    assert len(first[0]) == 2


def test_different_seed_gives_a_different_corpus(tmp_path: Path) -> None:
    pdfs_a, samples_a, _ = _fingerprint(generate_corpus(tmp_path / "a", seed=1, **SMALL))
    pdfs_b, samples_b, _ = _fingerprint(generate_corpus(tmp_path / "b", seed=2, **SMALL))
    assert set(pdfs_a.values()).isdisjoint(pdfs_b.values())
    assert samples_a != samples_b


def test_manifest_describes_the_files(corpus_dir: Path, manifest: dict[str, Any]) -> None:
    assert manifest["version"] == GENERATOR_VERSION
    assert manifest["seed"] == 7
    assert manifest["params"] == {
        "n_docs": 4,
        "min_pages": 20,
        "max_pages": 32,
        "questions_per_doc": 8,
        "scan_docs": 1,
    }
    docs = manifest["documents"]
    assert len(docs) == 4
    for doc in docs:
        path = corpus_dir / "pdfs" / doc["file"]
        assert file_sha256(path) == doc["sha256"]
        with pymupdf.open(path) as pdf:
            assert pdf.page_count == doc["pages"] == len(doc["page_labels"])
            assert pdf.metadata["creationDate"] == "D:20240101000000Z"
        assert 20 <= doc["pages"] <= 32
    assert [d["scan"] for d in docs] == [False, False, False, True]
    assert docs[-1]["planted_errors"] == ["DHP", "CF"]
    samples = manifest["samples"]
    assert samples["sha256"] == file_sha256(corpus_dir / "samples.jsonl")
    assert samples["count"] == len((corpus_dir / "samples.jsonl").read_text().splitlines())


def test_sample_mix(corpus: Dataset) -> None:
    assert corpus.report.dropped == []
    assert len(corpus) == 4 * 8 + 2
    categories = {s.category for s in corpus.samples}
    assert categories == {
        "single_page_text",
        "single_page_table",
        "single_page_figure",
        "multi_page",
        "unanswerable",
        "DHP",
        "CF",
    }
    assert {s.task for s in corpus.samples} == {"qa", "error_detection"}
    assert len({s.id for s in corpus.samples}) == len(corpus)
    assert len({s.question for s in corpus.samples}) == len(corpus)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_docs": 0}, "n_docs"),
        ({"min_pages": 5}, "min_pages"),
        ({"min_pages": 30, "max_pages": 20}, "min_pages"),
        ({"questions_per_doc": -1}, "questions_per_doc"),
        ({"n_docs": 2, "scan_docs": 3}, "scan_docs"),
    ],
)
def test_bad_parameters_are_rejected(tmp_path: Path, params: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        generate_corpus(tmp_path, **params)
    assert not (tmp_path / "pdfs").exists()


def test_regenerating_removes_files_of_the_previous_corpus(tmp_path: Path) -> None:
    generate_corpus(tmp_path, seed=3, **SMALL)
    generate_corpus(tmp_path, seed=3, **{**SMALL, "n_docs": 1, "scan_docs": 0})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert sorted(p.name for p in (tmp_path / "pdfs").iterdir()) == [
        d["file"] for d in manifest["documents"]
    ]


def test_scan_and_question_counts(tmp_path: Path) -> None:
    generate_corpus(tmp_path, seed=5, n_docs=2, min_pages=10, max_pages=10,
                    questions_per_doc=0, scan_docs=2)  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert [r["category"] for r in rows] == ["DHP", "CF", "DHP", "CF"]


def test_cli_writes_a_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    argv = ["synth", str(out), "--seed", "4", "--docs", "1", "--min-pages", "10"]
    argv += ["--max-pages", "12", "--questions", "3", "--scan-docs", "0"]
    assert cli_main(argv) == 0
    printed = capsys.readouterr().out
    assert "wrote 1 PDFs" in printed and "3 samples" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 4 and manifest["params"]["questions_per_doc"] == 3
    assert cli_main(["synth", str(out), "--docs", "0"]) == 2
    assert "n_docs must be at least 1" in capsys.readouterr().err


def test_output_does_not_depend_on_hash_randomisation(tmp_path: Path) -> None:
    """Set iteration order changes with PYTHONHASHSEED; the corpus must not."""
    params = {**SMALL, "n_docs": 1, "scan_docs": 1}
    generate_corpus(tmp_path / "here", seed=9, **params)
    code = (
        "import sys; from synth import generate_corpus; "
        f"generate_corpus(sys.argv[1], seed=9, **{params!r})"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "there")], check=True, env=env)
    assert _fingerprint(tmp_path / "here") == _fingerprint(tmp_path / "there")
