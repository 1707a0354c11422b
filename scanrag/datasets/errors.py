"""Errors of dataset loading."""

from __future__ import annotations


class DatasetError(Exception):
    """A dataset source as a whole cannot be loaded (missing file, unreadable format)."""


class DocumentPathError(DatasetError):
    """A document name points outside its dataset's PDF folder (or is empty)."""
