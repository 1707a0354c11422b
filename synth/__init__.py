"""Seeded synthetic long-document corpus with exact gold evidence (see ``corpus``).

The names below are imported on first use (PEP 562): the ``synth`` command registers without
loading PyMuPDF.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scanrag.synth.corpus import GENERATOR_VERSION, generate_corpus, read_manifest
    from scanrag.synth.dataset import load_synthetic, verify_corpus

_HOMES = {
    "GENERATOR_VERSION": "scanrag.synth.corpus",
    "generate_corpus": "scanrag.synth.corpus",
    "read_manifest": "scanrag.synth.corpus",
    "load_synthetic": "scanrag.synth.dataset",
    "verify_corpus": "scanrag.synth.dataset",
}

__all__ = [
    "GENERATOR_VERSION",
    "generate_corpus",
    "load_synthetic",
    "read_manifest",
    "verify_corpus",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'scanrag.synth' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
