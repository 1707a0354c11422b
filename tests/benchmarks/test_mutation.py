"""The mutation runner's own machinery, on a tiny module written to a temporary folder."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

TINY = '''"""A docstring is left alone."""

__all__ = ["step"]


def step(x: int, flag: bool = True) -> int:
    """So is this one."""
    if x > 2 and flag:
        raise ValueError("the message is left alone")
    return x + 1
'''

TINY_TEST = """from tinymod import step


def test_step() -> None:
    assert step(1) == 2
"""


@pytest.fixture
def mutation(bench_script: Callable[[str], ModuleType]) -> ModuleType:
    return bench_script("mutation")


@pytest.fixture
def tiny(mutation: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tinymod.py").write_text(TINY, encoding="utf-8")
    (tmp_path / "test_tinymod.py").write_text(TINY_TEST, encoding="utf-8")
    monkeypatch.setattr(mutation, "REPO", tmp_path)
    monkeypatch.setattr(mutation, "PROJECT_PACKAGES", ("tinymod",))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _edits(mutation: ModuleType) -> set[tuple[str, str, str]]:
    return {(m.kind, m.before, m.after) for m, _ in mutation.mutants_of("tinymod")[1]}


def test_sites_cover_every_operator_and_skip_docs_messages_and_all(
    mutation: ModuleType, tiny: Path
) -> None:
    assert _edits(mutation) == {
        ("const", "True", "False"),  # the default of flag
        ("cmp0", "Gt", "GtE"),
        ("const", "2", "3"),
        ("const", "2", "0"),
        ("boolop", "And", "Or"),
        ("return", "return", "return None"),
        ("binop", "Add", "Sub"),
        ("const", "1", "2"),
        ("const", "1", "0"),
    }
    ids = [m.id for m, _ in mutation.mutants_of("tinymod")[1]]
    assert "tinymod:step:8:7:cmp0:Gt->GtE" in ids
    assert len(ids) == len(set(ids))


def _mutant(mutation: ModuleType, kind: str, after: str) -> tuple[ast.Module, object, ast.AST]:
    tree, mutants = mutation.mutants_of("tinymod")
    for mutant, node in mutants:
        if mutant.kind == kind and mutant.after == after:
            return tree, mutant, node
    raise AssertionError(f"no {kind} -> {after}")


def _load(tree: ast.Module) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(tree, "tinymod.py", "exec"), namespace)
    return namespace


def test_a_mutant_changes_only_its_site_and_leaves_the_tree_alone(
    mutation: ModuleType, tiny: Path
) -> None:
    tree, mutant, node = _mutant(mutation, "binop", "Sub")
    step = _load(mutation.mutated_tree(tree, node, mutant))["step"]
    assert step(5, False) == 4  # type: ignore[operator]
    assert _load(tree)["step"](5, False) == 6  # type: ignore[operator]

    tree, mutant, node = _mutant(mutation, "cmp0", "GtE")
    step = _load(mutation.mutated_tree(tree, node, mutant))["step"]
    with pytest.raises(ValueError):
        step(2)  # type: ignore[operator]
    assert _load(tree)["step"](2) == 3  # type: ignore[operator]

    tree, mutant, node = _mutant(mutation, "return", "return None")
    assert _load(mutation.mutated_tree(tree, node, mutant))["step"](0) is None  # type: ignore[operator]

    text = mutation.show(mutant, tree, node)
    assert "- return x + 1" in text and "+ return None" in text


def test_run_once_tells_killed_from_survived_and_checks_the_hook(
    mutation: ModuleType, tiny: Path
) -> None:
    log = tiny / "run.log"
    tests = ["test_tinymod.py"]
    assert mutation.run_once("tinymod", None, tests, 60, log)[0] == "passed"

    tree, mutant, node = _mutant(mutation, "binop", "Sub")  # step(1) == 0: killed
    code = compile(mutation.mutated_tree(tree, node, mutant), "tinymod.py", "exec")
    assert mutation.run_once("tinymod", code, tests, 60, log)[0] == "failed"

    tree, mutant, node = _mutant(mutation, "cmp0", "GtE")  # step(1) never reaches 2: survives
    code = compile(mutation.mutated_tree(tree, node, mutant), "tinymod.py", "exec")
    assert mutation.run_once("tinymod", code, tests, 60, log)[0] == "passed"

    (tiny / "test_other.py").write_text("def test_nothing() -> None:\n    pass\n")
    outcome = mutation.run_once("tinymod", code, ["test_other.py"], 60, log)[0]
    assert outcome == "not_loaded"  # the mutant was never imported: the mapping is wrong


def test_run_module_counts_killed_survived_and_equivalent(
    mutation: ModuleType, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    equivalent = "tinymod:step:8:11:const:2->3"
    survivors = ["tinymod:step:6:30:const:True->False", "tinymod:step:8:7:cmp0:Gt->GtE"]
    killed = ["tinymod:step:8:11:const:2->0", "tinymod:step:10:11:binop:Add->Sub"]
    monkeypatch.setattr(mutation, "EQUIVALENT", {equivalent: "reason"})
    only = {equivalent, *survivors, *killed}
    result, details = mutation.run_module(
        "tinymod", ["test_tinymod.py"], None, 0, tiny, verbose=False, only=only
    )
    # The test only checks step(1) == 2: the default flag=False and x >= 2 leave that alone;
    # 2 -> 0 raises and x - 1 is 0.
    assert (result.status, result.generated, result.sampled) == ("ok", 9, 5)
    assert (result.killed, result.survived, result.equivalent) == (2, 2, 1)
    assert sorted(result.survivors) == survivors
    assert result.rate == 0.5
    assert len(details) == 2 and details[0].startswith(survivors[0])


def test_absent_modules_and_missing_tests_are_reported(mutation: ModuleType, tiny: Path) -> None:
    assert mutation.run_module("nomod", ["test_tinymod.py"], None, 0, tiny, False)[0].status == (
        "absent"
    )
    assert mutation.run_module("tinymod", ["test_none.py"], None, 0, tiny, False)[0].status == (
        "no tests"
    )


def test_a_package_stands_for_its_modules(
    mutation: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutation, "REPO", tmp_path)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Doc."""\nfrom pkg.a import x\n')
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "b.py").write_text("y = 2\n")
    assert mutation.expand("pkg") == ["pkg.a", "pkg.b"]
    (pkg / "__init__.py").write_text("z = 3\n")
    assert mutation.expand("pkg") == ["pkg", "pkg.a", "pkg.b"]
    assert mutation.expand("pkg.a") == ["pkg.a"]


def test_every_listed_equivalent_names_a_listed_module_and_gives_a_reason(
    mutation: ModuleType,
) -> None:
    modules = {sub for entry in mutation.MODULES for sub in mutation.expand(entry)}
    for key, reason in mutation.EQUIVALENT.items():
        module, scope, line, col, kind, edit = key.split(":", 5)
        assert module in modules, key
        assert scope and int(line) > 0 and int(col) >= 0 and "->" in edit and kind, key
        assert len(reason) > 20, key
