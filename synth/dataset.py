"""The ``synthetic`` dataset loader: generate a corpus on demand, then load it.

``load_synthetic(path)`` loads an existing corpus directory (after checking its files against
the manifest's hashes). Given generation parameters (``seed``, ``n_docs``...), it first makes
sure the directory holds exactly that corpus, generating it when it is missing or was made with
other parameters, so a config can name a synthetic dataset by its parameters alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scanrag.datasets.base import Dataset, DatasetError
from scanrag.datasets.generic import load_generic
from scanrag.hashing import file_sha256
from scanrag.synth.corpus import DEFAULTS, PDF_DIR, SAMPLES, generate_corpus, read_manifest


def _wanted(params: dict[str, Any]) -> dict[str, Any]:
    base = {"seed": 0, **DEFAULTS}
    unknown = sorted(set(params) - set(base))
    if unknown:
        raise TypeError(f"unknown synthetic corpus parameter(s): {', '.join(unknown)}")
    return {**base, **params}


def _current(manifest: dict[str, Any]) -> dict[str, Any]:
    return {"seed": manifest.get("seed"), **dict(manifest.get("params", {}))}


def verify_corpus(out_dir: str | os.PathLike[str]) -> list[str]:
    """Files of a generated corpus whose content no longer matches the manifest."""
    out = Path(out_dir)
    manifest = read_manifest(out)
    if manifest is None:
        return [str(out / "manifest.json")]
    changed = []
    for doc in manifest.get("documents", []):
        path = out / PDF_DIR / str(doc["file"])
        if not path.is_file() or file_sha256(path) != doc.get("sha256"):
            changed.append(str(path))
    for key, default in (("samples", SAMPLES), ("facts", None)):
        entry = manifest.get(key)
        if not isinstance(entry, dict):
            if default is not None:
                changed.append(str(out / default))
            continue
        path = out / str(entry.get("file", default))
        if not path.is_file() or file_sha256(path) != entry.get("sha256"):
            changed.append(str(path))
    return changed


def load_synthetic(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    validate: bool = True,
    *,
    regenerate: bool = False,
    **params: Any,
) -> Dataset:
    """Load the synthetic corpus in ``path``, generating it first if needed.

    ``params`` are :func:`~scanrag.synth.generate_corpus` keywords (``seed``, ``n_docs``,
    ``min_pages``, ``max_pages``, ``questions_per_doc``, ``scan_docs``). The corpus is
    (re)generated when ``regenerate`` is set, when ``path`` holds no corpus, or when params are
    given and differ from the manifest's. Files changed since generation raise
    :class:`DatasetError` (pass ``regenerate=True`` to rebuild them).
    """
    out = Path(path)
    manifest = read_manifest(out)
    wanted = _wanted(params)
    if manifest is None and (out / SAMPLES).exists() and not regenerate:
        raise DatasetError(f"{out} holds {SAMPLES} but no manifest.json: not a generated corpus")
    stale = manifest is None or (bool(params) and _current(manifest) != wanted)
    if regenerate or stale:
        generate_corpus(out, **wanted)
    else:
        changed = verify_corpus(out)
        if changed:
            raise DatasetError(
                f"synthetic corpus {out} was modified after generation ({', '.join(changed)}); "
                "regenerate it"
            )
    dataset = load_generic(out / SAMPLES, pdf_dir or out / PDF_DIR, validate, name=out.name)
    dataset.loader = "synthetic"
    return dataset
