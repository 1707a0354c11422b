"""The build-once folder cache behind the tiny offline models."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanrag.indexes.offline_models import cached_build


def _build(calls: list[Path]):
    def build(folder: Path) -> None:
        calls.append(folder)
        (folder / "model.json").write_text("{}")

    return build


def test_builds_once_then_reuses(tmp_path: Path) -> None:
    calls: list[Path] = []
    kw = {"source": __file__, "distributions": ("numpy",), "marker": "model.json"}
    first = cached_build("toy", seed=0, build=_build(calls), root=tmp_path, **kw)
    again = cached_build("toy", seed=0, build=_build(calls), root=tmp_path, **kw)
    other = cached_build("toy", seed=1, build=_build(calls), root=tmp_path, **kw)
    assert first == again != other and len(calls) == 2
    assert first.name.startswith("scanrag-tiny-toy-") and (first / "model.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, other.name])


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    def broken(folder: Path) -> None:
        (folder / "half.bin").write_bytes(b"x")
        raise RuntimeError("no weights")

    with pytest.raises(RuntimeError, match="no weights"):
        cached_build(
            "toy",
            source=__file__,
            distributions=(),
            seed=0,
            marker="m",
            build=broken,
            root=tmp_path,
        )
    assert list(tmp_path.iterdir()) == []
