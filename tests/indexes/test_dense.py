"""Dense index with the bundled all-MiniLM-L6-v2 (a real model, loaded offline)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scanrag.indexes.dense import DenseIndex
from scanrag.indexes.encoders import load_encoder
from scanrag.indexes.errors import CorruptIndexError, IndexMismatchError, ModelLoadError

pytestmark = pytest.mark.model

FILLER = " ".join(
    f"Routine maintenance log entry number {i} lists nothing unusual." for i in range(60)
)
NEEDLE = "The secret launch code of the observatory telescope is purple giraffe."


@pytest.fixture(scope="module")
def docs(make_document):
    return [
        make_document(
            "bio.pdf",
            [
                "Photosynthesis lets plants turn sunlight into chemical energy.",
                "The mitochondria is the powerhouse of the cell.",
                "",
            ],
        ),
        make_document("long.pdf", [FILLER + " " + NEEDLE, "Quarterly revenue grew in Europe."]),
    ]


@pytest.fixture(scope="module")
def index(docs):
    dense = DenseIndex(chunk_overlap=16)
    dense.add(docs)
    return dense


def test_semantic_search(index, docs):
    hits = index.search("How do plants make energy from light?", 2)
    assert (hits[0].doc_id, hits[0].page) == (docs[0].id, 1)
    assert hits[0].score > hits[1].score


def test_empty_page_scores_zero(index, docs):
    hits = index.search("cell biology", 10, doc_ids=[docs[0].id])
    assert {h.page: h.score for h in hits}[3] == 0.0


def test_long_page_is_chunked_and_scored_by_best_chunk(index, docs):
    long_row = index._doc_start[docs[1].id]
    chunks = np.flatnonzero(index._chunk_rows == long_row)
    assert len(chunks) > 1  # longer than the 256-token window
    hits = index.search("What is the telescope launch code?", 1, doc_ids=[docs[1].id])
    assert hits[0].page == 1
    query = index._encode([NEEDLE])[0]
    assert index.search(NEEDLE, 1, doc_ids=docs[1].id)[0].score == pytest.approx(
        float(np.max(index.store.vectors[chunks] @ query)), abs=1e-5
    )


def test_faiss_and_exact_paths_agree(index, docs):
    query = "revenue in Europe"
    whole = index.search(query, 5)  # FAISS path
    scoped = index.search(query, 5, doc_ids=[d.id for d in docs])  # exact path
    assert [(h.doc_id, h.page) for h in whole] == [(h.doc_id, h.page) for h in scoped]
    assert [h.score for h in whole] == pytest.approx([h.score for h in scoped], abs=1e-5)


@pytest.mark.parametrize("aggregation", ["mean", "sum"])
def test_other_aggregations(docs, index, aggregation):
    other = DenseIndex(chunk_overlap=16, aggregation=aggregation)
    other.add(docs)
    query = "maintenance log entry"
    best = {h.page: h.score for h in index.search(query, 2, doc_ids=docs[1].id)}
    agg = {h.page: h.score for h in other.search(query, 2, doc_ids=docs[1].id)}
    assert agg[2] == pytest.approx(best[2], abs=1e-5)  # one chunk: all aggregations agree
    if aggregation == "mean":
        assert agg[1] <= best[1] + 1e-6
    else:
        assert agg[1] > best[1]


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_kinds(docs, index, kind):
    other = DenseIndex(chunk_overlap=16, faiss_index=kind)
    other.add(docs[:1])
    query = "powerhouse of the cell"
    approx, exact = other.search(query, 1)[0], index.search(query, 1)[0]
    assert (approx.doc_id, approx.page, approx.rank) == (exact.doc_id, exact.page, exact.rank)
    # FAISS's IVF/HNSW kernels sum in another order than the flat one: last-bit differences
    assert approx.score == pytest.approx(exact.score, abs=1e-5)
    assert len(other.search(query, 100)) == 3


def test_save_load_round_trip(index, docs, tmp_path):
    index.save(tmp_path / "dense")
    manifest = json.loads((tmp_path / "dense" / "manifest.json").read_text())
    assert manifest["model"] == "all-MiniLM-L6-v2" and manifest["model_revision"]
    assert manifest["extra"]["dim"] == 384 and manifest["extra"]["chunks"] == len(index.store)
    loaded = DenseIndex.open(tmp_path / "dense")
    for query in ("plants and sunlight", "telescope code"):
        assert loaded.search(query, 5) == index.search(query, 5)
    DenseIndex(chunk_overlap=16).load(tmp_path / "dense", documents=docs)
    with pytest.raises(IndexMismatchError, match="chunk_overlap: saved 16, expected 32"):
        DenseIndex().load(tmp_path / "dense")


def test_inconsistent_chunk_map_is_corrupt(index, tmp_path):
    folder = index.save(tmp_path / "dense")
    np.save(folder / "payload" / "chunk_rows.npy", np.zeros(3, dtype=np.int64))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"].pop("payload/chunk_rows.npy")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CorruptIndexError, match="chunk"):
        DenseIndex(chunk_overlap=16).load(folder)


def test_mean_pooling_module_matches_packaged_config():
    """The Transformer + mean Pooling build (used for Contriever) reproduces MiniLM's vectors."""
    auto = load_encoder("all-MiniLM-L6-v2", "cpu")
    built = load_encoder("all-MiniLM-L6-v2", "cpu", pooling="mean")
    assert built is not auto
    texts = ["a short sentence", "another one about cells"]
    a = auto.encode(texts, normalize_embeddings=True)
    b = built.encode(texts, normalize_embeddings=True)
    assert np.allclose(a, b, atol=1e-5)


def test_prefixes_are_applied(docs, monkeypatch):
    index = DenseIndex(query_prefix="query: ", passage_prefix="passage: ")
    seen = []
    original = index._encode
    monkeypatch.setattr(index, "_encode", lambda texts: seen.extend(texts) or original(texts))
    index.add(docs[:1])
    index.search("cells", 1)
    assert seen[-1] == "query: cells"
    # passages are tokenized once, prefix included: the stored vector is the prefixed text's
    page = original(["passage: The mitochondria is the powerhouse of the cell."])[0]
    assert index.store.vectors[1] == pytest.approx(page, abs=1e-6)
    assert index.params()["query_prefix"] == "query: "


def test_unloadable_models_are_named(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelLoadError, match=str(tmp_path)):
        DenseIndex(str(tmp_path))
    with pytest.raises(ModelLoadError, match="no-such-org/no-such-model"):
        DenseIndex("no-such-org/no-such-model")


def test_bad_options_rejected():
    with pytest.raises(ValueError, match="aggregation"):
        DenseIndex(aggregation="median")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="overlap"):
        DenseIndex(chunk_tokens=8, chunk_overlap=8)


def test_torch_vector_search_is_selected_and_recorded(docs, index, monkeypatch):
    """CUDA without faiss-gpu selects exact search in torch (stood in for by the CPU here)."""
    from scanrag.indexes import dense
    from scanrag.indexes.encoders import DeviceChoice

    monkeypatch.setattr(dense, "select_devices", lambda device: DeviceChoice("cpu", False, True))
    other = DenseIndex(chunk_overlap=16)
    other.add(docs)
    assert other.store.search_backend == "torch:cpu"
    assert other.manifest()["extra"]["vector_search"] == "torch:cpu"
    assert index.manifest()["extra"]["vector_search"] == "faiss-cpu"
    for query in ("revenue in Europe", "plants and light"):
        ours, faiss_hits = other.search(query, 4), index.search(query, 4)
        assert [(h.doc_id, h.page) for h in ours] == [(h.doc_id, h.page) for h in faiss_hits]
        assert [h.score for h in ours] == pytest.approx([h.score for h in faiss_hits], abs=1e-6)


def test_query_encoding_equals_sentence_transformers(index):
    texts = ["How do plants make energy from light?", "telescope"]
    mine = index._encode(texts)
    theirs = index.encoder.encode(texts, normalize_embeddings=True)
    assert np.abs(mine - theirs).max() < 1e-5


def test_query_vectors_are_cached(index, monkeypatch):
    calls = []
    real = index._encode
    monkeypatch.setattr(index, "_encode", lambda texts: calls.append(list(texts)) or real(texts))
    first = index.search("a fresh question about cells", 2)
    assert index.search("a fresh question about cells", 2) == first
    index.search_batch(["a fresh question about cells", "another one"], 2)
    assert calls == [["a fresh question about cells"], ["another one"]]
