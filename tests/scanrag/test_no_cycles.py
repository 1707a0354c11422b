"""The project's import graph has no cycle, and no module forwards another module's names.

The graph is read from the source (``ast``): every ``import`` and ``from ... import`` of a
project module, at module level or inside a function, points at the most specific module it
names (``a.b.c`` when that is a module, else ``a.b``). Imports that only type checkers run
count too: a cycle there is the same tangle. A cycle is a path of imports that comes back to
where it started.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

from tests.conftest import load_bench_script

REPO = Path(__file__).resolve().parents[2]
PACKAGES = (
    "scanrag",
    "indexes",
    "retrievers",
    "agents",
    "graphs",
    "evaluation",
    "loaders",
    "synth",
)


STRUCTURE = load_bench_script("structure")  # maps folders to installed module names


def _modules() -> dict[str, Path]:
    """Every project module by its installed name."""
    found: dict[str, Path] = STRUCTURE.module_files(REPO)
    return found


def _in_package(module: str, package: str) -> bool:
    return bool(STRUCTURE.package_of(module) == package)


def _targets(node: ast.AST, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        names = [f"{node.module}.{alias.name}" for alias in node.names]
        return [name if name in modules else node.module for name in names]
    return []


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            graph[name] |= {t for t in _targets(node, modules) if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as the path that closes it, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert graph["scanrag.evaluation.docscope.region"]  # the graph is read (a module with imports)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    assert find_cycle({"a": {"a", "b"}, "b": {"a"}}) == ["a", "a"]


def _all_names(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return list(value)
    return []


def _forwarded(name: str, path: Path) -> list[str]:
    """Names ``name`` exports (``__all__``) that it imports from a module it does not own:
    for a package, its own sub-modules are its own."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.update({a.asname or a.name: node.module for a in node.names})
    owned = name + "." if path.name == "__init__.py" else None
    return [
        f"{export} (from {imported[export]})"
        for export in _all_names(tree)
        if export in imported and not (owned and imported[export].startswith(owned))
    ]


def _module_getattr(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef):
        return node.name == "__getattr__"
    return isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__getattr__" for t in node.targets
    )


def _lazy_own(node: ast.stmt, name: str, path: Path) -> bool:
    """A package's ``__getattr__`` that imports its own sub-modules on first use (to stay
    light), never another module's names."""
    if path.name != "__init__.py" or not isinstance(node, ast.FunctionDef):
        return False
    sources = [n.module or "" for n in ast.walk(node) if isinstance(n, ast.ImportFrom)]
    return bool(sources) and all(s.startswith(name + ".") for s in sources)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_forwards_names(package: str) -> None:
    """No alias modules (a module ``__getattr__`` handing out names) and no re-exports of
    another module's names: every name is imported from the module that owns it."""
    found = {}
    for name, path in sorted(_modules().items()):
        if not _in_package(name, package):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        getattr_ = [
            f"__getattr__ (line {node.lineno})"
            for node in tree.body
            if _module_getattr(node) and not _lazy_own(node, name, path)
        ]
        if getattr_ or (forwarded := _forwarded(name, path)):
            found[name] = getattr_ or forwarded
    assert not found, f"modules that forward names: {found}"


GONE = [
    "scanrag._moved",
    "scanrag.compat",
    "scanrag.commands.synth",
    "scanrag.runner.store",
    "scanrag.evaluation.rundir",
    "scanrag.retrievers.base",
    "scanrag.retrievers.bm25",
    "scanrag.retrievers.dense",
    "scanrag.retrievers.colpali",
    *(f"scanrag.datasets.{n}" for n in ("docscope", "financebench", "mmlongbench", "scholscan")),
    "scanrag.datasets.sinbench",
    # evaluation's flat modules, now in their family's sub-package or scanrag.evaluation.cli
    *(f"scanrag.evaluation.{n}" for n in ("scholscan_formula", "sinbench_metrics", "recall")),
    *(f"scanrag.evaluation.{n}" for n in ("faithfulness_meta", "faithfulness_text")),
    *(f"scanrag.evaluation.{n}" for n in ("retrieval_eval", "retrieve_cli", "agreement_cli")),
    "scanrag.evaluation.report.cli",
    "scanrag.evaluation.report.export_cli",
    "scanrag.evaluation.docscope.import_cli",
]
GONE_NAMES = [
    ("scanrag.agents.tags", "verdict_word"),
    ("scanrag.agents.structured", "extract_json"),
    ("scanrag.evaluation.judging", "json_candidates"),
    ("scanrag.evaluation.sinbench.metrics", "parse_verdict"),
    ("scanrag.documents.pages", "_make_block"),
    ("scanrag.runner.datasets", "DATASETS_FILE"),
    ("scanrag.runner.manifest", "Scrubber"),
    ("scanrag.datasets", "LOADERS"),
    ("scanrag.graphs.base", "LinearState"),
    ("scanrag.graphs.scan", "ScanState"),
    ("scanrag.agents.agentic", "AgentState"),
]


@pytest.mark.parametrize("module", GONE)
def test_the_old_module_paths_are_gone(module: str) -> None:
    assert importlib.util.find_spec(module) is None


@pytest.mark.parametrize(("module", "name"), GONE_NAMES)
def test_the_old_names_are_gone(module: str, name: str) -> None:
    assert not hasattr(importlib.import_module(module), name)
