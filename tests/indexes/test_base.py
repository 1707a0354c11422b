"""The page index base: argument checks, scoping, tie-breaking, manifests, save and load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scanrag.indexes.base import PageIndex
from scanrag.indexes.bm25 import BM25Index
from scanrag.indexes.errors import CorruptIndexError, IndexMismatchError, UnknownDocumentError
from scanrag.indexes.manifest import SCHEMA_VERSION, IndexManifest
from scanrag.indexes.ranking import check_search_args, rank_candidates, top_candidates
from scanrag.schemas import BBox, Document, Region


class ConstantIndex(PageIndex):
    """Scores every page with the same value; proposes one region per hit."""

    kind = "constant"

    def __init__(self, value: float = 1.0, model: str = "none") -> None:
        super().__init__()
        self.value, self.model = value, model
        self.fail_save = False

    def params(self) -> dict[str, Any]:
        return {"value": self.value}

    def model_info(self) -> tuple[str | None, str | None]:
        return self.model, "rev-" + self.model

    def _index(self, documents: list[Document]) -> None:
        pass

    def _candidates(self, queries, rows, k):
        rows = np.arange(self.page_count) if rows is None else rows
        return [(rows, np.full(rows.size, self.value)) for _ in queries]

    def _regions(self, query, rows):
        return [[Region(page=1, bbox=BBox.from_list([0, 0, 1, 1]))] for _ in rows]

    def _save_payload(self, directory: Path) -> None:
        if self.fail_save:
            raise OSError("disk full")
        (directory / "value.txt").write_text(str(self.value))

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        float((directory / "value.txt").read_text())


@pytest.fixture
def bm25(corpus):
    index = BM25Index()
    index.add(corpus)
    return index


def test_ties_break_by_doc_id_then_page(make_document):
    late = make_document("z.pdf", ["one", "two"])
    early = make_document("y.pdf", ["three"])
    index = ConstantIndex()
    index.add([late, early])  # insertion order must not matter, only (doc_id, page)
    hits = index.search("q", 10)
    expected = [
        (d.id, p)
        for d in sorted([late, early], key=lambda d: d.id)
        for p in range(1, d.num_pages + 1)
    ]
    assert [(h.doc_id, h.page) for h in hits] == expected
    assert [h.rank for h in hits] == [1, 2, 3]


def test_regions_hook_attached_to_hits(corpus):
    index = ConstantIndex()
    index.add(corpus)
    assert all(len(hit.regions) == 1 for hit in index.search("q", 3))


@pytest.mark.parametrize("k", [0, -3])
def test_non_positive_k_rejected(bm25, k):
    with pytest.raises(ValueError, match="positive"):
        bm25.search("revenue", k)


@pytest.mark.parametrize("k", [True, 2.0, "3", None])
def test_non_integer_k_rejected(bm25, k):
    with pytest.raises(TypeError):
        bm25.search("revenue", k)


def test_numpy_integer_k_accepted(bm25):
    assert len(bm25.search("revenue", np.int64(2))) == 2


def test_blank_query_returns_empty(bm25):
    assert bm25.search("", 3) == []
    assert bm25.search("   \n", 3) == []
    batch = bm25.search_batch(["", "revenue"], 2)
    assert batch[0] == [] and len(batch[1]) == 2


def test_k_larger_than_scope_returns_every_page(bm25, corpus):
    assert len(bm25.search("revenue", 100)) == sum(d.num_pages for d in corpus)
    assert len(bm25.search("revenue", 100, doc_ids=corpus[1].id)) == 3


def test_scope_to_document_and_set(bm25, corpus):
    one = bm25.search("revenue", 10, doc_ids=[corpus[0].id])
    assert {h.doc_id for h in one} == {corpus[0].id}
    pair = bm25.search("revenue", 10, doc_ids=[corpus[0].id, corpus[2].id, corpus[0].id])
    assert {h.doc_id for h in pair} == {corpus[0].id, corpus[2].id}
    assert len(pair) == 5
    assert bm25.search("revenue", 10, doc_ids=[]) == []


def test_unknown_document_id_named(bm25, corpus):
    with pytest.raises(UnknownDocumentError, match="nope") as info:
        bm25.search("revenue", 3, doc_ids=[corpus[0].id, "nope"])
    assert info.value.missing == ["nope"]
    assert corpus[0].id in str(info.value)
    with pytest.raises(UnknownDocumentError, match=f"file name of id '{corpus[0].id}'"):
        bm25.search("revenue", 3, doc_ids="a.pdf")


def test_check_search_args_rejects_non_string_query():
    with pytest.raises(TypeError, match="query"):
        check_search_args(None, 3, None, set())


def test_adding_same_document_twice_is_a_no_op(bm25, corpus):
    before = bm25.page_count
    bm25.add(corpus[:1])
    bm25.add(corpus[0])  # a single document is accepted too
    assert bm25.page_count == before


def test_same_id_with_other_content_rejected(bm25, corpus):
    changed = corpus[0].model_copy(update={"pages": corpus[0].pages[:1]})
    with pytest.raises(IndexMismatchError, match="different content"):
        bm25.add([changed])


def test_manifest_records_everything(bm25, corpus):
    manifest = bm25.manifest()
    assert manifest["kind"] == "bm25" and manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["params"]["k1"] == 1.5 and manifest["params"]["tokenizer"]["lowercase"]
    assert manifest["page_count"] == 8
    assert [d["sha256"] for d in manifest["documents"]] == [d.sha256 for d in corpus]
    assert all(d["text_hash"] for d in manifest["documents"])
    assert {"numpy", "python", "scanrag"} <= set(manifest["libraries"])
    json.dumps(manifest)


# -- save / load ----------------------------------------------------------------------------


def test_load_with_other_parameters_fails(bm25, tmp_path):
    bm25.save(tmp_path / "i")
    with pytest.raises(IndexMismatchError, match="k1: saved 1.5, expected 1.2"):
        BM25Index(k1=1.2).load(tmp_path / "i")


def test_load_other_kind_fails(bm25, tmp_path):
    bm25.save(tmp_path / "i")
    with pytest.raises(IndexMismatchError, match="'bm25' index; expected a 'constant'"):
        ConstantIndex().load(tmp_path / "i")
    with pytest.raises(IndexMismatchError, match="not a 'constant' index"):
        ConstantIndex.open(tmp_path / "i")


def test_load_with_other_model_fails(corpus, tmp_path):
    index = ConstantIndex(model="alpha")
    index.add(corpus)
    index.save(tmp_path / "i")
    with pytest.raises(IndexMismatchError, match="built with model 'alpha'"):
        ConstantIndex(model="beta").load(tmp_path / "i")
    assert ConstantIndex(model="alpha").load(tmp_path / "i").page_count == 8


def test_load_for_other_corpus_fails(bm25, corpus, make_document, tmp_path):
    bm25.save(tmp_path / "i")
    BM25Index().load(tmp_path / "i", documents=corpus)  # same corpus: fine
    other = make_document("new.pdf", ["x"])
    with pytest.raises(IndexMismatchError, match="not indexed: new.pdf") as info:
        BM25Index().load(tmp_path / "i", documents=[*corpus[:2], other])
    assert "indexed but not expected: c.pdf" in str(info.value)
    edited = corpus[0].model_copy(
        update={"pages": [corpus[0].pages[0].model_copy(update={"text": "changed"})]}
    )
    with pytest.raises(IndexMismatchError, match="content changed since indexing: a.pdf"):
        BM25Index().load(tmp_path / "i", documents=[edited, *corpus[1:]])


def test_load_newer_schema_fails(bm25, tmp_path):
    path = bm25.save(tmp_path / "i") / "manifest.json"
    data = json.loads(path.read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(data))
    with pytest.raises(IndexMismatchError, match="schema"):
        BM25Index().load(tmp_path / "i")


def test_missing_directory_or_manifest_is_corrupt(bm25, tmp_path):
    with pytest.raises(CorruptIndexError, match="does not exist"):
        BM25Index().load(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorruptIndexError, match="no manifest.json"):
        BM25Index().load(tmp_path / "empty")


def test_malformed_manifest_is_corrupt(bm25, tmp_path):
    path = bm25.save(tmp_path / "i") / "manifest.json"
    path.write_text("{not json")
    with pytest.raises(CorruptIndexError, match="not a valid index manifest"):
        BM25Index().load(tmp_path / "i")


def test_damaged_or_missing_payload_is_corrupt(bm25, tmp_path):
    folder = bm25.save(tmp_path / "i")
    payload = folder / "payload" / "terms.json.gz"
    payload.write_bytes(payload.read_bytes()[:-5])
    with pytest.raises(CorruptIndexError, match="damaged"):
        BM25Index().load(folder)
    payload.unlink()
    with pytest.raises(CorruptIndexError, match="missing"):
        BM25Index().load(folder)


def test_unreadable_payload_with_matching_hash_is_corrupt_and_keeps_state(bm25, tmp_path):
    folder = bm25.save(tmp_path / "i")
    payload = folder / "payload" / "terms.json.gz"
    payload.write_bytes(b"garbage")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"] = {}  # hashes gone: the payload reader must notice by itself
    (folder / "manifest.json").write_text(json.dumps(manifest))
    target = BM25Index()
    with pytest.raises(CorruptIndexError, match="cannot read the bm25 payload"):
        target.load(folder)
    assert target.page_count == 0 and target.search("revenue", 3) == []


def test_interrupted_save_leaves_no_manifest(corpus, tmp_path):
    index = ConstantIndex()
    index.add(corpus)
    index.save(tmp_path / "i")
    index.fail_save = True
    with pytest.raises(OSError, match="disk full"):
        index.save(tmp_path / "i")
    with pytest.raises(CorruptIndexError, match="did not finish"):
        ConstantIndex().load(tmp_path / "i")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 3, 10, 40])
def test_top_candidates_hold_the_exact_best_k(seed, k):
    """Mostly zeros (a corpus-wide BM25 query), a few or no positives, negatives, nan and
    ties at the cut, small and large arrays: ranking the candidates gives what ranking every
    row gives."""
    rng = np.random.default_rng(seed)
    n = 5000  # past the sampled cut for every k here
    scores = np.zeros(n)
    positives = int(rng.choice([0, 2, 9, 10, 11, 60, 400, 4000]))
    scores[rng.choice(n, positives, replace=False)] = rng.choice([0.5, 1.0, 2.0, 3.5], positives)
    scores[rng.choice(n, 30, replace=False)] = -rng.random(30)
    scores[rng.choice(n, 5, replace=False)] = np.nan
    rows = rng.permutation(n + 100)[:n].astype(np.int64)  # a scope: rows, not positions
    tie_rank = rng.permutation(n + 100).astype(np.int64)
    if seed % 2:  # below the size where the cut is sampled
        rows, scores = rows[:300], scores[:300]
    cand_rows, cand_scores = top_candidates(rows, scores, tie_rank, k)
    assert cand_rows.size == min(k, rows.size)
    best_rows, best_scores = rank_candidates(rows, scores, tie_rank, k)
    got_rows, got_scores = rank_candidates(cand_rows, cand_scores, tie_rank, k)
    assert got_rows.tolist() == best_rows.tolist()
    assert np.array_equal(got_scores, best_scores)
