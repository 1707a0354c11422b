"""Type-check ScanRAG as it is installed: ``python scripts/typecheck.py [mypy args]``.

The repository keeps the card's top-level folders (agents/, graphs/, ...) while the installed
package nests them under ``scanrag`` (``[tool.setuptools.package-dir]`` in pyproject.toml). The
editable install finds them through an import hook that mypy cannot follow, so this script lays
out a tree of links shaped like the installed package (``build/typecheck/scanrag/...``), runs
mypy on it with the project's settings, and prints mypy's report with the repository's paths.
Exit status: mypy's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "build" / "typecheck"


def package_dirs() -> dict[str, Path]:
    """``scanrag.<name>`` → its folder in the repository, from pyproject.toml."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name: REPO / folder for name, folder in mapping.items()}


def lay_out() -> dict[str, Path]:
    """Build the link tree; return each linked folder's path in the tree → its real folder."""
    shutil.rmtree(TREE, ignore_errors=True)
    root = TREE / "scanrag"
    root.mkdir(parents=True)
    links: dict[str, Path] = {}
    for entry in (REPO / "scanrag").iterdir():
        if entry.name != "__pycache__":
            (root / entry.name).symlink_to(entry)
    for name, folder in package_dirs().items():
        inner = name.removeprefix("scanrag.")
        (root / inner).symlink_to(folder, target_is_directory=True)
        links[f"scanrag/{inner}/"] = folder
    return links


def main(argv: list[str]) -> int:
    links = lay_out()
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(REPO / "pyproject.toml"),
        "--cache-dir",
        str(REPO / ".mypy_cache"),
        *argv,
    ]
    done = subprocess.run(command, cwd=TREE, capture_output=True, text=True)
    pattern = re.compile("|".join(re.escape(prefix) for prefix in links))
    for stream, text in ((sys.stdout, done.stdout), (sys.stderr, done.stderr)):
        fixed = pattern.sub(lambda m: os.path.relpath(links[m.group(0)], REPO) + "/", text)
        stream.write(fixed)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
