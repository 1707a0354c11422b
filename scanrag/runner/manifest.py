"""What a run records about the machine it ran on: environment, git commit, library versions.

The manifest (assembled in :mod:`scanrag.runner.manifest_build`) also holds model names,
prompt hashes (from each strategy's ``describe()``), render DPI, page caps, retriever
manifests and the dataset load reports. It never holds API keys: everything written to a run
folder goes through :mod:`scanrag.scrub`.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["LIBRARIES", "environment", "git_info", "library_versions", "now_iso"]

# Distributions whose versions matter for reproducing a run (absent ones are skipped).
LIBRARIES = (
    "scanrag",
    "pydantic",
    "pymupdf",
    "numpy",
    "litellm",
    "langgraph",
    "rank-bm25",
    "sentence-transformers",
    "torch",
    "torchvision",
    "faiss-cpu",
    "faiss-gpu",
    "faiss-gpu-cu12",
    "peft",
    "llama-cpp-python",
    "colpali-engine",
    "transformers",
    "ray",
    "rich",
    "pyyaml",
)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def library_versions() -> dict[str, str]:
    """Installed versions of :data:`LIBRARIES`.

    Read from the ``<name>-<version>.dist-info`` folder names on ``sys.path`` (one directory
    listing each, no metadata file parsed); ``importlib.metadata`` answers for the rest.
    """
    wanted = {_normalize(n): n for n in LIBRARIES}
    versions: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if not folder.endswith(".dist-info"):
                continue
            name, _, version = folder[: -len(".dist-info")].rpartition("-")
            key = wanted.get(_normalize(name))
            if key is not None and key not in versions and version:
                versions[key] = version
    for key in set(LIBRARIES) - set(versions):
        try:
            versions[key] = metadata.version(key)
        except metadata.PackageNotFoundError:
            continue
    return dict(sorted(versions.items()))


def git_info(repo: Path | None = None) -> dict[str, Any]:
    """Commit and dirty flag of the source tree scanrag runs from (``None`` outside git)."""
    repo = repo or Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(repo), *args],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "git": git_info(),
        "libraries": library_versions(),
    }


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
