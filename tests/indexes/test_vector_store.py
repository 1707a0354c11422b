"""The FAISS vector store: flat, IVF and HNSW kinds, the GPU path, persistence."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from scanrag.indexes.vector_store import VectorStore


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_kinds_find_the_query_itself(kind):
    store = VectorStore(16, kind=kind, nlist=4, nprobe=4)
    data = _unit(400, 16, 0)
    store.add(data[:200])
    store.add(data[200:])  # incremental add (IVF retrains on everything)
    scores, ids = store.search(data[[5, 250]], 3)
    assert ids[:, 0].tolist() == [5, 250]
    assert scores[:, 0] == pytest.approx([1.0, 1.0], abs=1e-5)
    assert len(store) == 400


def test_ivf_caps_nlist_for_small_stores():
    store = VectorStore(8, kind="ivf", nlist=256)
    store.add(_unit(50, 8, 1))
    assert store.index.nlist == 1


def test_flat_matches_numpy():
    store = VectorStore(8)
    data = _unit(30, 8, 2)
    store.add(data)
    query = _unit(1, 8, 3)
    scores, _ = store.search(query, 30)
    expected = data @ query[0]
    assert scores[0] == pytest.approx(np.sort(expected)[::-1], abs=1e-5)


def test_shape_checked():
    with pytest.raises(ValueError, match="shape"):
        VectorStore(8).add(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="unknown faiss index kind"):
        VectorStore(8, kind="pq")  # type: ignore[arg-type]


def test_gpu_path_clones_once_and_limits_k(monkeypatch):
    clones = []

    def to_gpu(resources, device, index):
        clones.append((resources, device))
        return faiss.clone_index(index)

    monkeypatch.setattr(faiss, "StandardGpuResources", lambda: "res", raising=False)
    monkeypatch.setattr(faiss, "index_cpu_to_gpu", to_gpu, raising=False)
    store = VectorStore(8, use_gpu=True)
    store.add(_unit(20, 8, 4))
    store.search(_unit(1, 8, 5), 3)
    store.search(_unit(1, 8, 6), 3)
    assert clones == [("res", 0)]
    store.add(_unit(5, 8, 7))  # stale clone dropped
    _, ids = store.search(_unit(1, 8, 8), 25)
    assert len(clones) == 2 and ids.shape == (1, 25)
    assert VectorStore(8, kind="hnsw", use_gpu=True).use_gpu is False  # no GPU HNSW


def test_gpu_clone_goes_to_the_chosen_device(monkeypatch):
    devices = []
    monkeypatch.setattr(faiss, "StandardGpuResources", lambda: "res", raising=False)
    monkeypatch.setattr(
        faiss,
        "index_cpu_to_gpu",
        lambda res, device, index: devices.append(device) or faiss.clone_index(index),
        raising=False,
    )
    store = VectorStore(8, use_gpu=True, gpu_device=1)
    store.add(_unit(10, 8, 9))
    store.search(_unit(1, 8, 10), 2)
    assert devices == [1]


@pytest.mark.parametrize(
    "bad", [{"nlist": 0}, {"nprobe": -1}, {"hnsw_m": 0}, {"ef_search": 1.5}, {"gpu_device": -1}]
)
def test_bad_parameters_fail_before_faiss(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        VectorStore(8, **bad)


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_save_load(tmp_path, kind):
    store = VectorStore(8, kind=kind, nlist=2)
    store.add(_unit(100, 8, 9))
    store.save(tmp_path, "v.npy", "i.faiss")
    loaded = VectorStore(8, kind=kind, nlist=2)
    loaded.load(tmp_path, "v.npy", "i.faiss")
    query = _unit(2, 8, 10)
    assert np.array_equal(loaded.search(query, 5)[1], store.search(query, 5)[1])


def test_load_rejects_inconsistent_files(tmp_path):
    store = VectorStore(8)
    store.add(_unit(10, 8, 11))
    store.save(tmp_path, "v.npy", "i.faiss")
    np.save(tmp_path / "v.npy", _unit(9, 8, 12))
    with pytest.raises(ValueError, match="holds 10 vectors"):
        VectorStore(8).load(tmp_path, "v.npy", "i.faiss")
    with pytest.raises(ValueError, match="expected float32"):
        VectorStore(4).load(tmp_path, "v.npy", "i.faiss")


# -- exact search in torch (the GPU path without faiss-gpu, run here on the CPU) ---------------
def test_torch_search_gives_faiss_flat_hits(monkeypatch):
    from scanrag.indexes import vector_store

    data, queries = _unit(500, 16, 20), _unit(7, 16, 21)
    reference, on_torch = VectorStore(16), VectorStore(16, torch_device="cpu")
    for store in (reference, on_torch):
        store.add(data[:300])
        store.add(data[300:])
    assert (reference.search_backend, on_torch.search_backend) == ("faiss-cpu", "torch:cpu")
    for n in (1, 10, 500, 900):
        want, got = reference.search(queries, n), on_torch.search(queries, n)
        assert np.array_equal(got[1], want[1])
        assert got[0] == pytest.approx(want[0], abs=1e-5)
        assert got[0].dtype == np.float32 and got[1].dtype == np.int64
    monkeypatch.setattr(vector_store, "TORCH_SCORE_BYTES", 4 * 500 * 2)  # 2 queries a slice
    assert np.array_equal(on_torch.search(queries, 5)[1], reference.search(queries, 5)[1])
    assert on_torch.max_fetch == 500


def test_torch_search_follows_additions_and_loads(tmp_path):
    store = VectorStore(8, torch_device="cpu")
    store.add(_unit(10, 8, 22))
    query = _unit(1, 8, 23)
    store.search(query, 3)
    extra = _unit(5, 8, 24)
    store.add(extra)
    assert store.search(extra[2:3], 1)[1].tolist() == [[12]]
    store.save(tmp_path, "v.npy", "i.faiss")
    loaded = VectorStore(8, torch_device="cpu")
    assert loaded.search(query, 1)[1].shape == (1, 0)  # empty before loading
    loaded.load(tmp_path, "v.npy", "i.faiss")
    assert np.array_equal(loaded.search(query, 15)[1], store.search(query, 15)[1])
    assert VectorStore(8, torch_device="cpu").search(query, 3)[1].shape == (1, 0)


def test_torch_search_only_for_flat_and_never_beside_faiss_gpu():
    assert VectorStore(8, kind="ivf", torch_device="cuda").search_backend == "faiss-cpu"
    assert VectorStore(8, kind="hnsw", torch_device="cuda").search_backend == "faiss-cpu"
    both = VectorStore(8, use_gpu=True, torch_device="cuda")
    assert both.search_backend == "faiss-gpu" and both.torch_device is None
