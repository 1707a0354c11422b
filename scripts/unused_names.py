"""List the project's module-level definitions that nothing refers to.

    python scripts/unused_names.py [--tests-count]

A definition is a module-level function, class or constant (an upper-case assignment) of a
project module (``scanrag/`` and the folders pyproject.toml installs under it). It counts as
used when its name appears as a word anywhere else in the checkout's text — other modules,
its own module beyond the definition, tests, benchmarks, scripts, the docs, pyproject.toml's
entry points, ``langgraph.json``, a ``getattr`` string — except inside ``__all__`` lists,
which only name what a module offers. By default a name that only tests use is listed too
(marked ``tests only``): a test of an API nothing else calls keeps dead code alive;
``--tests-count`` counts tests as users. A word match over-counts (a name shared with an
unrelated word is kept), never under-counts, so every line printed is worth a look and
nothing is printed for a name in real use. Exit status 0: it only reports.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEXT = (".py", ".md", ".toml", ".json", ".yaml", ".yml", ".cfg", ".txt")
SKIP = {".git", ".venv", "build", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def source_folders() -> list[Path]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    return [REPO / "scanrag", *(REPO / folder for folder in mapping.values())]


def definitions(path: Path) -> list[tuple[str, int]]:
    """(name, line) of the module-level functions, classes and upper-case constants."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.name, node.lineno))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id.isupper() and target.id != "__all__":
                    found.append((target.id, node.lineno))
    return found


def without_all_lists(text: str) -> str:
    """``text`` with its ``__all__ = [...]`` lists blanked out."""
    return re.sub(r"__all__\s*(?::[^=]*)?=\s*[\[(].*?[\])]", "", text, flags=re.S)


def text_files() -> list[Path]:
    out = []
    for path in REPO.rglob("*"):
        if path.suffix in TEXT and path.is_file() and not SKIP & set(path.parts):
            out.append(path)
    return out


def main(argv: list[str]) -> int:
    tests_count = "--tests-count" in argv
    counts: dict[str, Counter[str]] = {"code": Counter(), "tests": Counter()}
    for path in text_files():
        kind = "tests" if path.relative_to(REPO).parts[0] == "tests" else "code"
        words = WORD.findall(without_all_lists(path.read_text(encoding="utf-8", errors="ignore")))
        counts[kind].update(words)
    unused = []
    for folder in source_folders():
        for path in sorted(folder.rglob("*.py")):
            for name, line in definitions(path):
                if name.startswith("__"):
                    continue
                elsewhere = counts["code"][name] - 1  # the definition itself
                in_tests = counts["tests"][name]
                if elsewhere > 0 or (tests_count and in_tests):
                    continue
                where = f"{path.relative_to(REPO)}:{line}"
                unused.append(f"{where}: {name}" + (" (tests only)" if in_tests else ""))
    for line in unused:
        print(line)
    print(f"{len(unused)} unused module-level names")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
