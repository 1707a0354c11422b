"""Stable content hashes for documents, prompts and cache keys."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def stable_hash(value: Any, length: int = 16) -> str:
    """Hash of a JSON-serializable value, independent of dict key order."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def doc_id_from_sha(sha256: str) -> str:
    """Document ids are the first 16 hex digits of the content hash."""
    return sha256[:16]


class TextListHasher:
    """``stable_hash`` of a list of strings, fed one string at a time (same digest as
    ``stable_hash(list_of_texts)``, without holding the list)."""

    __slots__ = ("_digest", "_first")

    def __init__(self) -> None:
        self._digest = hashlib.sha256(b"[")
        self._first = True

    def add(self, text: str) -> None:
        if not self._first:
            self._digest.update(b", ")
        self._first = False
        self._digest.update(json.dumps(text).encode("utf-8"))

    def hexdigest(self, length: int = 16) -> str:
        digest = self._digest.copy()
        digest.update(b"]")
        return digest.hexdigest()[:length]
