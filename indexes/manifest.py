"""Index manifests: what ``manifest.json`` records, and the checks made when loading.

The manifest names the index kind, the model and its revision, the parameters that shaped the
contents, every document (id, file name, PDF hash, hash of the page texts, page count), the
library versions and a SHA-256 of every payload file. Loading compares it with what the caller
expects and raises ``IndexMismatchError`` or ``CorruptIndexError`` with the difference.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from scanrag.hashing import file_sha256
from scanrag.indexes.errors import CorruptIndexError, IndexMismatchError
from scanrag.schemas import Document

SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
log = logging.getLogger(__name__)


class IndexedDocument(BaseModel):
    """A document as recorded in an index: identity, content hashes and page count."""

    id: str
    name: str
    sha256: str
    pages: int = Field(ge=0)
    text_hash: str = Field(description="Hash of the page texts, so re-ingestion is detected.")

    @classmethod
    def of(cls, document: Document) -> IndexedDocument:
        return cls(
            id=document.id,
            name=document.name,
            sha256=document.sha256,
            pages=len(document.pages),
            text_hash=document.texts_hash(),  # stable_hash of the page texts, streamed
        )


class IndexManifest(BaseModel):
    """What ``manifest.json`` records about a saved index."""

    retriever: str | None = Field(default=None, description="The retriever name (None: older).")
    schema_version: int
    kind: str
    model: str | None = None
    model_revision: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    documents: list[IndexedDocument] = Field(default_factory=list)
    page_count: int = Field(ge=0)
    libraries: dict[str, str] = Field(default_factory=dict)
    files: dict[str, str] = Field(default_factory=dict, description="payload file → sha256")
    extra: dict[str, Any] = Field(default_factory=dict)
    created_at: str = ""


def library_versions(*distributions: str) -> dict[str, str]:
    """Installed versions of ``distributions`` plus python, numpy and scanrag."""
    versions = {"python": platform.python_version()}
    for dist in ("numpy", "scanrag", *distributions):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


def read_manifest(directory: Path) -> IndexManifest:
    """Read and validate ``manifest.json``; ``CorruptIndexError`` if absent or malformed."""
    path = directory / MANIFEST_NAME
    if not directory.is_dir():
        raise CorruptIndexError(f"index directory {directory} does not exist")
    if not path.is_file():
        raise CorruptIndexError(
            f"{directory} has no {MANIFEST_NAME}: not an index directory, or a save that did "
            "not finish"
        )
    try:
        manifest = IndexManifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError) as exc:
        raise CorruptIndexError(f"{path} is not a valid index manifest: {exc}") from exc
    if manifest.page_count != sum(d.pages for d in manifest.documents):
        raise CorruptIndexError(f"{path}: page_count disagrees with the document list")
    return manifest


def verify_files(manifest: IndexManifest, directory: Path) -> None:
    """Every payload file listed in the manifest must exist with the recorded SHA-256."""
    for name, digest in sorted(manifest.files.items()):
        path = directory / name
        if not path.is_file():
            raise CorruptIndexError(f"{directory}: payload file {name} is missing")
        if file_sha256(path) != digest:
            raise CorruptIndexError(f"{directory}: payload file {name} is damaged (hash differs)")


def write_payload(directory: Path, save: Callable[[Path], None]) -> dict[str, str]:
    """Write an index's payload into ``directory/payload`` (created; an old index there is
    replaced, its manifest removed first) with ``save``; the SHA-256 of every file written."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MANIFEST_NAME).unlink(missing_ok=True)
    payload = directory / "payload"
    if payload.exists():
        shutil.rmtree(payload)
    payload.mkdir()
    save(payload)
    return {
        str(p.relative_to(directory)): file_sha256(p)
        for p in sorted(payload.rglob("*"))
        if p.is_file()
    }


def write_manifest(directory: Path, manifest: IndexManifest) -> None:
    """Write ``manifest.json`` last and atomically: an interrupted save leaves none."""
    tmp = directory / (MANIFEST_NAME + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, directory / MANIFEST_NAME)


def check_compatible(
    saved: IndexManifest,
    directory: Path,
    *,
    kind: str,
    model: str | None,
    revision: str | None,
    params: dict[str, Any],
    libraries: dict[str, str],
) -> None:
    """The index ``saved`` in ``directory`` may be loaded into an index of ``kind`` only with
    the same schema version, model (and revision, where both know one) and ``params`` (as
    plain JSON); other library versions only warn."""
    where = f"index at {directory}"
    if saved.kind != kind:
        raise IndexMismatchError(f"{where} is a {saved.kind!r} index; expected a {kind!r} index")
    if saved.schema_version != SCHEMA_VERSION:
        raise IndexMismatchError(
            f"{where} uses index schema v{saved.schema_version}; this version reads "
            f"v{SCHEMA_VERSION}. Rebuild the index."
        )
    other_revision = revision and saved.model_revision and saved.model_revision != revision
    if saved.model != model or other_revision:
        raise IndexMismatchError(
            f"{where} was built with model {saved.model!r} (revision "
            f"{saved.model_revision}); this index uses {model!r} (revision {revision}). "
            "Rebuild it or load it with the same model."
        )
    diffs = [
        f"{key}: saved {saved.params.get(key)!r}, expected {params.get(key)!r}"
        for key in sorted(set(params) | set(saved.params))
        if saved.params.get(key) != params.get(key)
    ]
    if diffs:
        raise IndexMismatchError(f"{where} was built with other parameters: {'; '.join(diffs)}")
    changed = [k for k, v in saved.libraries.items() if libraries.get(k, v) != v]
    if changed:
        log.warning("%s was saved with other library versions: %s", where, ", ".join(changed))


def check_corpus(manifest: IndexManifest, documents: Sequence[Document], directory: Path) -> None:
    """The saved corpus must be exactly ``documents``, with the same content."""
    saved = {d.id: d for d in manifest.documents}
    wanted = {d.id: IndexedDocument.of(d) for d in documents}
    problems = []
    if missing := [wanted[i].name for i in wanted if i not in saved]:
        problems.append(f"not indexed: {', '.join(missing)}")
    if extra := [saved[i].name for i in saved if i not in wanted]:
        problems.append(f"indexed but not expected: {', '.join(extra)}")
    changed = [
        wanted[i].name
        for i in wanted
        if i in saved
        and (saved[i].sha256, saved[i].text_hash) != (wanted[i].sha256, wanted[i].text_hash)
    ]
    if changed:
        problems.append(f"content changed since indexing: {', '.join(changed)}")
    if problems:
        raise IndexMismatchError(
            f"index at {directory} was built for another corpus ({'; '.join(problems)})"
        )


def plain_json(value: Any) -> Any:
    """JSON round trip, so tuples and numpy scalars compare equal to what a manifest holds."""
    return json.loads(json.dumps(value, sort_keys=True, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"cannot record {type(value).__name__} in an index manifest")
