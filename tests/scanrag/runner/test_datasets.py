"""The runner reaches the synthetic generator only through the ``synthetic`` loader entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scanrag.config import DatasetSpec
from scanrag.datasets import Dataset
from scanrag.registry import LOADERS
from scanrag.runner.datasets import load_dataset_spec, synthetic_dir
from scanrag.schemas import Sample


def test_a_synthetic_spec_is_read_by_the_registered_loader(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    def fake(path: Path, pdf_dir: Any = None, validate: bool = True, **params: Any) -> Dataset:
        calls.append({"path": path, "validate": validate, **params})
        sample = Sample(id="s1", doc_ids=["a.pdf"], question="q?")
        return Dataset(name="fake", samples=[sample], pdf_dir=tmp_path / "pdfs")

    original = LOADERS.get("synthetic")
    LOADERS.register("synthetic", replace=True)(fake)
    try:
        spec = DatasetSpec.model_validate({"synthetic": {"seed": 3, "docs": 2}})
        loaded = load_dataset_spec(spec, tmp_path)
    finally:
        LOADERS.register("synthetic", replace=True)(original)
    assert calls == [
        {"path": synthetic_dir(tmp_path, spec.synthetic), "validate": False, "seed": 3, "n_docs": 2}
    ]
    assert [s.id for s in loaded.samples] == ["s1"] and loaded.loader == "synthetic"
    assert loaded.bad == {"s1": f"missing PDF 'a.pdf' in {tmp_path / 'pdfs'}"}


def test_the_synthetic_loader_checks_its_own_options() -> None:
    loader = LOADERS.get("synthetic")
    assert loader.option_problems({"seed": 0, "n_docs": 2, "scan_docs": 1}) == []
    ((where, message),) = loader.option_problems({"n_docs": 2, "scan_docs": 5})
    assert where == "" and "scan_docs must lie in 0..n_docs (2)" in message
    ((where, message),) = loader.option_problems({"pages": 3})
    assert where == "options" and "unexpected keyword argument 'pages'" in message


def test_a_new_corpus_appears_whole(tmp_path: Path) -> None:
    loader = LOADERS.get("synthetic")
    out = tmp_path / "corpus"
    dataset = loader(out, n_docs=1, min_pages=10, max_pages=10, scan_docs=0)
    assert (out / "manifest.json").is_file() and len(dataset) > 0
    assert not list(tmp_path.glob("corpus.partial-*"))
