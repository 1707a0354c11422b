"""Seeded synthetic long-document corpus with exact gold evidence (see ``corpus``)."""

from scanrag.synth.corpus import GENERATOR_VERSION, generate_corpus, read_manifest
from scanrag.synth.dataset import load_synthetic, verify_corpus

__all__ = [
    "GENERATOR_VERSION",
    "generate_corpus",
    "load_synthetic",
    "read_manifest",
    "verify_corpus",
]
