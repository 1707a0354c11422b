"""Print the shape of the source tree: modules per package, import cycles, back arrows, alias
points, and two dynamic walks (the read path of one question, a config's way to the registries).

Run from a checkout's root: ``python benchmarks/structure.py [ROOT] [--stops]`` (default: the
current folder; ``--stops`` lists every stop of the walks). The import graph is read
statically (``ast``), with imports inside functions counted: ``import a.b`` and
``from a.b import c`` point at the most specific project module they name (``a.b.c`` when
that is a module, else ``a.b``). A cycle is a strongly connected component of
more than one module. Alias points are the module ``__getattr__`` forwarders and the names a
module binds only to hand on another module's object under an old name, found by the markers
the old code used (``forward(``, ``moved_names(``, "kept for one release" and the like).
A back arrow is an import between two packages that the layer diagram does not draw (the kernel
``scanrag`` → ``indexes`` → ``retrievers`` → ``agents`` → ``graphs``, each importing the kernel
and the layer just below it; ``evaluation``, ``loaders`` and ``synth`` beside them importing the
kernel only). The walks, and what a stop, a file and a return are, are defined in
``benchmarks/structure_walk.py``; they run the installed package of the checkout this script
is in, so ``ROOT`` must be that checkout for them (they are skipped otherwise).
"""

from __future__ import annotations

import ast
import itertools
import re
import sys
import tomllib
from pathlib import Path

# Trees from before the one-namespace layout installed these folders as top-level packages.
OLD_PACKAGES = (
    "scanrag",
    "loaders",
    "synth",
    "indexes",
    "retrievers",
    "agents",
    "graphs",
    "evaluation",
)
ALIAS_MARKERS = re.compile(
    r"forward\(__name__|moved_names\(|for one release|stay importable|still importable|"
    r"^Moved to|# Moved to|# moved;|# Names before this release"
)


def source_folders(root: Path) -> dict[str, Path]:
    """Installed package name → its folder in the checkout: ``scanrag`` and the folders
    pyproject.toml maps under it (``[tool.setuptools.package-dir]``); an older tree's
    top-level packages as themselves."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    if not mapping:
        return {name: root / name for name in OLD_PACKAGES}
    return {"scanrag": root / "scanrag", **{name: root / path for name, path in mapping.items()}}


def package_of(module: str) -> str:
    """The layer a module belongs to: ``scanrag.agents.reader`` → ``agents``, a kernel module
    (``scanrag.llm.client``) → ``scanrag``; an older tree's first name."""
    parts = module.split(".")
    if parts[0] == "scanrag" and len(parts) > 1 and parts[1] in MAPPED:
        return parts[1]
    return parts[0]


MAPPED = frozenset(("loaders", "synth", "indexes", "retrievers", "agents", "graphs", "evaluation"))
LAYERS = ("scanrag", "indexes", "retrievers", "agents", "graphs")
BESIDE = ("evaluation", "loaders", "synth")
READ_TARGET = (40, 12)  # at most this many stops in this many files
CONFIG_TARGET = (30, 15)


def arrows() -> dict[str, set[str]]:
    """Package → the other packages the layer diagram lets it import."""
    allowed: dict[str, set[str]] = {"scanrag": set()}
    for below, package in itertools.pairwise(LAYERS):
        allowed[package] = {"scanrag", below}
    allowed.update({package: {"scanrag"} for package in BESIDE})
    return allowed


def back_arrows(graph: dict[str, set[str]]) -> list[str]:
    """``module -> module`` for every import the diagram does not draw."""
    allowed = arrows()
    found = []
    for source, targets in sorted(graph.items()):
        mine = package_of(source)
        for target in sorted(targets):
            theirs = package_of(target)
            if theirs != mine and theirs not in allowed.get(mine, set()):
                found.append(f"{source} -> {target}")
    return found


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name (as imported) → its file, for every project module."""
    found = {}
    for package, folder in source_folders(root).items():
        for path in sorted(folder.rglob("*.py")):
            inner = path.relative_to(folder).with_suffix("").parts
            found[".".join((package, *inner)).removesuffix(".__init__")] = path
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the project modules it imports (at any depth of the file)."""
    files = module_files(root)
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    targets.append(sub if sub in files else node.module)
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def alias_lines(root: Path) -> list[str]:
    hits = []
    for name, path in module_files(root).items():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ALIAS_MARKERS.search(line.strip()):
                hits.append(f"{name}:{number}: {line.strip()[:90]}")
    return hits


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = Path(args[0] if args else ".").resolve()
    files = module_files(root)
    graph = import_graph(root)
    print(f"modules: {len(files)}")
    counts: dict[str, int] = {}
    for name in files:
        counts[package_of(name)] = counts.get(package_of(name), 0) + 1
    for package, count in counts.items():
        print(f"  {package}: {count}")
    found = cycles(graph)
    print(f"import cycles: {len(found)} ({sum(len(c) for c in found)} modules)")
    for component in found:
        print("  " + " <-> ".join(component))
    backs = back_arrows(graph)
    print(f"back arrows: {len(backs)}")
    for line in backs:
        print("  " + line)
    hits = alias_lines(root)
    print(f"alias marker lines: {len(hits)}")
    for hit in hits:
        print("  " + hit)
    walks(root, verbose="--stops" in sys.argv)


def walks(root: Path, verbose: bool) -> None:
    """The read path and the config walk, when ``root`` is the checkout this script is in."""
    here = Path(__file__).resolve().parents[1]
    if root != here:
        print(f"walks: skipped (they run the checkout at {here})")
        return
    sys.path.insert(0, str(here / "benchmarks"))
    import structure_walk

    folders = list(source_folders(root).values())
    read = structure_walk.read_walk(folders, root)
    structure_walk.describe("read path", read, READ_TARGET, verbose, structure_walk.READ_PARTS)
    config = structure_walk.config_walk(folders, root)
    structure_walk.describe("config walk", config, CONFIG_TARGET, verbose)


if __name__ == "__main__":
    main()
