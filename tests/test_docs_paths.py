"""Every dotted path the docs name imports (issue 31.10): docs/mmlongbench-scoring.md placed
``official_acc_f1`` in ``scanrag.evaluation.mmlongbench.official`` (named bare, right after
that module's ``official_outcome``); it lives in ``.metrics``, and the page now names it by its
full path, which this test holds to the code.

The README and every page under docs/ are read as they stand, so a module moved or a name
renamed fails here with the path and the file that names it. Entry-point group names
(``scanrag.strategies``) are names, not modules, and are taken from the registries.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# scanrag.<name>(.<name>)*, as prose or code names it (a trailing "(" or "." is not part of it)
DOTTED = re.compile(r"(?<![\w./-])scanrag(?:\.[A-Za-z_]\w*)+")


def named_paths() -> dict[str, list[str]]:
    """Each dotted path the docs name → the files naming it."""
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        for path in DOTTED.findall(doc.read_text(encoding="utf-8")):
            found.setdefault(path, [])
            if doc.name not in found[path]:
                found[path].append(doc.name)
    return found


def resolve(path: str) -> Any:
    """The object ``path`` names: its longest importable module prefix, then attributes;
    ``LookupError`` saying where it stops."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not module_name.startswith(exc.name):
                raise  # the module exists but imports something missing: a real failure
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                raise LookupError(f"{module_name} has no {'.'.join(parts[cut:])}")
            target = getattr(target, attribute)
        return target
    raise LookupError(f"no module {parts[0]}")


def test_the_docs_name_dotted_paths() -> None:
    paths = named_paths()
    assert len(paths) >= 20 and "scanrag.evaluation.mmlongbench.official.official_outcome" in paths
    # named by its full path since the drift (it was `official_acc_f1(...)` beside .official)
    assert "scanrag.evaluation.mmlongbench.metrics.official_acc_f1" in paths


def entry_point_groups() -> set[str]:
    """The registries' entry-point groups (``scanrag.strategies``): names, not modules."""
    from scanrag import registry

    return {r.group for r in vars(registry).values() if isinstance(r, registry.Registry)}


def test_every_dotted_path_the_docs_name_imports() -> None:
    groups = entry_point_groups()
    missing = []
    for path, docs in sorted(named_paths().items()):
        if path in groups:
            continue
        try:
            resolve(path)
        except LookupError as exc:
            missing.append(f"{path} (named in {', '.join(docs)}): {exc}")
    assert missing == [], "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        (
            "`scanrag.evaluation.mmlongbench.metrics.official_acc_f1(...)`",
            ["scanrag.evaluation.mmlongbench.metrics.official_acc_f1"],
        ),
        ("see scanrag.datasets.sources.", ["scanrag.datasets.sources"]),
        ("import scanrag; pip install scanrag", []),
        ("runs/scanrag.x and my_scanrag.y", []),
    ],
)
def test_the_pattern(text: str, paths: list[str]) -> None:
    assert DOTTED.findall(text) == paths


def test_a_missing_path_says_where_it_stops() -> None:
    with pytest.raises(
        LookupError, match="scanrag.evaluation.mmlongbench.official has no official_acc_f1"
    ):
        resolve("scanrag.evaluation.mmlongbench.official.official_acc_f1")
    with pytest.raises(LookupError, match="scanrag has no no_such_module.thing"):
        resolve("scanrag.no_such_module.thing")
