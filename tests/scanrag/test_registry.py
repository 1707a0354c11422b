"""Registries: decorator and lazy registration, entry points, helpful unknown-name errors."""

from __future__ import annotations

import pytest

from scanrag.registry import (
    COMMANDS,
    RETRIEVERS,
    SCORERS,
    STRATEGIES,
    Registry,
    RegistryError,
    UnknownNameError,
)


def test_decorator_registration_and_create() -> None:
    reg: Registry[object] = Registry("widget", "scanrag.tests.none")

    @reg.register("double")
    def make_double(x: int) -> int:
        return 2 * x

    assert reg.create("double", x=4) == 8
    assert reg.names() == ["double"]
    assert "double" in reg


def test_unknown_name_lists_known_ones() -> None:
    reg: Registry[object] = Registry("widget", "scanrag.tests.none")
    reg.register("alpha")(lambda: 1)
    reg.register("beta")(lambda: 2)
    with pytest.raises(UnknownNameError) as info:
        reg.get("gamma")
    assert "unknown widget 'gamma'" in str(info.value)
    assert "alpha, beta" in str(info.value)


def test_duplicate_registration_needs_replace() -> None:
    reg: Registry[object] = Registry("widget", "scanrag.tests.none")
    reg.register("a")(lambda: 1)
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a")(lambda: 2)
    reg.register("a", replace=True)(lambda: 3)
    assert reg.create("a") == 3


def test_lazy_target_imports_on_first_use() -> None:
    reg: Registry[object] = Registry("widget", "scanrag.tests.none")
    reg.register_lazy("ordered", "collections:OrderedDict")
    assert reg.create("ordered") == {}


def test_broken_lazy_target_raises_registry_error() -> None:
    reg: Registry[object] = Registry("widget", "scanrag.tests.none")
    reg.register_lazy("broken", "scanrag.no_such_module:thing")
    with pytest.raises(RegistryError, match="cannot load scanrag.no_such_module:thing"):
        reg.get("broken")


def test_invalid_names_are_rejected() -> None:
    reg: Registry[object] = Registry("widget", "scanrag.tests.none")
    with pytest.raises(ValueError):
        reg.register("has space")(lambda: 1)


def test_builtins_come_from_entry_points() -> None:
    assert {"bm25", "dense", "colpali", "hybrid", "oracle"} <= set(RETRIEVERS.names())
    builtin_strategies = {"full_doc", "topk_rag", "agentic_rag", "scan", "oracle_pages"}
    assert builtin_strategies <= set(STRATEGIES.names())
    assert {"ingest", "run", "score", "report"} <= set(COMMANDS.names())
    assert isinstance(SCORERS.names(), list)
