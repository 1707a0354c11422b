"""The kernel and the scorers import without the heavy libraries, and imports flow one way:
scanrag → indexes → retrievers → agents → graphs, with evaluation depending only on scanrag."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "faiss", "litellm", "langgraph", "transformers", "sentence_transformers")
REPO = Path(__file__).resolve().parents[2]
# What each package may import from the project (besides itself), at any depth, lazily too.
ALLOWED = {
    "scanrag": set(),
    "loaders": {"scanrag"},
    "synth": {"scanrag"},
    "evaluation": {"scanrag"},
    "indexes": {"scanrag"},
    "retrievers": {"scanrag", "indexes"},
    "agents": {"scanrag", "indexes", "retrievers"},
    "graphs": {"scanrag", "indexes", "retrievers", "agents"},
}


@pytest.mark.parametrize("module", ["scanrag", "scanrag.llm", "scanrag.cli", "evaluation"])
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


def _modules(package: str) -> list[str]:
    root = REPO / package
    return sorted(
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in root.rglob("*.py")
    )


def test_every_scorer_module_and_the_runner_import_light() -> None:
    wanted = [m for m in _modules("evaluation") if not m.startswith("evaluation.report")]
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
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(ALLOWED)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_flow_one_way(package: str) -> None:
    bad = {}
    for path in sorted((REPO / package).rglob("*.py")):
        wrong = _project_imports(path) - ALLOWED[package] - {package}
        if wrong:
            bad[str(path.relative_to(REPO))] = sorted(wrong)
    assert not bad, f"{package} imports packages above it: {bad}"


def test_moved_modules_keep_an_alias_without_importing_upward() -> None:
    code = (
        "import sys, warnings\n"
        "import scanrag, scanrag.datasets, scanrag.runner, scanrag.datasets.docscope\n"
        "import scanrag.synth, scanrag.synth.corpus\n"
        "early = [m for m in ('loaders', 'synth') if m in sys.modules]\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from scanrag.datasets.docscope import load_docscope\n"
        "    from scanrag.synth import generate_corpus\n"
        "    from scanrag.synth.corpus import DEFAULTS\n"
        "import loaders.docscope, synth\n"
        "assert load_docscope is loaders.docscope.load_docscope\n"
        "assert generate_corpus is synth.generate_corpus and DEFAULTS['n_docs'] == 4\n"
        "print(','.join(early), len([w for w in caught if 'moved to' in str(w.message)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.strip("\n")
    assert out == " 3", f"aliases imported {out!r} early, or did not warn once per name"
