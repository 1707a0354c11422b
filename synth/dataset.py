"""The ``synthetic`` dataset loader: generate a corpus on demand, then load it.

``load_synthetic(path)`` loads an existing corpus directory (after checking its files against
the manifest's hashes). Given generation parameters (``seed``, ``n_docs``...), it first makes
sure the directory holds exactly that corpus, generating it when it is missing or was made with
other parameters, so a config can name a synthetic dataset by its parameters alone. A corpus
generated into a new folder is written next to it and renamed into place, so two processes
asking for the same corpus never see half of one.

The loader is registered as the ``synthetic`` entry point of ``scanrag.loaders``; the runner
reaches it only through that registry (a config's ``synthetic:`` dataset). Its
``option_problems`` lets the runner's preflight check generation parameters without
generating anything.
"""

from __future__ import annotations

import inspect
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scanrag.datasets.base import Dataset, DatasetError
from scanrag.datasets.generic import load_generic
from scanrag.hashing import file_sha256
from scanrag.synth.corpus import (
    DEFAULTS,
    PDF_DIR,
    SAMPLES,
    check_params,
    generate_corpus,
    read_manifest,
)


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


def _generate(out: Path, params: dict[str, Any]) -> None:
    """Generate into ``out``: in place when it exists, else beside it and renamed into place."""
    if out.exists():
        generate_corpus(out, **params)
        return
    tmp = out.with_name(f"{out.name}.partial-{os.getpid()}")
    try:
        generate_corpus(tmp, **params)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        tmp.rename(out)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
        if read_manifest(out) is None:
            raise


class SyntheticLoader:
    """The ``synthetic`` loader: ``loader(path, pdf_dir=None, validate=True, *,
    regenerate=False, **params) -> Dataset`` (see :meth:`__call__`)."""

    def __call__(
        self,
        path: str | os.PathLike[str],
        pdf_dir: str | os.PathLike[str] | None = None,
        validate: bool = True,
        *,
        regenerate: bool = False,
        **params: Any,
    ) -> Dataset:
        """Load the synthetic corpus in ``path``, generating it first if needed.

        ``params`` are :func:`~synth.generate_corpus` keywords (``seed``, ``n_docs``,
        ``min_pages``, ``max_pages``, ``questions_per_doc``, ``scan_docs``). The corpus is
        (re)generated when ``regenerate`` is set, when ``path`` holds no corpus, or when params
        are given and differ from the manifest's. Files changed since generation raise
        :class:`DatasetError` (pass ``regenerate=True`` to rebuild them).
        """
        out = Path(path)
        manifest = read_manifest(out)
        wanted = _wanted(params)
        if manifest is None and (out / SAMPLES).exists() and not regenerate:
            raise DatasetError(
                f"{out} holds {SAMPLES} but no manifest.json: not a generated corpus"
            )
        stale = manifest is None or (bool(params) and _current(manifest) != wanted)
        if regenerate or stale:
            _generate(out, wanted)
        else:
            changed = verify_corpus(out)
            if changed:
                raise DatasetError(
                    f"synthetic corpus {out} was modified after generation "
                    f"({', '.join(changed)}); regenerate it"
                )
        dataset = load_generic(out / SAMPLES, pdf_dir or out / PDF_DIR, validate, name=out.name)
        dataset.loader = "synthetic"
        return dataset

    def option_problems(self, options: Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(where, message)`` for each problem of generation parameters ``options``
        (``where`` is ``"options"`` for an unknown name, ``""`` for a bad value)."""
        signature = inspect.signature(generate_corpus)
        try:
            signature.bind(None, **options)
        except TypeError as exc:
            accepted = ", ".join(list(signature.parameters)[1:])
            return [("options", f"{exc}; accepted: {accepted}")]
        values = {**DEFAULTS, **options}
        try:
            check_params(**{name: values[name] for name in DEFAULTS})
        except (TypeError, ValueError) as exc:
            return [("", str(exc))]
        return []


load_synthetic = SyntheticLoader()
