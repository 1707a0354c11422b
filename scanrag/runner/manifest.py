"""What a run records about itself, and the scrubber that keeps secrets out of every file.

The manifest holds the git commit, Python and library versions, model names, prompt hashes
(from each strategy's ``describe()``), render DPI, page caps, retriever manifests and the
dataset load reports. It never holds API keys: keys named like secrets are masked, and the
values of secret-looking environment variables are replaced wherever they appear.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

MASK = "***"

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

_SECRET_NAME = re.compile(
    r"(api[_-]?key|secret|passw(or)?d|authorization|bearer|credential|access[_-]?token|"
    r"auth[_-]?token|session[_-]?token|private[_-]?key|(^|[_-])token$)",
    re.IGNORECASE,
)
# Shapes of common provider keys, masked even when no environment variable holds them.
_SECRET_VALUE = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|"
    r"hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[bap]-[A-Za-z0-9-]{10,})\b"
)
_MIN_SECRET_LEN = 8


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


class Scrubber:
    """Masks secrets in text and nested data.

    Secret values are the values of environment variables with secret-looking names (taken
    when the scrubber is built) plus anything shaped like a provider key.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        values = {v for k, v in env.items() if is_secret_name(k) and len(v) >= _MIN_SECRET_LEN}
        self._values = sorted(values, key=len, reverse=True)

    def text(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return _SECRET_VALUE.sub(MASK, text)

    def data(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                k: (MASK if is_secret_name(str(k)) and v not in (None, "") else self.data(v))
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


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
