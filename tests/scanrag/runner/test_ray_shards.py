"""Ingestion and index builds sharded by document on a local 2-CPU Ray: same results."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pymupdf
import pytest

from scanrag.documents import DocumentStore
from scanrag.runner.ray_shards import build_with_ray, ingest_with_ray, slices

ray = pytest.importorskip("ray")


def _pdfs(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in range(count):
        pdf = pymupdf.open()
        for p in range(3 + d):
            pdf.new_page().insert_text((72, 90), f"Document {d} page {p + 1}: value {d * 7 + p}.")
        pdf.save(folder / f"doc{d}.pdf")
        pdf.close()
        paths.append(folder / f"doc{d}.pdf")
    return paths


def _rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM pages ORDER BY number").fetchall()


def test_sharded_ingest_and_bm25_equal_one_process(tmp_path: Path, local_ray: None) -> None:
    from scanrag.indexes.bm25 import BM25Index

    paths = _pdfs(tmp_path / "pdfs", 5)
    broken = tmp_path / "pdfs" / "broken.pdf"
    broken.write_text("not a pdf")
    here = {p: d for p, d in DocumentStore(tmp_path / "here").ingest_many(paths)}
    seen: list[Path] = []
    result = ingest_with_ray(ray, [*paths, broken], tmp_path / "there", on_done=seen.append)
    assert sorted(seen) == sorted([*paths, broken])
    assert list(result.failures) == [broken] and "NotAPDFError" not in result.failures[broken]
    assert "%PDF-" in result.failures[broken]
    for path in paths:
        ours, theirs = result.documents[path], here[path]
        assert ours.id == theirs.id and ours.num_pages == theirs.num_pages  # type: ignore[union-attr]
        assert ours.pages == theirs.pages  # type: ignore[union-attr]
        stored = DocumentStore(tmp_path / "there").path_for(ours.sha256)
        assert stored.is_file() and _rows(stored) == _rows(
            DocumentStore(tmp_path / "here").path_for(ours.sha256)
        )
    documents = [result.documents[p] for p in paths]
    sharded = build_with_ray(ray, BM25Index, documents, parts=3)
    whole = BM25Index()
    whole.add(documents)
    assert sharded.postings_by_term() == whole.postings_by_term()
    assert sharded.engine.average_idf == whole.engine.average_idf
    assert sharded.search("value page", 6) == whole.search("value page", 6)


def test_slices_balance_pages_and_keep_order(tmp_path: Path) -> None:
    from scanrag.schemas import Document

    docs = [
        Document(id=str(i), name=f"{i}.pdf", sha256=str(i) * 8, num_pages=n)
        for i, n in enumerate([10, 1, 1, 1, 9, 2, 8])
    ]
    parts = slices(docs, 3)
    assert [d for part in parts for d in part] == docs
    assert len(parts) == 3 and [sum(d.num_pages for d in p) for p in parts] == [11, 11, 10]
    assert slices(docs[:1], 4) == [docs[:1]]


def test_a_ray_run_builds_bm25_in_parts_with_the_local_rows(
    tmp_path: Path, local_ray: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner_fakes as rf

    from scanrag.config import config_from_dict
    from scanrag.rundir import JsonlLog
    from scanrag.runner import ray_shards, start_run

    sharded_builds: list[int] = []
    real = ray_shards.build_with_ray

    def spy(ray, make_index, documents, parts=None):  # type: ignore[no-untyped-def]
        sharded_builds.append(len(documents))
        return real(ray, make_index, documents, parts)

    monkeypatch.setattr(ray_shards, "build_with_ray", spy)

    def rows(executor: str) -> dict[tuple[str, str], tuple[object, object]]:
        config = rf.make_config(
            tmp_path,
            retrievers={"kw": {"type": "bm25"}},
            strategies=[
                {"name": "fake_reader", "label": "rag", "retriever": "kw", "params": {"k": 1}}
            ],
            runner={"executor": executor, "runs_dir": str(tmp_path / f"runs-{executor}")},
        )
        result = start_run(config_from_dict(config), llm=rf.MODEL, log=None)
        assert result.complete, result.stop_reason
        assert (result.run_dir / "indexes" / "kw" / "manifest.json").is_file()
        log = JsonlLog(result.run_dir / "trajectories.jsonl")
        return {(r["run_key"], r["sample_id"]): (r["answer"], r["pages"]) for r in log.rows()}

    local, sharded = rows("local"), rows("ray")
    assert len(local) == 12 and sharded == local
    assert sharded_builds == [3]  # the ray run built its BM25 index in parts
