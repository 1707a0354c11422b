"""Every loader gives the breakdown fields one type (doc_type a string, evidence_sources a list
of strings) and stable ids where the benchmark has none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import Dataset, breakdown, load_generic
from scanrag.datasets.fields import normalize_metadata, source_list
from scanrag.loaders.financebench import doc_type, load_financebench
from scanrag.loaders.mmlongbench import load_mmlongbench
from scanrag.loaders.sinbench import load_sinbench


@pytest.mark.parametrize(
    ("value", "listed"),
    [
        ("['Chart', 'Table']", ["Chart", "Table"]),
        ('["Chart"]', ["Chart"]),
        ("Chart", ["Chart"]),
        (["Table", " "], ["Table"]),
        ("[]", []),
        ("", []),
        ("[broken", ["[broken"]),
        (None, None),
    ],
)
def test_source_lists(value: Any, listed: list[str] | None) -> None:
    assert source_list(value) == listed


def test_metadata_types_are_normalized() -> None:
    meta = normalize_metadata({"evidence_sources": "['Chart']", "doc_type": 10, "x": 1})
    assert meta == {"evidence_sources": ["Chart"], "doc_type": "10", "x": 1}
    assert normalize_metadata({"evidence_sources": None, "doc_type": " "}) == {}


def _loaded(formats_dir: Path, mmlb_dir: Path) -> dict[str, Dataset]:
    return {
        "generic": load_generic(mmlb_dir / "questions.jsonl", validate=False),
        "mmlongbench": load_mmlongbench(
            formats_dir / "mmlongbench-doc_samples_sample.json", validate=False
        ),
        "financebench": load_financebench(
            formats_dir / "financebench_sample.jsonl", validate=False
        ),
        "sinbench": load_sinbench(formats_dir / "sin-bench_sample.jsonl", validate=False),
    }


def test_one_type_per_breakdown_field_across_loaders(formats_dir: Path, mmlb_dir: Path) -> None:
    for name, dataset in _loaded(formats_dir, mmlb_dir).items():
        for sample in dataset.samples:
            fields = breakdown(sample)
            assert fields["doc_type"] is None or isinstance(fields["doc_type"], str), name
            assert all(isinstance(s, str) for s in fields["evidence_sources"]), name
            assert fields["evidence_pages"] == len(sample.gold_pages), name
            if "evidence_sources" in sample.metadata:
                assert isinstance(sample.metadata["evidence_sources"], list), name
    loaded = _loaded(formats_dir, mmlb_dir)
    generic = {s.question: s for s in loaded["generic"].samples}
    for sample in loaded["mmlongbench"].samples:  # the same rows, read by two loaders
        twin = generic[sample.question]
        assert breakdown(sample) == breakdown(twin)
    assert breakdown(loaded["mmlongbench"].samples[1]) == {
        "doc_type": "Tutorial/Workshop",
        "evidence_sources": ["Chart"],
        "answer_format": "Float",
        "evidence_pages": 1,
    }
    assert {breakdown(s)["doc_type"] for s in loaded["financebench"].samples} <= {
        "10K",
        "10Q",
        "8K",
    }


@pytest.mark.parametrize(
    ("name", "kind"),
    [("3M_2023Q2_10Q", "10Q"), ("ADOBE_2015_10K", "10K"), ("X_2022_8K", "8K"), ("odd", None)],
)
def test_financebench_filing_types(name: str, kind: str | None) -> None:
    assert doc_type(name) == kind


def test_sinbench_rows_without_task_id_get_content_ids(formats_dir: Path, tmp_path: Path) -> None:
    rows = [
        json.loads(line)
        for line in (formats_dir / "sin-bench_sample.jsonl").read_text().splitlines()
    ]
    find = [r for r in rows if r["task"] == "FIND"]
    for row in find:
        row.pop("task_id")
    first = tmp_path / "a.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in find), encoding="utf-8")
    second = tmp_path / "b.jsonl"
    second.write_text("".join(json.dumps(r) + "\n" for r in find[::-1]), encoding="utf-8")
    ids = [s.id for s in load_sinbench(first, validate=False).samples]
    again = [s.id for s in load_sinbench(second, validate=False).samples]
    assert sorted(ids) == sorted(again) and len(set(ids)) == len(find)
    assert all(i.startswith("sinbench/find-") and len(i) == len("sinbench/find-") + 12 for i in ids)
