"""Gold evidence is exact: every box lies on what the generator drew, every value is there."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from rank_bm25 import BM25Okapi

from scanrag.datasets import Dataset
from scanrag.schemas import BBox, Sample

Word = tuple[float, float, float, float, str]


@functools.lru_cache(maxsize=64)
def _page_words(path: str, number: int) -> tuple[tuple[Word, ...], float, float, int]:
    with pymupdf.open(path) as doc:
        page = doc[number - 1]
        w, h = page.rect.width, page.rect.height
        words = tuple((x0 / w, y0 / h, x1 / w, y1 / h, t) for x0, y0, x1, y1, t, *_ in
                      page.get_text("words"))  # fmt: skip
        return words, w, h, len(page.get_drawings())


def _inside(words: Sequence[Word], box: BBox) -> list[str]:
    """Words whose center lies in ``box``."""
    return [
        t for x0, y0, x1, y1, t in words
        if box.x1 <= (x0 + x1) / 2 <= box.x2 and box.y1 <= (y0 + y1) / 2 <= box.y2
    ]  # fmt: skip


def _doc_text(corpus: Dataset, doc: str) -> str:
    with pymupdf.open(corpus.pdf_path(doc)) as pdf:
        return "\n".join(page.get_text() for page in pdf)


def test_every_gold_region_sits_on_drawn_content(corpus: Dataset) -> None:
    checked = 0
    for sample in corpus.samples:
        path = str(corpus.pdf_path(sample.primary_doc))
        for region in sample.gold_regions:
            words, *_ = _page_words(path, region.page)
            inside = _inside(words, region.bbox)
            assert inside, f"{sample.id}: no words in {region}"
            if region.element_type in {"text", "table_row"}:
                # Tight: exactly the words of the paragraph or row, nothing from neighbors.
                assert sorted(inside) == sorted((region.text or "").split()), sample.id
            checked += 1
    assert checked > 40


def test_figure_regions_hold_a_drawing(corpus: Dataset) -> None:
    figures = [(s, r) for s in corpus.samples for r in s.gold_regions if r.element_type == "figure"]
    assert figures
    for sample, region in figures:
        path = corpus.pdf_path(sample.primary_doc)
        with pymupdf.open(path) as pdf:
            page = pdf[region.page - 1]
            w, h = page.rect.width, page.rect.height
            rect = pymupdf.Rect(region.bbox.x1 * w, region.bbox.y1 * h,
                                region.bbox.x2 * w, region.bbox.y2 * h)  # fmt: skip
            assert any(rect.intersects(d["rect"]) for d in page.get_drawings()), sample.id
        words, *_ = _page_words(str(path), region.page)
        assert (region.text or "").split()[0] in _inside(words, region.bbox)  # "Figure"


def test_fact_values_appear_inside_their_regions(corpus: Dataset) -> None:
    for sample in corpus.samples:
        if sample.task != "qa" or not sample.answerable:
            continue
        path = str(corpus.pdf_path(sample.primary_doc))
        keys = sample.metadata["key_values"]
        assert len(keys) == len(sample.gold_facts) >= 1
        for fact, key in zip(sample.gold_facts, keys, strict=True):
            assert fact.region_index is not None
            region = sample.gold_regions[fact.region_index]
            assert fact.page == region.page and fact.bbox == region.bbox
            words, *_ = _page_words(path, fact.page)
            inside = " ".join(_inside(words, region.bbox))
            assert key in inside.split(), f"{sample.id}: {key!r} not in region"
            assert key in fact.text
            if region.element_type == "text":
                assert fact.text in (region.text or "")


def test_single_page_answers_are_the_printed_values(corpus: Dataset) -> None:
    single = [s for s in corpus.samples if (s.category or "").startswith("single_page")]
    assert len(single) >= 12
    for sample in single:
        assert sample.gold_pages == [sample.gold_facts[0].page]
        assert sample.answer == sample.metadata["key_values"][0]
        assert sample.answer_format in {"Int", "Float"}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_multi_page_questions(corpus: Dataset) -> None:
    multi = [s for s in corpus.samples if s.category == "multi_page"]
    assert len(multi) >= 6
    for sample in multi:
        assert 2 <= len(sample.gold_pages) <= 4
        assert len(sample.gold_facts) == len(sample.gold_pages) == len(sample.gold_regions)
        values = [_number(v) for v in sample.metadata["key_values"]]
        answer = sample.answer or ""
        op = sample.metadata["operation"]
        if op == "sum":
            assert _number(answer) == pytest.approx(sum(values))
        elif op == "difference":
            assert _number(answer) == pytest.approx(max(values) - min(values), abs=0.06)
        else:
            best = max(range(len(values)), key=values.__getitem__)
            assert answer in sample.question
            assert sample.gold_facts[best].text.find(answer) >= 0
        layout = sample.metadata["layout"]
        pages = sample.gold_pages
        assert layout["span"] == pages[-1] - pages[0]
    gaps = [s.metadata["layout"]["max_gap"] for s in multi]
    assert min(gaps) <= 2 and max(gaps) >= 4, "layouts should include clusters and far spreads"
    assert {len(s.gold_pages) for s in multi} >= {2, 3}


def test_unanswerable_questions_name_absent_entities(corpus: Dataset) -> None:
    texts = {doc: _doc_text(corpus, doc).lower() for doc in corpus.doc_ids()}
    unanswerable = [s for s in corpus.samples if not s.answerable]
    assert len(unanswerable) >= 4
    for sample in unanswerable:
        entity = sample.metadata["absent_entity"]
        assert entity in sample.question
        assert sample.answer == "Unanswerable" and sample.gold_pages == []
        assert all(entity.lower() not in text for text in texts.values())


def test_printed_labels_differ_from_physical_pages(
    corpus_dir: Path, manifest: dict[str, Any]
) -> None:
    label_paths = set()
    for doc in manifest["documents"]:
        labels, front = doc["page_labels"], doc["front_matter_pages"]
        assert 2 <= front <= 4
        with pymupdf.open(corpus_dir / "pdfs" / doc["file"]) as pdf:
            for index, page in enumerate(pdf):
                h = page.rect.height
                footer = [w[4] for w in page.get_text("words") if w[1] > 0.9 * h]
                assert footer == [labels[index]]
                assert page.get_label() == (labels[index] if doc["page_labels_set"] else "")
        assert labels[:front] == ["i", "ii", "iii", "iv"][:front]
        assert labels[front:] == [str(n) for n in range(1, len(labels) - front + 1)]
        assert all(label != str(i + 1) for i, label in enumerate(labels))
        label_paths.add(doc["page_labels_set"])
    assert label_paths == {True, False}


def test_doc_pages_metadata_matches_labels(corpus: Dataset, manifest: dict[str, Any]) -> None:
    labels = {d["file"]: d["page_labels"] for d in manifest["documents"]}
    for sample in corpus.samples:
        if sample.gold_pages:
            expected = [labels[sample.primary_doc][p - 1] for p in sample.gold_pages]
            assert sample.metadata["doc_pages"] == expected


def test_scan_documents_hold_both_conflicting_values(corpus: Dataset) -> None:
    errors = [s for s in corpus.samples if s.task == "error_detection"]
    assert sorted(s.category or "" for s in errors) == ["CF", "DHP"]
    for sample in errors:
        (error,) = sample.gold_errors
        assert error.family == sample.category
        assert len(error.locations) == 2 and error.pages == sample.gold_pages
        assert len(error.reasoning_steps) >= 3
        first, second = sample.metadata["planted_values"]
        assert first != second
        path = str(corpus.pdf_path(sample.primary_doc))
        found = []
        for location, value in zip(error.locations, (first, second), strict=True):
            words, *_ = _page_words(path, location.page)
            found.append(value in _inside(words, location.bbox))
        assert found == [True, True], sample.id
        explanation = sample.gold_explanation or ""
        assert first in explanation and second in explanation


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def test_bm25_finds_single_page_evidence(corpus: Dataset) -> None:
    """Questions name distinctive entities, so plain BM25 over page text ranks the gold page
    near the top (the demo's tiny local model relies on it)."""
    hits = total = 0
    for doc in corpus.doc_ids():
        with pymupdf.open(corpus.pdf_path(doc)) as pdf:
            pages = [_tokens(page.get_text()) for page in pdf]
        index = BM25Okapi(pages)
        for sample in corpus.samples:
            if sample.primary_doc != doc or len(sample.gold_pages) != 1:
                continue
            scores = index.get_scores(_tokens(sample.question))
            top = sorted(range(len(pages)), key=lambda i: -scores[i])[:3]
            hits += sample.gold_pages[0] - 1 in top
            total += 1
    assert total >= 12
    assert hits / total >= 0.9


def test_samples_validate_as_schema(corpus: Dataset) -> None:
    for sample in corpus.samples:
        assert Sample.model_validate_json(sample.model_dump_json()) == sample


def test_every_planted_fact_is_where_facts_jsonl_says(
    corpus_dir: Path, manifest: dict[str, Any]
) -> None:
    rows = [json.loads(line) for line in (corpus_dir / "facts.jsonl").read_text().splitlines()]
    assert len(rows) == manifest["facts"]["count"] > 500
    labels = {d["file"]: d["page_labels"] for d in manifest["documents"]}
    for row in rows:
        words, *_ = _page_words(str(corpus_dir / "pdfs" / row["doc"]), row["page"])
        assert row["value"] in _inside(words, BBox.from_list(row["bbox"])), row
        assert row["value"] in row["text"]
        assert row["doc_page"] == labels[row["doc"]][row["page"] - 1]
    cells = [(r["doc"], r["entity"], r["metric"], r["year"]) for r in rows]
    assert len(set(cells)) == len(cells)  # one value per entity, metric and year


def test_ingestion_reads_both_label_paths(corpus_dir: Path, manifest: dict[str, Any]) -> None:
    ingest = pytest.importorskip("scanrag.documents.ingest")
    for doc in manifest["documents"]:
        document = ingest.ingest_pdf(corpus_dir / "pdfs" / doc["file"])
        assert [p.doc_page for p in document.pages] == doc["page_labels"]
