"""Moved to :mod:`loaders.mmlongbench`; this alias goes away in the next release."""

from scanrag._moved import forward

__getattr__ = forward(__name__)
