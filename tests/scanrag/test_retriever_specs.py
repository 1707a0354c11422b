"""Retriever aliases resolved inside composites, checked without building, built bottom-up.

A private registry of tiny fake retrievers keeps these tests independent of the real ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from scanrag.config.sections import RetrieverSpec
from scanrag.protocols import Retriever
from scanrag.registry import RETRIEVERS, Registry, UnknownNameError
from scanrag.retriever_specs import (
    RetrieverSpecError,
    RetrieverSpecs,
    component_entry,
    create_retriever,
)


class Leaf:
    name = "leaf"

    def __init__(self, size: int = 1) -> None:
        self.check_params({"size": size})
        self.size = size

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        if arguments.get("size", 1) < 1:
            raise ValueError(f"size must be >= 1, got {arguments['size']}")

    def add(self, documents): ...
    def search(self, query, k, doc_ids=None):
        return []

    def search_batch(self, queries, k, doc_ids=None):
        return [[] for _ in queries]

    def manifest(self):
        return {"retriever": self.name, "size": self.size}


class Gold(Leaf):
    name = "gold"

    def __init__(self, samples: Sequence[str] = ()) -> None:
        super().__init__()
        self.samples = list(samples)


class Fuse(Leaf):
    name = "fuse"
    component_params = ("parts",)

    def __init__(self, parts: Sequence[Any] = ("leaf",), depth: int = 5) -> None:
        super().__init__()
        self.parts, self.depth = list(parts), depth


@pytest.fixture
def registry() -> Registry[Any]:
    reg: Registry[Any] = Registry("retriever", "scanrag.no_such_group")
    for cls in (Leaf, Gold, Fuse):
        reg.register(cls.name)(cls)
    return reg


def _specs(registry, **aliases: dict[str, Any]) -> RetrieverSpecs:
    return RetrieverSpecs(
        {a: RetrieverSpec.model_validate(s) for a, s in aliases.items()}, registry
    )


def test_aliases_resolve_inside_composites_and_samples_reach_every_level(registry) -> None:
    specs = _specs(
        registry,
        leaf={},
        big={"type": "leaf", "params": {"size": 7}},
        fused={"type": "fuse", "params": {"parts": ["big", "gold", {"name": "leaf", "size": 2}]}},
    )
    assert specs.problems() == []
    fused = specs.build("fused", inject={"samples": ["q1"]})
    big, gold, inline = fused.parts
    assert (type(big), big.size) == (Leaf, 7)  # the alias, not the registered leaf
    assert isinstance(gold, Gold) and gold.samples == ["q1"]  # registered name, injected
    assert (type(inline), inline.size) == (Leaf, 2)
    assert specs.references("fused") == ["big"]


def test_the_check_binds_every_type_and_the_build_asks_the_registry_nothing(
    registry, monkeypatch
) -> None:
    specs = _specs(registry, fused={"type": "fuse"}, gold={}, wide={"type": "fuse", "params": {
        "parts": ["gold", {"name": "leaf", "size": 2}]}})  # fmt: skip
    assert specs.problems() == []
    # the aliases' types, the components named, and fuse's default part ("leaf")
    assert set(specs.factories) == {"fuse", "gold", "leaf"}

    def looked_up(name: str) -> None:
        raise AssertionError(f"{name!r} looked up after the check")

    monkeypatch.setattr(registry, "get", looked_up)
    pooled = specs.with_pool(None)
    assert pooled.factories is specs.factories  # one binding for every pool
    assert [type(p) for p in pooled.build("fused").parts] == [Leaf]
    wide = pooled.build("wide", inject={"samples": ["q1"]})
    assert isinstance(wide.parts[0], Gold) and wide.parts[0].samples == ["q1"]
    assert wide.parts[1].size == 2


def test_an_unbound_type_is_looked_up_and_an_unknown_one_listed(registry) -> None:
    specs = _specs(registry)
    assert type(specs.build_type("leaf", {"size": 3})) is Leaf
    assert "leaf" in specs.factories
    with pytest.raises(UnknownNameError, match="fuse"):
        specs.factory("fuze")


def test_nested_mapping_form_and_reuse_of_built_aliases(registry) -> None:
    specs = _specs(
        registry,
        big={"type": "leaf", "params": {"size": 3}},
        fused={
            "type": "fuse",
            "params": {"parts": ["big", {"type": "leaf", "params": {"size": 4}}]},
        },
    )
    already = Leaf(size=3)
    fused = specs.build("fused", built={"big": already})
    assert fused.parts[0] is already and fused.parts[1].size == 4


def test_problems_are_reported_under_their_config_keys(registry) -> None:
    specs = _specs(
        registry,
        big={"type": "leaf", "params": {"sise": 3}},
        fused={
            "type": "fuse",
            "params": {
                "parts": ["big", "nope", {"name": "leaf", "size": 0}, {"size": 1}, 5],
                "depth": "deep",
            },
        },
        single={"type": "fuse", "params": {"parts": "big"}},
    )
    problems = specs.problems()
    assert problems == [
        "retrievers.big.params: got an unexpected keyword argument 'sise'; accepted: size",
        "retrievers.fused.params.depth: Input should be a valid integer, got 'deep'",
        "retrievers.fused.params.parts.1: 'nope' is neither a retriever alias of this config "
        "(defined: big, fused, single) nor a registered retriever (known: fuse, gold, leaf)",
        "retrievers.fused.params.parts.2: size must be >= 1, got 0",
        "retrievers.fused.params.parts.3: a component mapping needs one 'name' (or 'type') key, "
        "got ['size']",
        "retrievers.fused.params.parts.4: expected a retriever alias, a registered name or a "
        "mapping {name: ..., <params>}, got 5",
        "retrievers.single.params.parts: 'parts' takes a list of retrievers (aliases, names or "
        "mappings), got 'big'",
    ]


def test_cycles_are_reported_once_and_refuse_to_build(registry) -> None:
    specs = _specs(
        registry,
        a={"type": "fuse", "params": {"parts": ["b"]}},
        b={"type": "fuse", "params": {"parts": [{"name": "fuse", "parts": ["a"]}]}},
        me={"type": "fuse", "params": {"parts": ["me"]}},
    )
    problems = specs.problems()
    assert len(problems) == 2
    assert problems[0].startswith("retrievers.b.params.parts.0.parts.0: retriever aliases")
    assert "a → b → a" in problems[0]
    assert problems[1].startswith("retrievers.me.params.parts.0:") and "me → me" in problems[1]
    with pytest.raises(RetrieverSpecError, match="a → b → a"):
        specs.build("a")
    with pytest.raises(RetrieverSpecError, match="cycle"):
        specs.references("me")


def test_a_registered_name_in_a_mapping_is_never_an_alias(registry) -> None:
    specs = _specs(registry, leaf={"type": "fuse", "params": {"parts": [{"name": "leaf"}]}})
    assert specs.problems() == []
    assert type(specs.build("leaf").parts[0]) is Leaf


def test_component_entry_forms() -> None:
    assert component_entry({"name": "x", "a": 1}) == ("x", {"a": 1})
    assert component_entry({"type": "x", "params": {"a": 1}}) == ("x", {"a": 1})
    with pytest.raises(RetrieverSpecError, match="one 'name'"):
        component_entry({"name": "x", "type": "y"})
    with pytest.raises(RetrieverSpecError, match="must be a string"):
        component_entry({"name": 3})


# -- create_retriever over the real registry ---------------------------------------------------


def test_create_retriever_unknown_name_lists_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="known retrievers: .*bm25.*oracle"):
        create_retriever("no-such-retriever")


def test_create_retriever_rejects_a_factory_that_builds_no_retriever() -> None:
    RETRIEVERS.register("not_a_retriever")(lambda: object())
    try:
        with pytest.raises(TypeError, match="lacks the Retriever protocol"):
            create_retriever("not_a_retriever")
    finally:
        RETRIEVERS.unregister("not_a_retriever")


def test_create_retriever_params_are_the_constructor_arguments() -> None:
    from scanrag.indexes.bm25 import BM25Index

    retriever = create_retriever("bm25", {"k1": 1.1, "tokenizer": {"stopwords": "english"}})
    assert isinstance(retriever, BM25Index) and isinstance(retriever, Retriever)
    assert retriever.manifest()["params"]["k1"] == 1.1
    with pytest.raises(TypeError):
        create_retriever("bm25", {"no_such_param": 1})
