"""Every retriever of every config the project shows builds and searches end to end.

The configs are the YAML blocks of README.md and docs/retrievers.md that declare retrievers and
every configs/*.yaml. Each goes the way ``scanrag run`` takes it: config validation, the
retriever preflight, ``scanrag.runner.components.build_retriever`` (aliases resolved inside
composites, samples injected), indexing the generated PDFs of conftest, then searching, and a
second build that loads the saved index (what a resumed run does). Hub models, which cannot be
downloaded here, are replaced by the tiny offline models (``scanrag.indexes.dense_tiny`` and the
tiny ColQwen2 of ``scanrag.indexes.colpali_tiny``); the bundled default encoder stays as it is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.registry import RETRIEVERS
from scanrag.retriever_specs import RetrieverSpecs, component_entry, component_params

pytestmark = pytest.mark.model
REPO = Path(__file__).resolve().parents[2]
MARKDOWN = [REPO / "README.md", REPO / "docs" / "retrievers.md"]
# Enough to make a partial example (a retrievers: section alone) a whole config.
FILLER = {
    "name": "example",
    "datasets": [{"name": "synthetic", "synthetic": {}}],
    "strategies": [{"name": "full_doc"}],
}


def shown_configs() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in MARKDOWN:
        blocks = re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)
        for i, block in enumerate(blocks):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and data.get("retrievers"):
                found.append((f"{path.name}#{i}", data))
    for path in sorted((REPO / "configs").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("retrievers"):
            found.append((path.name, data))
    return found


CONFIGS = shown_configs()


def test_the_shown_configs_are_found() -> None:
    names = [name for name, _ in CONFIGS]
    assert "quickstart.yaml" in names
    assert any(n.startswith("README.md#") for n in names)
    assert any(n.startswith("retrievers.md#") for n in names)


@pytest.fixture(scope="module")
def offline_models() -> dict[str, str]:
    from scanrag.indexes.colpali_tiny import tiny_model_dir
    from scanrag.indexes.dense_tiny import tiny_encoder_dir

    return {"dense": str(tiny_encoder_dir()), "colpali": str(tiny_model_dir("colqwen2"))}


def _offline(kind: str, params: dict[str, Any], models: dict[str, str]) -> dict[str, Any]:
    """``params`` with hub models replaced by the tiny offline ones, components included."""
    params = dict(params)
    model = params.get("model")
    if kind == "dense" and model is not None and not Path(model).is_dir():
        params["model"] = models["dense"]
    if kind == "colpali":
        if model is None or not Path(model).is_dir():
            params["model"] = models["colpali"]
        params.setdefault("device", "cpu")
    for name in component_params(RETRIEVERS.get(kind)):
        entries = []
        for entry in params.get(name, []):
            if isinstance(entry, dict):
                sub, sub_params = component_entry(entry)
                entry = {"name": sub, **_offline(sub, sub_params, models)}
            entries.append(entry)
        if name in params:
            params[name] = entries
    return params


def _config(data: dict[str, Any], models: dict[str, str]) -> Any:
    from scanrag.config import config_from_dict

    data = {**FILLER, **data} if "strategies" not in data else dict(data)
    retrievers = {}
    for alias, spec in data["retrievers"].items():
        spec = dict(spec or {})
        kind = spec.get("type") or alias
        retrievers[alias] = {**spec, "params": _offline(kind, spec.get("params", {}), models)}
    return config_from_dict({**data, "retrievers": retrievers})


def _check_hits(retriever: Any, samples: list[Any], by_name: dict[str, Any]) -> list[Any]:
    """Each question searched in its own document (conftest's corpus and samples)."""
    found = []
    for sample in samples:
        document = by_name[sample.primary_doc]
        hits = retriever.search(sample.question, 3, [document.id])
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert all(h.doc_id == document.id and 1 <= h.page <= document.num_pages for h in hits)
        if getattr(retriever, "exhaustive", True):
            assert len(hits) == min(3, document.num_pages)
        found.append(hits)
    return found


@pytest.fixture
def readme_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The README's config imports its retriever example as ``my_keyword.py`` (beside the
    config): that file, written from the README, in the current folder."""
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from test_readme import RETRIEVER_PLUGIN, _keyword_plugin

    _keyword_plugin(tmp_path)
    monkeypatch.chdir(tmp_path)
    yield RETRIEVER_PLUGIN
    RETRIEVERS.unregister("keyword")
    sys.modules.pop(Path(RETRIEVER_PLUGIN).stem, None)


@pytest.mark.parametrize(("source", "data"), CONFIGS, ids=[name for name, _ in CONFIGS])
def test_every_retriever_builds_indexes_and_searches(
    source, data, offline_models, corpus, by_name, samples, tmp_path, readme_plugins
) -> None:
    from scanrag.plugins import import_plugins
    from scanrag.runner.components import build_retriever
    from scanrag.runner.preflight import _retriever_problems

    assert set(data.get("plugins") or []) <= {readme_plugins}
    import_plugins(data.get("plugins") or [])
    config = _config(data, offline_models)
    specs = RetrieverSpecs(config.retrievers)
    assert _retriever_problems(specs) == []
    built = {}
    for alias in config.retrievers:
        folder = tmp_path / alias
        retriever = build_retriever(specs, alias, corpus, samples, folder)  # as a run builds
        manifest = retriever.manifest()
        assert manifest["retriever"] == specs.type_of(alias), source
        json.dumps(manifest)
        hits = _check_hits(retriever, samples, by_name)
        if (folder / "manifest.json").is_file():  # a resumed run loads the saved index
            again = build_retriever(config.retrievers, alias, corpus, samples, folder)  # unbound
            assert _check_hits(again, samples, by_name) == hits
        built[alias] = retriever
    for alias, retriever in built.items():  # a component named by alias is that alias
        entries = config.retrievers[alias].params.get("retrievers", [])
        for entry, component in zip(entries, getattr(retriever, "components", []), strict=True):
            if isinstance(entry, str) and entry in built:
                own = built[entry].manifest()
                assert component.manifest().get("params") == own.get("params"), (alias, entry)
                assert component.manifest().get("model") == own.get("model"), (alias, entry)
