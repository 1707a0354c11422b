"""Encoder helpers: device selection, model resolution, presets, token windows."""

from __future__ import annotations

import faiss
import pytest
import torch

from scanrag.indexes import encoders
from scanrag.indexes.encoders import (
    DEFAULT_MODEL,
    PRESETS,
    DeviceChoice,
    faiss_dist,
    model_fingerprint,
    preset_for,
    resolve_model,
    select_devices,
    token_windows,
)
from scanrag.indexes.errors import ModelLoadError


@pytest.fixture
def gpu_faiss(monkeypatch):
    """Pretend the installed faiss has GPU support and sees ``gpus`` GPUs."""

    def install(gpus: int) -> None:
        monkeypatch.setattr(faiss, "StandardGpuResources", object, raising=False)
        monkeypatch.setattr(faiss, "index_cpu_to_gpu", lambda res, dev, idx: idx, raising=False)
        monkeypatch.setattr(faiss, "get_num_gpus", lambda: gpus, raising=False)

    return install


def test_cpu_when_no_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    choice = select_devices()
    assert choice.encoder == "cpu" and choice.faiss_gpu is False
    assert choice.torch_search is False and choice.search_device is None


def test_cuda_and_gpu_faiss_when_both_present(monkeypatch, gpu_faiss):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    gpu_faiss(1)
    choice = select_devices("auto")
    assert choice.encoder == "cuda" and choice.faiss_gpu is True
    assert choice.torch_search is False  # faiss-gpu searches


def test_cuda_with_cpu_only_faiss(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delattr(faiss, "StandardGpuResources", raising=False)
    choice = select_devices()
    assert choice.encoder == "cuda" and choice.faiss_gpu is False
    assert choice.torch_search is True and choice.search_device == "cuda"  # no faiss-gpu


def test_gpu_faiss_without_visible_gpu(monkeypatch, gpu_faiss):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    gpu_faiss(0)
    assert select_devices().faiss_gpu is False
    assert select_devices("cuda:1").search_device == "cuda:1"


def test_forced_cpu_keeps_faiss_on_cpu(monkeypatch, gpu_faiss):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    gpu_faiss(2)
    choice = select_devices("cpu")
    assert choice.encoder == "cpu" and choice.faiss_gpu is False and not choice.torch_search


def test_gpu_index_follows_the_encoder_device():
    assert DeviceChoice("cuda:2", True).gpu_index == 2
    assert DeviceChoice("cuda", True).gpu_index == 0
    assert DeviceChoice("cpu", False).gpu_index == 0


def test_faiss_dist_names_the_installed_distribution(monkeypatch, gpu_faiss):
    assert faiss_dist() == "faiss-cpu"  # what the test environment installs
    gpu_faiss(1)  # a module with GPU support but only faiss-cpu installed: still faiss-cpu
    assert faiss_dist() == "faiss-cpu"


def test_bundled_model_resolves_to_package_dir():
    path, local = resolve_model(DEFAULT_MODEL)
    assert local and path.endswith("model")
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == (path, True)


def test_hub_names_and_local_dirs(tmp_path):
    assert resolve_model("BAAI/bge-small-en-v1.5") == ("BAAI/bge-small-en-v1.5", False)
    assert resolve_model(str(tmp_path)) == (str(tmp_path.resolve()), True)
    with pytest.raises(ModelLoadError, match="does not exist"):
        resolve_model(str(tmp_path / "missing"))


def test_presets():
    assert preset_for("BAAI/bge-small-en-v1.5").query_prefix.startswith("Represent this")
    assert preset_for("BAAI/bge-small-en-v1.5").passage_prefix == ""
    contriever = preset_for("facebook/contriever-msmarco")
    assert contriever.pooling == "mean" and contriever.normalize is False
    assert preset_for("intfloat/e5-base-v2").passage_prefix == "passage: "
    assert preset_for("some/unknown-model") == PRESETS[DEFAULT_MODEL]


def test_fingerprint_follows_file_contents(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    first = model_fingerprint(str(tmp_path))
    assert model_fingerprint(str(tmp_path)) == first
    (tmp_path / "config.json").write_text('{"a": 1}')
    assert model_fingerprint(str(tmp_path)) != first
    assert model_fingerprint("not-cached/model-xyz") == "unknown"


class WhitespaceTokenizer:
    """Tokens are whitespace-separated words, with character offsets."""

    def __call__(self, texts, add_special_tokens, return_offsets_mapping, verbose):
        import re

        return {"offset_mapping": [[m.span() for m in re.finditer(r"\S+", t)] for t in texts]}


def test_token_windows_split_with_overlap():
    text = "w1 w2  w3 w4 w5 w6 w7"
    pieces = token_windows([text, "short one"], WhitespaceTokenizer(), window=3, overlap=1)
    assert pieces[0] == ["w1 w2  w3", "w3 w4 w5", "w5 w6 w7"]
    assert pieces[1] == ["short one"]


def test_token_windows_last_piece_may_be_short():
    pieces = token_windows(["a b c d e"], WhitespaceTokenizer(), window=2, overlap=0)
    assert pieces == [["a b", "c d", "e"]]


@pytest.mark.parametrize(("window", "overlap"), [(0, 0), (3, 3), (3, -1)])
def test_token_windows_bad_settings(window, overlap):
    with pytest.raises(ValueError):
        token_windows(["a"], WhitespaceTokenizer(), window, overlap)


# -- the bf16 backend -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "native"),
    [
        ("fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8", True),
        ("fpu avx2 avx512f avx512_vnni", False),
        ("fpu avx2 avx512_bf16", False),  # bf16 dot products, no matrix units: not measured
    ],
)
def test_native_bf16_reads_the_cpu_flags(tmp_path, monkeypatch, flags, native):
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\n")
    monkeypatch.setattr(encoders, "CPUINFO", info)
    assert encoders.native_bf16() is native


def test_native_bf16_without_cpuinfo(tmp_path, monkeypatch):
    monkeypatch.setattr(encoders, "CPUINFO", tmp_path / "missing")
    assert encoders.native_bf16() is False


def test_bf16_is_an_explicit_choice_never_auto(monkeypatch):
    monkeypatch.setattr(encoders, "native_bf16", lambda: True)
    assert encoders.resolve_backend("torch-bf16", "cpu", DEFAULT_MODEL) == "torch-bf16"
    assert encoders.resolve_backend("auto", "cpu", DEFAULT_MODEL) == encoders.CPU_BACKEND
    assert encoders.resolve_backend("auto", "cuda", DEFAULT_MODEL) == "torch-fp16"


def test_bf16_on_a_cpu_without_it_warns(monkeypatch, caplog):
    monkeypatch.setattr(encoders, "native_bf16", lambda: False)
    layer = torch.nn.Linear(4, 4)
    with caplog.at_level("WARNING", logger="scanrag.indexes.encoders"):
        cast = encoders._to_bf16(layer, "cpu")
    assert cast.weight.dtype == torch.bfloat16
    assert "emulated" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="scanrag.indexes.encoders"):
        encoders._to_bf16(torch.nn.Linear(4, 4), "cuda")  # GPUs: no CPU flag to check
    assert caplog.text == ""
