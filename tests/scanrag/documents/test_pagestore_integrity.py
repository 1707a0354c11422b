"""Page files that changed after they were written are rebuilt, and killed writers' temporary
files are cleaned up (issue 20: a page file edited in place gave silent wrong answers; a
killed ingestion left ``.…pages.sqlite.<pid>.tmp`` files forever)."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scanrag.documents import DocumentStore, pagecheck
from scanrag.documents import pagestore as ps


def _edit_text(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` (same length) in the page file's bytes, in place."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert data.count(old.encode()) >= 1
    with open(path, "r+b") as fh:  # same inode, same size: only the content changed
        fh.write(data.replace(old.encode(), new.encode()))


def test_a_page_file_edited_in_place_is_rebuilt_with_a_warning(
    simple_pdf: Path, tmp_path: Path, pdf_reads: list[Path], caplog
) -> None:
    calls = pdf_reads
    store = DocumentStore(tmp_path / "docs")
    first = store.load_or_ingest(simple_pdf)
    assert first.pages[1].text.startswith("Page 2 says hello")
    (path,) = (tmp_path / "docs").glob("*.pages.sqlite")
    _edit_text(path, "Page 2 says hello", "Page 9 says hello")
    with caplog.at_level(logging.WARNING, logger="scanrag.documents.store"):
        again = store.load_or_ingest(simple_pdf)
    assert len(calls) == 2  # read from the PDF again
    assert again.pages[1].text.startswith("Page 2 says hello")  # not the edited "9"
    assert (
        "do not match the checksum" in caplog.text and "rebuilding it from the PDF" in caplog.text
    )
    assert str(path) in caplog.text
    caplog.clear()
    assert store.load_or_ingest(simple_pdf).pages[1].text.startswith("Page 2")
    assert len(calls) == 2 and not caplog.text  # the rebuilt file is a plain hit


def test_an_edited_record_is_noticed_too(simple_pdf: Path, tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "docs")
    store.load_or_ingest(simple_pdf)
    (path,) = (tmp_path / "docs").glob("*.pages.sqlite")
    with sqlite3.connect(path) as conn:  # the words and boxes, not the text column
        (record,) = conn.execute("SELECT record FROM pages WHERE number = 2").fetchone()
        conn.execute("UPDATE pages SET record = ? WHERE number = 2", (record[:-1] + b" ",))
    with pytest.raises(ps.PageChecksumError, match="do not match the checksum"):
        ps.open_document(path, verify=True)
    ps.open_document(path)  # unverified opens (right after a write) do not look


def test_a_page_file_without_a_checksum_is_rebuilt(
    simple_pdf: Path, tmp_path: Path, pdf_reads: list[Path]
) -> None:
    """A file of an older version (no ``content_crc``) cannot be vouched for."""
    calls = pdf_reads
    store = DocumentStore(tmp_path / "docs")
    store.load_or_ingest(simple_pdf)
    (path,) = (tmp_path / "docs").glob("*.pages.sqlite")
    with sqlite3.connect(path) as conn:
        (data,) = conn.execute("SELECT data FROM document").fetchone()
        conn.execute("UPDATE document SET data = ?", (data.replace('"content_crc"', '"x"'),))
    with pytest.raises(ps.PageChecksumError, match="no content checksum"):
        ps.open_document(path, verify=True)
    store.load_or_ingest(simple_pdf)
    assert len(calls) == 2
    ps.open_document(path, verify=True)


def test_the_checksum_is_the_one_written(simple_pdf: Path, tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "docs")
    document = store.load_or_ingest(simple_pdf)
    (path,) = (tmp_path / "docs").glob("*.pages.sqlite")
    with sqlite3.connect(path) as conn:
        (data,) = conn.execute("SELECT data FROM document").fetchone()
    assert f'"content_crc": "{pagecheck.file_crc(path)}"' in data
    assert document.num_pages == 3


# --------------------------------------------------------------------------- temporary files


def _tmp_file(folder: Path, tag: str, age_s: float) -> Path:
    serial = len(list(folder.iterdir()))  # one writer object each
    path = folder / f".{'a' * 64}.1234abcd.pages.sqlite.{tag}.14000000{serial}.tmp"
    path.write_bytes(b"partial")
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def _dead_pid() -> int:
    """A pid no process can have: above Linux's largest ``pid_max`` (2**22) and macOS's."""
    pid = 2**22 + 7
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    return pid


def test_stale_temporary_files_are_removed(tmp_path: Path) -> None:
    host = pagecheck.writer_tag().partition("@")[2]
    dead, alive = _dead_pid(), os.getpid()
    stale = [
        _tmp_file(tmp_path, f"{dead}@{host}", 3600),  # a killed writer of this host
        _tmp_file(tmp_path, f"{dead + 1}", 3600),  # the older name without a host
        _tmp_file(tmp_path, f"{alive}@elsewhere", 2 * 86400),  # abandoned on another host
    ]
    kept = [
        _tmp_file(tmp_path, f"{dead}@{host}", 10),  # just written: its writer may be slow
        _tmp_file(tmp_path, f"{alive}@{host}", 3600),  # a live writer
        _tmp_file(tmp_path, f"{dead}@elsewhere", 3600),  # another host's pid says nothing here
    ]
    (tmp_path / "unrelated.tmp").write_bytes(b"x")
    removed = pagecheck.remove_stale_tmp(tmp_path)
    assert sorted(removed) == sorted(stale)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in stale)
    assert (tmp_path / "unrelated.tmp").exists()


def test_ingestion_cleans_up_after_a_killed_writer(simple_pdf: Path, tmp_path: Path) -> None:
    """A writer killed with SIGKILL mid-file, then a new ingestion into the same cache."""
    folder = tmp_path / "docs"
    folder.mkdir()
    script = (
        "import os, sys\n"
        "from scanrag.documents.pagewriter import PageWriter\n"
        "w = PageWriter(sys.argv[1])\n"
        "print(w.tmp, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    target = folder / ("b" * 64 + ".x.pages.sqlite")
    done = subprocess.run(
        [sys.executable, "-c", script, str(target)], capture_output=True, text=True
    )
    assert done.returncode == -9
    left = Path(done.stdout.strip())
    assert left.exists() and left.name.startswith(f".{target.name}.")
    old = time.time() - pagecheck.STALE_AFTER_S - 1
    os.utime(left, (old, old))
    DocumentStore(folder).load_or_ingest(simple_pdf)  # a miss: cleans up before writing
    assert not left.exists()
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []


# --------------------------------------------------------------------------- every damage kind


def _drop_page_row(path: Path, other: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM pages WHERE number = 2")


def _truncate_half(path: Path, other: Path) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


def _zero_length(path: Path, other: Path) -> None:
    path.write_bytes(b"")


def _other_document(path: Path, other: Path) -> None:
    path.write_bytes(other.read_bytes())


def _text_in_place(path: Path, other: Path) -> None:
    _edit_text(path, "Page 2 says hello", "Page 9 says hello")


def _record(path: Path, other: Path) -> None:
    with sqlite3.connect(path) as conn:
        (record,) = conn.execute("SELECT record FROM pages WHERE number = 2").fetchone()
        conn.execute("UPDATE pages SET record = ? WHERE number = 2", (record[:-1] + b" ",))


def _no_checksum(path: Path, other: Path) -> None:
    with sqlite3.connect(path) as conn:
        (data,) = conn.execute("SELECT data FROM document").fetchone()
        conn.execute("UPDATE document SET data = ?", (data.replace('"content_crc"', '"x"'),))


DAMAGE = {
    "text edited in place": (_text_in_place, "do not match the checksum"),
    "record edited": (_record, "do not match the checksum"),
    "no checksum (older version)": (_no_checksum, "no content checksum"),
    "a page row deleted": (_drop_page_row, "2 pages stored, 3 declared"),
    "truncated to half": (_truncate_half, "unreadable as a page file"),
    "zero-length file": (_zero_length, "the file is empty (0 bytes)"),
    "another document's page file": (_other_document, "holds the pages of another document"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_every_kind_of_damage_is_rebuilt_with_one_warning_that_names_the_cause(
    kind: str,
    simple_pdf: Path,
    make_text_pdf,
    tmp_path: Path,
    pdf_reads: list[Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 31.3: four of these seven were rebuilt silently (a plain cache miss)."""
    damage, cause = DAMAGE[kind]
    other_pdf = make_text_pdf([[(72, 100, "Another document entirely")]])
    store = DocumentStore(tmp_path / "docs")
    mine = store.load_or_ingest(simple_pdf)
    other = store.load_or_ingest(other_pdf)
    path = store.path_for(mine.sha256)
    ps.PAGE_CACHE.clear()
    damage(path, store.path_for(other.sha256))
    reads = len(pdf_reads)
    copy = tmp_path / "same-bytes.pdf"  # the same document under a second name
    copy.write_bytes(simple_pdf.read_bytes())
    with caplog.at_level(logging.WARNING, logger="scanrag.documents.store"):
        results = dict(store.ingest_many([simple_pdf, copy]))
    assert len(pdf_reads) > reads  # rebuilt from the PDF
    for document in results.values():
        assert not isinstance(document, Exception)
        assert [p.text.split(" to ")[0] for p in document.pages] == [
            "Page 1 says hello",
            "Page 2 says hello",
            "Page 3 says hello",
        ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings  # one per document, not one per name it goes by
    assert str(path) in warnings[0] and "rebuilding it from the PDF" in warnings[0]
    assert cause in warnings[0]
    caplog.clear()
    ps.open_document(path, verify=True)  # the rebuilt file is sound
    with caplog.at_level(logging.WARNING, logger="scanrag.documents.store"):
        store.load_or_ingest(simple_pdf)
    assert not caplog.records
