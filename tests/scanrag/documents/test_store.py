"""Document JSON files and the content-keyed document cache."""

from __future__ import annotations

import pickle
import shutil
import sqlite3
from pathlib import Path

import pytest

from scanrag.documents import (
    DocumentStore,
    PageSequence,
    ingest_pdf,
    load_document,
    save_document,
)


@pytest.mark.parametrize("name", ["doc.json", "doc.json.gz"])
@pytest.mark.parametrize("trusted", [False, True])
def test_save_load_round_trip(simple_pdf: Path, tmp_path: Path, name: str, trusted: bool) -> None:
    doc = ingest_pdf(simple_pdf)
    path = save_document(doc, tmp_path / "out" / name)
    loaded = load_document(path, trusted=trusted)
    assert loaded == doc
    assert all(isinstance(w, tuple) for p in loaded.pages for w in p.words)
    raw = path.read_bytes()
    assert raw.startswith(b"\x1f\x8b") == name.endswith(".gz")


def test_load_or_ingest_hits_the_cache(
    simple_pdf: Path, tmp_path: Path, pdf_reads: list[Path]
) -> None:
    calls = pdf_reads
    store = DocumentStore(tmp_path / "docs")
    first = store.load_or_ingest(simple_pdf)
    second = store.load_or_ingest(simple_pdf)
    assert len(calls) == 1 and second == first
    assert first.pages == ingest_pdf(simple_pdf).pages  # the stored pages are the ingested ones
    # Same bytes under another name: still a hit, reported under the new name.
    copy = tmp_path / "renamed.pdf"
    shutil.copy(simple_pdf, copy)
    third = store.load_or_ingest(copy)
    assert len(calls) == 1
    assert third.name == "renamed.pdf" and third.path == str(copy.resolve())
    assert third.pages == first.pages
    # Different options are a different entry.
    store.load_or_ingest(simple_pdf, tables="off")
    assert len(calls) == 2
    assert len(list((tmp_path / "docs").glob("*.pages.sqlite"))) == 2


def test_cached_documents_hold_no_pages_in_memory(simple_pdf: Path, tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "docs")
    doc = store.load_or_ingest(simple_pdf)
    assert isinstance(doc.pages, PageSequence) and len(doc.pages) == doc.num_pages == 3
    assert "Page 2 says hello" in doc.page(2).text
    assert list(doc.page_texts()) == [p.text for p in ingest_pdf(simple_pdf).pages]
    # A pickled document (for another process) carries a reference, not the pages.
    data = pickle.dumps(doc)
    assert len(data) < 2000 and b"says hello" not in data
    again = pickle.loads(data)
    assert again == doc and again.page(3).text == doc.page(3).text


def test_corrupt_cache_entry_is_a_miss(simple_pdf: Path, tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "docs")
    doc = store.load_or_ingest(simple_pdf)
    entry = store.path_for(doc.sha256)
    entry.write_bytes(b"not a database")
    assert store.load(doc.sha256) is None
    assert store.load_or_ingest(simple_pdf) == doc
    assert store.load(doc.sha256) == doc


def test_unknown_option_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unknown ingestion options"):
        DocumentStore(tmp_path).path_for("ab" * 32, colour="blue")


def test_bad_file_raises_typed_error(tmp_path: Path) -> None:
    from scanrag.documents import NotAPDFError

    junk = tmp_path / "junk.pdf"
    junk.write_text("hello")
    with pytest.raises(NotAPDFError):
        DocumentStore(tmp_path / "docs").load_or_ingest(junk)


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM pages WHERE number = 2",  # a page missing
        "UPDATE document SET format = 99",  # another format
        "UPDATE document SET data = '{}'",  # fields missing
        "DROP TABLE pages",
    ],
)
def test_malformed_cache_entry_is_a_miss(simple_pdf: Path, tmp_path: Path, damage: str) -> None:
    store = DocumentStore(tmp_path / "docs")
    doc = store.load_or_ingest(simple_pdf)
    entry = store.path_for(doc.sha256)
    with sqlite3.connect(entry) as conn:
        conn.execute(damage)
    assert store.load(doc.sha256) is None
    assert store.load_or_ingest(simple_pdf) == doc
