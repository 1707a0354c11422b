"""ScholScan items: error families, cross-paper items, oracle pages, negatives, validation."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import load_dataset
from scanrag.loaders.scholscan import load_scholscan
from scanrag.schemas.families import family_code

MakePdf = Callable[[Path, int], Path]

ITEMS: list[dict[str, Any]] = [
    {
        "id": "17",
        "question": "Assess whether the conclusions follow from the reported statistics.",
        "explanation": "The Discussion (p. 7) claims a causal effect; Table 2 (p. 5) is "
        "correlational.",
        "Error Type": "G",
        "Type": "Intra-Generate",
        "source": "origin_pdf/paper_a.pdf",
        "rag_pages": [5, 7],
        "images": ["images/paper_a/paper_a_5.png"],
    },
    {
        "id": 18,
        "question": "Scan the errors in cited reference Chen et al. (2021).",
        "explanation": "P (p. 2) misreports the cited result; S (p. 3, Table 1) disagrees.",
        "Error Type": "RCA (Referential and Citation Alignment)",
        "Type": "Inter-Generate",
        "source": "paper_a.pdf",
        "evidence_file": "origin_pdf/cited_b.pdf",
        "rag_pages": ["2"],
    },
    {
        "id": "19",
        "question": "Determine whether the sample size supports the population claim.",
        "explanation": "Only one substrain is studied (p. 4) yet results are generalized (p. 6).",
        "Error Type": "Sampling & Generalizability",
        "Type": "Intra-Generate",
        "source": "paper_a",
        "modify": [
            {"location": "p. 4, 'a single substrain'", "old_str": "x", "new_str": "y"},
            {"location": "Page 6 near 'all patients'", "old_str": "x", "new_str": "y"},
        ],
    },
    {
        "id": "20",
        "question": "Check the units in the Methods for inconsistencies.",
        "explanation": "No inconsistency: every quantity uses SI units throughout.",
        "Type": "Intra-Sample",
        "source": "paper_a.pdf",
        "has_error": False,
    },
]


@pytest.fixture
def corpus(tmp_path: Path, pdf_factory: MakePdf) -> Path:
    pdf_factory(tmp_path / "pdfs" / "paper_a.pdf", 8)
    pdf_factory(tmp_path / "pdfs" / "cited_b.pdf", 4)
    path = tmp_path / "final_image_rag.json"
    path.write_text(json.dumps(ITEMS), encoding="utf-8")
    return path


def test_items_become_error_detection_samples(corpus: Path) -> None:
    dataset = load_dataset("scholscan", corpus.parent)
    assert dataset.report.summary() == "read 4, kept 4, dropped 0"
    within, cross, edited, negative = dataset.samples
    assert within.task == "error_detection" and within.doc_ids == ["paper_a.pdf"]
    assert within.gold_pages == [5, 7] and within.category == "IC"
    assert within.gold_errors[0].family == "IC"
    assert within.gold_errors[0].pages == [5, 7]
    assert within.gold_explanation is not None and "causal" in within.gold_explanation
    assert within.metadata["source_type"] == "Intra-Generate"
    assert within.metadata["error_type_raw"] == "G"
    assert within.metadata["images"] == ["images/paper_a/paper_a_5.png"]
    assert cross.id == "18" and cross.cited_doc_ids == ["cited_b.pdf"]
    assert cross.gold_pages == [2] and cross.category == "RCA"
    assert edited.gold_pages == [4, 6] and edited.category == "SG"
    assert len(edited.metadata["edits"]) == 2
    assert negative.gold_errors == [] and negative.metadata["has_error"] is False
    assert within.metadata["num_pages"] == 8


def test_the_scholscan_scorer_reads_the_loaded_fields(corpus: Path) -> None:
    from scanrag.evaluation.scholscan.scorer import gold_explanation, gold_has_error, sample_family

    dataset = load_scholscan(corpus)
    within, cross, _, negative = dataset.samples
    assert gold_has_error(within) and not gold_has_error(negative)
    assert sample_family(within) == "IC" and sample_family(cross) == "RCA"
    assert "causal" in gold_explanation(within)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("A", "RQD"),
        ("i", "LE"),
        ("H. Referential & Citation Alignment", "RCA"),
        ("DHP", "DHP"),
        ("Inference & Conclusions", "IC"),
        ("Referential and Citation Alignment", "RCA"),
        ("Error (Computation & Formulae)", "CF"),
        ("Visualization & Presentation Bias", None),
        ("", None),
    ],
)
def test_family_codes(raw: str, code: str | None) -> None:
    assert family_code(raw) == code


def test_validation_and_bad_items(tmp_path: Path, pdf_factory: MakePdf) -> None:
    pdf_factory(tmp_path / "pdfs" / "paper_a.pdf", 3)
    rows = [
        {**ITEMS[0], "rag_pages": [2]},
        ITEMS[0] | {"id": "far"},  # pages 5, 7 of a 3-page paper
        ITEMS[1],  # the cited paper is missing
        {**ITEMS[0], "id": "zero", "rag_pages": [0]},
        {**ITEMS[0], "id": "nosrc", "source": None},
        {**ITEMS[0], "id": "noq", "question": ""},
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = load_scholscan(path)
    assert [s.id for s in dataset.samples] == ["17"]
    reasons = {d.id: d.reason for d in dataset.report.dropped}
    assert "page 5 outside 1..3" in reasons["far"]
    assert "missing PDF 'cited_b.pdf'" in reasons["18"]
    assert "1-based" in reasons["zero"]
    assert "source" in reasons["nosrc"]
    assert "question" in reasons["noq"]
