"""Seeded synthetic long-document corpus with exact gold evidence (see ``corpus``).

The names below are imported on first use (PEP 562): the ``synth`` command registers without
loading PyMuPDF.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scanrag.synth.corpus import GENERATOR_VERSION, generate_corpus, read_manifest
    from scanrag.synth.dataset import load_synthetic, verify_corpus

__all__ = [
    "GENERATOR_VERSION",
    "generate_corpus",
    "load_synthetic",
    "read_manifest",
    "verify_corpus",
]


def __getattr__(name: str) -> Any:
    """The names above, imported on first use; any other name is not here (a sub-module not
    imported yet is then imported by the import system)."""
    if name not in __all__:
        raise AttributeError(f"module 'scanrag.synth' has no attribute {name!r}")
    from scanrag.synth.corpus import GENERATOR_VERSION, generate_corpus, read_manifest
    from scanrag.synth.dataset import load_synthetic, verify_corpus

    return {
        "GENERATOR_VERSION": GENERATOR_VERSION,
        "generate_corpus": generate_corpus,
        "read_manifest": read_manifest,
        "load_synthetic": load_synthetic,
        "verify_corpus": verify_corpus,
    }[name]
