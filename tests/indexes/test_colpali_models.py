"""Model family resolution, device selection and load errors (no weights are loaded)."""

from __future__ import annotations

import json

import pytest

from scanrag.indexes import colpali_models
from scanrag.indexes.colpali_models import FAMILIES, load_colpali, resolve_family, select_device
from scanrag.indexes.errors import ModelLoadError


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("vidore/colpali-v1.3", "colpali"),
        ("vidore/colqwen2-v1.0", "colqwen2"),
        ("vidore/colqwen2.5-v0.2", "colqwen2_5"),
        ("someone/ColQwen2_5-finetune", "colqwen2_5"),
        ("vidore/colSmol-256M", "colidefics3"),
        ("vidore/colidefics3-v0.1", "colidefics3"),
    ],
)
def test_family_from_hub_name(name, family):
    assert resolve_family(name).name == family


@pytest.mark.parametrize(
    ("files", "family"),
    [
        ({"config.json": {"model_type": "qwen2_5_vl"}}, "colqwen2_5"),
        ({"config.json": {"model_type": "paligemma"}}, "colpali"),
        ({"config.json": {"model_type": "idefics3"}}, "colidefics3"),
        ({"adapter_config.json": {"base_model_name_or_path": "vidore/colqwen2-base"}}, "colqwen2"),
    ],
)
def test_family_from_local_directory(tmp_path, files, family):
    folder = tmp_path / "my-model"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data))
    assert resolve_family(str(folder)).name == family


def test_explicit_family_and_unknown_names():
    assert resolve_family("my/model", family="colpali").name == "colpali"
    with pytest.raises(ModelLoadError, match="colqwen2"):
        resolve_family("bert-base-uncased")
    with pytest.raises(ModelLoadError, match="unknown ColPali model family 'nope'"):
        resolve_family("x", family="nope")
    assert {"colpali", "colqwen2", "colqwen2_5", "colidefics3"} <= set(FAMILIES)


def test_device_is_cuda_when_available(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert select_device() == "cuda"
    assert select_device("auto") == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert select_device() == "cpu"
    assert select_device("cuda:1") == "cuda:1"


def test_missing_local_directory_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_colpali(str(tmp_path / "colqwen2-missing"))


def test_max_visual_tokens_only_for_qwen_families(monkeypatch):
    monkeypatch.setattr(colpali_models, "select_device", lambda device=None: "cpu")
    with pytest.raises(ValueError, match="max_visual_tokens"):
        load_colpali("vidore/colpali-v1.3", max_visual_tokens=256)


def test_unreachable_hub_model_names_the_model(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="vidore/colqwen2-not-cached") as info:
        load_colpali("vidore/colqwen2-not-cached", device="cpu")
    assert "hub is off" in str(info.value)
