"""Models built offline once and cached in a folder: tiny test models, ONNX exports.

The folder name carries a hash of the building module's source, the versions of the libraries
that shape the saved files and the seed, so an upgrade builds a fresh model instead of reusing
a stale one. A build goes to a staging folder renamed into place, so concurrent builders (test
workers) never see half-written files: the first rename wins, the others use its result.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any


def cached_build(
    name: str,
    *,
    source: str | Path,
    distributions: Sequence[str],
    seed: int,
    marker: str,
    build: Callable[[Path], Any],
    root: str | Path | None = None,
    prefix: str = "scanrag-tiny",
    key_parts: Sequence[str] = (),
) -> Path:
    """The folder ``<root>/<prefix>-<name>-<hash>``, running ``build(folder)`` the first
    time; ``marker`` is a file the finished build always contains. ``key_parts`` are extra
    strings the hash covers (a model fingerprint, say)."""
    key = hashlib.sha256(Path(source).read_bytes())
    for dist in distributions:
        key.update(metadata.version(dist).encode())
    key.update(str(seed).encode())
    for part in key_parts:
        key.update(b"\0" + part.encode())
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    target = base / f"{prefix}-{name}-{key.hexdigest()[:12]}"
    if (target / marker).is_file():
        return target
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=base))
    try:
        build(staging)
        os.replace(staging, target)
    except OSError:
        if not (target / marker).is_file():  # not a lost race: a real failure
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
