"""The ONNX Runtime encoder backend: export, agreement with torch, caching, backend choice.

Exports use the tiny offline encoder (``scanrag.indexes.dense_tiny``) into a temporary model folder;
the bundled MiniLM is only read for its layout, never exported here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from scanrag.indexes import encoders
from scanrag.indexes.dense import DenseIndex
from scanrag.indexes.dense_tiny import tiny_encoder_dir
from scanrag.indexes.encoders import CPU_BACKEND, load_encoder, model_fingerprint, resolve_backend
from scanrag.indexes.errors import ModelLoadError
from scanrag.indexes.onnx_encoder import exported_model, load_onnx_encoder, read_layout

pytestmark = pytest.mark.model

TEXTS = [
    "Quarterly revenue grew twelve percent in Europe.",
    "The telescope observed a distant galaxy.",
    "water " * 200,  # longer than the tiny model's 64-token window: truncated
    "",
]


@pytest.fixture(scope="module")
def tiny() -> str:
    return str(tiny_encoder_dir())


@pytest.fixture(autouse=True)
def model_dir(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.getbasetemp() / "models"
    monkeypatch.setenv("SCANRAG_MODEL_DIR", str(folder))
    return folder


@pytest.mark.parametrize(("variant", "least"), [("fp32", 0.99999), ("int8", 0.98)])
def test_onnx_vectors_agree_with_sentence_transformers(tiny, variant, least):
    reference = load_encoder(tiny, "cpu", backend="torch").encode(TEXTS, normalize_embeddings=True)
    encoder = load_onnx_encoder(tiny, model_fingerprint(tiny), variant)
    vectors = encoder.encode(TEXTS, batch_size=3, normalize_embeddings=True)
    assert vectors.shape == reference.shape and vectors.dtype == np.float32
    cosine = (vectors * reference).sum(1)
    assert cosine.min() >= least
    assert encoder.max_seq_length == 64


def test_export_is_cached_by_fingerprint(tiny, model_dir):
    first = exported_model(tiny, model_fingerprint(tiny), "int8")
    stamp = first.stat().st_mtime_ns
    assert exported_model(tiny, model_fingerprint(tiny), "int8") == first
    assert first.stat().st_mtime_ns == stamp
    assert first.is_relative_to(model_dir / "onnx")
    other = exported_model(tiny, "another-fingerprint", "int8")
    assert other != first


def test_bundled_minilm_layout():
    folder, _ = encoders.resolve_model("all-MiniLM-L6-v2")
    layout = read_layout(folder)
    assert (layout.pooling, layout.normalize, layout.max_seq_length) == ("mean", True, 256)
    assert (layout.model_type, layout.num_heads, layout.hidden_size) == ("bert", 12, 384)


def test_unsupported_pooling_is_refused(tmp_path):
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text(
        json.dumps(
            [
                {"path": "", "type": "sentence_transformers.models.Transformer"},
                {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            ]
        )
    )
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "max"}))
    with pytest.raises(ModelLoadError, match="use backend 'torch'"):
        read_layout(tmp_path)
    assert read_layout(tmp_path, pooling="cls").pooling == "cls"  # an explicit choice wins


def test_backend_resolution(tiny):
    assert resolve_backend("auto", "cuda", tiny) == "torch-fp16"  # CUDA_BACKEND
    assert resolve_backend("auto", "cuda:1", tiny) == "torch-fp16"
    assert resolve_backend("auto", "cpu", tiny) == CPU_BACKEND
    assert resolve_backend("auto", "cpu", "some-org/hub-model") == "torch"  # nothing to export
    assert resolve_backend("onnx-int8", "cpu", tiny) == "onnx-int8"
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        resolve_backend("gpu", "cpu", tiny)


def test_dense_index_records_the_backend(tiny, make_document):
    docs = [make_document("e.pdf", ["Revenue grew in Europe.", "A galaxy far away."])]
    onnx = DenseIndex(tiny, backend="onnx-int8", device="cpu")
    onnx.add(docs)
    torch = DenseIndex(tiny, backend="torch", device="cpu")
    torch.add(docs)
    extra = onnx.manifest()["extra"]
    assert (extra["backend"], extra["backend_requested"]) == ("onnx-int8", "onnx-int8")
    assert "onnxruntime" in onnx.libraries() and "onnxruntime" not in torch.libraries()
    assert torch.manifest()["extra"]["backend"] == "torch"
    cosine = (onnx.store.vectors * torch.store.vectors).sum(1)
    assert cosine.min() > 0.98
    assert onnx.params() == torch.params()  # same stored contents, up to int8 rounding


def test_auto_falls_back_to_torch_when_onnx_cannot_load(tiny, monkeypatch):
    def refuse(*args, **kwargs):
        raise ModelLoadError("no export for this model")

    monkeypatch.setattr(encoders, "CPU_BACKEND", "onnx")  # a CPU default of ONNX, were it chosen
    monkeypatch.setattr(encoders, "_build_onnx", refuse)
    monkeypatch.setattr(encoders, "_ENCODERS", {})
    assert encoders.resolve_backend("auto", "cpu", tiny) == "onnx"
    assert DenseIndex(tiny, device="cpu").backend == "torch"
    with pytest.raises(ModelLoadError, match="no export"):
        DenseIndex(tiny, backend="onnx", device="cpu")


def test_bad_backend_rejected_before_loading():
    with pytest.raises(ValueError, match="unknown backend"):
        DenseIndex.check_params({"backend": "tensorrt"})
    with pytest.raises(ValueError, match="unknown query_mode"):
        DenseIndex.check_params({"query_mode": "expand"})


def test_bf16_backend_vectors_match_fp32(tiny, make_document):
    """``torch-bf16``: the same model in bfloat16 (float32 out), recorded in the manifest;
    vectors within 1e-2 cosine of fp32 for the tiny model (MiniLM: >= 0.9999, see
    benchmarks/retrieval.py), and an fp32 index searched with bf16 queries still ranks."""
    docs = [make_document("e.pdf", ["Revenue grew in Europe.", "A galaxy far away."])]
    bf16 = DenseIndex(tiny, backend="torch-bf16", device="cpu")
    bf16.add(docs)
    fp32 = DenseIndex(tiny, backend="torch", device="cpu")
    fp32.add(docs)
    assert bf16.store.vectors.dtype == np.float32
    assert bf16.manifest()["extra"]["backend"] == "torch-bf16"
    assert "onnxruntime" not in bf16.libraries()
    cosine = (bf16.store.vectors * fp32.store.vectors).sum(1)
    assert cosine.min() > 0.99
    assert bf16.params() == fp32.params()
    scope = [docs[0].id]
    assert bf16.search("galaxy", 2, scope)[0].page == fp32.search("galaxy", 2, scope)[0].page
