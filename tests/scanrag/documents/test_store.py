"""Document JSON files and the content-keyed document cache."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.documents import DocumentStore, ingest_pdf, load_document, save_document
from scanrag.documents import store as store_module


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
    simple_pdf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = store_module.ingest_pdf

    def counting(path, **kw):  # type: ignore[no-untyped-def]
        calls.append(Path(path))
        return real(path, **kw)

    monkeypatch.setattr(store_module, "ingest_pdf", counting)
    store = DocumentStore(tmp_path / "docs")
    first = store.load_or_ingest(simple_pdf)
    second = store.load_or_ingest(simple_pdf)
    assert len(calls) == 1 and second == first
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
    assert len(list((tmp_path / "docs").glob("*.json.gz"))) == 2


def test_corrupt_cache_entry_is_a_miss(simple_pdf: Path, tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "docs")
    doc = store.load_or_ingest(simple_pdf)
    entry = store.path_for(doc.sha256)
    entry.write_bytes(b"not gzip")
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
        lambda d: d["pages"][0]["words"].append([0.1, 0.2, 0.3]),  # short word
        lambda d: d["pages"][0].pop("text"),
        lambda d: d["pages"][0].update(text_source="telepathy"),
        lambda d: d.update(num_pages=7),
    ],
)
def test_malformed_cache_entry_is_a_miss(
    simple_pdf: Path, tmp_path: Path, damage: Callable[[dict[str, Any]], object]
) -> None:
    store = DocumentStore(tmp_path / "docs")
    doc = store.load_or_ingest(simple_pdf)
    entry = store.path_for(doc.sha256)
    data = json.loads(gzip.decompress(entry.read_bytes()))
    damage(data)
    entry.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert store.load(doc.sha256) is None
    assert store.load_or_ingest(simple_pdf) == doc
