"""The kernel and the scorers import without the heavy libraries, and imports flow one way:
scanrag → indexes → retrievers → agents → graphs, with evaluation depending only on scanrag."""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import load_bench_script

HEAVY = ("torch", "faiss", "litellm", "langgraph", "transformers", "sentence_transformers")
REPO = Path(__file__).resolve().parents[2]
# The layer diagram as the README draws it: each layer imports the kernel and the layer just
# below it, nothing else; the packages beside the layers import the kernel only.
LAYERS = ("scanrag", "indexes", "retrievers", "agents", "graphs")
BESIDE = ("evaluation", "loaders", "synth")
PACKAGES = (*LAYERS, *BESIDE)
STRUCTURE = load_bench_script("structure")  # maps folders to installed module names


def arrows() -> dict[str, set[str]]:
    """Package → the project packages it may import (besides itself), at any depth, lazily
    too: exactly the arrows of the diagram."""
    allowed: dict[str, set[str]] = {"scanrag": set()}
    for below, package in itertools.pairwise(LAYERS):
        allowed[package] = {"scanrag", below}
    allowed.update({package: {"scanrag"} for package in BESIDE})
    return allowed


@pytest.mark.parametrize("module", ["scanrag", "scanrag.llm", "scanrag.cli", "scanrag.evaluation"])
def test_light_import(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"importing {module} pulled in: {out}"


# Start-up: what ``scanrag --help`` (and ``--version``) must not load; every command registers
# its parser without them (issue 33: under 0.3 s and 100 MB on an idle core, see
# benchmarks/startup.py).
STARTUP_HEAVY = (*HEAVY, "numpy", "pydantic", "pymupdf", "pyarrow", "onnxruntime", "scipy")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_the_cli_starts_without_heavy_modules(flag: str) -> None:
    code = (
        "import contextlib, io, sys\n"
        "from scanrag.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main([{flag!r}])\n"
        f"print(','.join(m for m in {STARTUP_HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"scanrag {flag} pulled in: {done.stdout.strip()}"
    assert "unavailable" not in done.stderr  # every command registered


def _modules(package: str) -> list[str]:
    """The installed names of ``package``'s modules (``agents`` → ``scanrag.agents...``)."""
    return sorted(
        name for name in STRUCTURE.module_files(REPO) if STRUCTURE.package_of(name) == package
    )


def test_every_scorer_module_and_the_runner_import_light() -> None:
    wanted = [m for m in _modules("evaluation") if not m.startswith("scanrag.evaluation.report")]
    wanted += ["scanrag.runner", "scanrag.runner.engine", "scanrag.config", "scanrag.datasets"]
    wanted += _modules("loaders")
    code = (
        "import importlib, sys\n"
        f"for name in {wanted!r}: importlib.import_module(name)\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.strip()
    assert out == "", f"importing the scorers and the runner pulled in: {out}"


def _project_imports(path: Path) -> set[str]:
    """The layers (``scanrag`` for the kernel) whose modules ``path`` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(STRUCTURE.package_of(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "scanrag":  # ``from scanrag import agents`` names a layer
                found.update(STRUCTURE.package_of(f"scanrag.{a.name}") for a in node.names)
            else:
                found.add(STRUCTURE.package_of(node.module))
    return found & set(PACKAGES)


def _package_edges() -> dict[str, dict[str, list[str]]]:
    """Package → imported package → the files that import it."""
    edges: dict[str, dict[str, list[str]]] = {p: {} for p in PACKAGES}
    for name, path in sorted(STRUCTURE.module_files(REPO).items()):
        package = STRUCTURE.package_of(name)
        for other in _project_imports(path) - {package}:
            edges[package].setdefault(other, []).append(str(path.relative_to(REPO)))
    return edges


def test_the_readme_draws_the_same_diagram() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"`{' → '.join(LAYERS)}`" in readme
    for package in BESIDE:
        assert f"`{package}`" in readme


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_follow_the_arrows_exactly(package: str) -> None:
    wrong = {
        other: files
        for other, files in _package_edges()[package].items()
        if other not in arrows()[package]
    }
    assert not wrong, f"{package} imports packages no arrow allows: {wrong}"


def test_every_project_package_is_on_the_diagram() -> None:
    """Each top-level source folder is a layer: the kernel (``scanrag``) and the folders
    pyproject.toml installs under it."""
    on_disk = {
        path.parent.name
        for path in REPO.glob("*/__init__.py")
        if path.parent.name not in {"tests", "benchmarks", "scripts"}
    }
    assert on_disk == set(PACKAGES)
    installed = {STRUCTURE.package_of(name) for name in STRUCTURE.source_folders(REPO)}
    assert installed == set(PACKAGES)


def test_the_arrows_are_one_chain() -> None:
    allowed = arrows()
    assert allowed["indexes"] == {"scanrag"}
    assert allowed["agents"] == {"scanrag", "retrievers"}
    assert allowed["graphs"] == {"scanrag", "agents"}
    assert all(allowed[p] == {"scanrag"} for p in BESIDE)
