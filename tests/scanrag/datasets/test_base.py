"""Dataset containers, PDF-backed validation and page counting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scanrag.datasets import Dataset, DatasetError, LoadReport, page_count, validate_against_pdfs
from scanrag.datasets.base import _cached_page_count
from scanrag.schemas import BBox, EvidencePair, GoldError, Region, Sample


def _sample(sid: str, doc: str = "a.pdf", **fields: object) -> Sample:
    return Sample(id=sid, doc_ids=[doc], question="q?", **fields)  # type: ignore[arg-type]


def test_validation_checks_every_kind_of_page(pdf_dir: Path) -> None:
    box = BBox.from_list([0, 0, 1, 1])
    samples = [
        _sample("ok", gold_pages=[1, 5]),
        _sample("chain", gold_chain=[EvidencePair(anchor="Fig. 1", page=6)]),
        _sample("loc", gold_errors=[GoldError(locations=[Region(page=9, bbox=box)])]),
        _sample("other-doc", gold_regions=[Region(page=4, bbox=box, doc_id="b.pdf")]),
        _sample("cited", cited_doc_ids=["b.pdf"], gold_pages=[5]),
    ]
    kept, dropped = validate_against_pdfs(samples, pdf_dir, rows=[10, 11, 12, 13, 14])
    assert [s.id for s in kept] == ["ok", "cited"]
    assert [(d.row, d.id) for d in dropped] == [(11, "chain"), (12, "loc"), (13, "other-doc")]
    assert "gold chain item 0 page 6 outside 1..5 of 'a.pdf'" in dropped[0].reason
    assert "gold error 0 location 0 page 9" in dropped[1].reason
    assert "outside 1..3 of 'b.pdf'" in dropped[2].reason


def test_rows_must_match_samples(pdf_dir: Path) -> None:
    with pytest.raises(ValueError, match="rows"):
        validate_against_pdfs([_sample("a")], pdf_dir, rows=[1, 2])


def test_zero_page_and_encrypted_pdfs_are_reported(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page()
    doc.save(
        tmp_path / "locked.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="u",
        owner_pw="o",
    )
    kept, dropped = validate_against_pdfs([_sample("l", "locked.pdf")], tmp_path)
    assert not kept and "encrypted" in dropped[0].reason


def test_page_count_is_cached_per_file_version(
    tmp_path: Path, pdf_factory: Callable[[Path, int], Path]
) -> None:
    make_pdf = pdf_factory
    path = make_pdf(tmp_path / "c.pdf", 4)
    _cached_page_count.cache_clear()
    assert page_count(path) == 4
    assert page_count(path) == 4
    assert _cached_page_count.cache_info().hits == 1
    make_pdf(path, 6)  # rewritten: size/mtime change, so it is counted again
    assert page_count(path) == 6
    with pytest.raises(DatasetError, match="cannot read"):
        page_count(tmp_path / "missing.pdf")


def test_dataset_helpers(pdf_dir: Path) -> None:
    samples = [_sample("x", cited_doc_ids=["b.pdf"]), _sample("y", "b.pdf")]
    dataset = Dataset(name="d", samples=samples, pdf_dir=pdf_dir, report=LoadReport())
    assert len(dataset) == 2
    assert dataset.doc_ids() == ["a.pdf", "b.pdf"]
    assert dataset.by_id("y").primary_doc == "b.pdf"
    assert dataset.pdf_path("a.pdf") == pdf_dir / "a.pdf"
    with pytest.raises(KeyError, match="no sample 'z'"):
        dataset.by_id("z")
    again = Dataset.model_validate_json(dataset.model_dump_json())
    assert again == dataset
