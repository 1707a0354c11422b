"""The files of a run folder are checked against the manifest before a command believes them.

``config.resolved.yaml`` decides what ``scanrag score`` scores, what ``run --resume`` runs and
what the report shows; ``samples.jsonl`` and ``datasets.json`` say which samples a run has. A
file cut short or edited since the run wrote it used to be believed: a config that lost its
``scoring:`` section fell back to the default scorers and made judge calls the run never asked
for. Now the manifest records what each file held when the run wrote it:

* ``config_hash``: :func:`config_digest`, the hash of the config's data as read back from the
  file (so a resume that changes ``runner``/``scoring``/``report`` with ``--set`` records its
  new hash, and comments or layout would not matter);
* ``files``: the SHA-256 of ``samples.jsonl`` and ``datasets.json``, written once each.

:func:`verify` compares them when a command opens the folder (:meth:`RunDir.open
<scanrag.rundir.RunDir.open>`) and raises :class:`RunFileError`, naming the file, what differs
and how to recover, before anything is read or appended. A folder whose manifest records
nothing (an older version's, an import, a run killed before its manifest) is not checked.

A config rewritten on resume is written between two manifest writes (``config_hash_next``,
then ``config_hash``), so a process killed between them leaves a folder that still verifies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scanrag.hashing import file_sha256, stable_hash
from scanrag.rundir.files import RunDirError

CONFIG_HASH = "config_hash"
CONFIG_HASH_NEXT = "config_hash_next"  # set while a resume rewrites the config
FILES = "files"


class RunFileError(RunDirError):
    """A file of a run folder differs from what the run recorded when it wrote it, or cannot
    be read."""


def parse_config(text: str, path: Path) -> dict[str, Any]:
    """The recorded config's data; :class:`RunFileError` naming ``path`` when it is no YAML
    mapping."""
    import yaml

    from scanrag.config.bounded_yaml import load_yaml

    try:
        data = load_yaml(text)
    except (ValueError, yaml.YAMLError) as exc:  # YamlLimitError is a ValueError
        raise RunFileError(
            f"{path} is not readable YAML ({_yaml_problem(exc)}){_recover(path)}"
        ) from exc
    if not isinstance(data, dict):
        raise RunFileError(f"{path} does not hold a YAML mapping{_recover(path)}")
    return data


def _yaml_problem(exc: Exception) -> str:
    """One line for a YAML error: its problem and where (PyYAML's own text spans lines)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(exc).split())


def config_digest(data: dict[str, Any]) -> str:
    """The ``config_hash`` of a recorded config's data."""
    return stable_hash(data)


def file_digests(folder: Path, names: tuple[str, ...]) -> dict[str, str]:
    """``name → SHA-256`` of the files ``names`` that exist in ``folder``."""
    return {name: file_sha256(folder / name) for name in names if (folder / name).is_file()}


def _recover(path: Path, key: str | None = None) -> str:
    manifest = path.with_name("manifest.json")
    accept = (
        f"; if the change is wanted, remove {key} from {manifest} to accept the file as it stands"
        if key
        else ""
    )
    return (
        f". It was edited or damaged since the run wrote it: restore it from a copy, or start "
        f"a new run from the config{accept}"
    )


def verify(folder: Path, manifest: dict[str, Any], config_name: str) -> None:
    """Check the files ``manifest`` records in ``folder`` (see the module docstring)."""
    recorded = manifest.get(CONFIG_HASH)
    config = folder / config_name
    if isinstance(recorded, str) and config.is_file():
        try:
            text = config.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RunFileError(f"cannot read {config}: {exc}{_recover(config)}") from exc
        found = config_digest(parse_config(text, config))
        if found not in (recorded, manifest.get(CONFIG_HASH_NEXT)):
            raise RunFileError(
                f"{config} does not match the run's manifest (config_hash {recorded}, the "
                f"file's {found}){_recover(config, repr(CONFIG_HASH))}"
            )
    for name, digest in (manifest.get(FILES) or {}).items():
        path = folder / str(name)
        try:
            found = file_sha256(path)
        except OSError as exc:
            raise RunFileError(
                f"cannot read {path}: {exc.strerror or exc}{_recover(path, repr(name))}"
            ) from exc
        if found != digest:
            raise RunFileError(
                f"{path} does not match the run's manifest (sha256 {str(digest)[:16]}, the "
                f"file's {found[:16]}){_recover(path, f'{name!r} under {FILES!r}')}"
            )
