"""Moved to the top-level :mod:`synth` package; this alias goes away in the next release."""

from scanrag._moved import forward

__getattr__ = forward(__name__)
