"""Where a dataset's documents may be: inside its PDF folder, symlinks resolved.

A sample names its documents relative to the dataset's PDF folder. :func:`resolve_document` is
the one place that turns such a name into a path, for the loaders, the PDF validation, the
runner's ingest stage and the documents handed to a strategy. A name that is absolute, climbs
out with ``..``, or reaches a symlink pointing outside the folder is refused with
:class:`DocumentPathError` (the sample becomes an ``input_error``), unless the dataset opts in
with ``allow_outside_pdf_dir: true`` (for corpora that really span several folders).
"""

from __future__ import annotations

import os
from pathlib import Path

from scanrag.datasets.errors import DocumentPathError

RULE = "a document must resolve inside its dataset's PDF folder"
OPT_IN = "allow_outside_pdf_dir"
NAME_MAX = 255  # bytes of one path component (ext4, xfs, apfs, ntfs)
PATH_MAX = 4096  # bytes of a whole path (Linux)


def name_problem(name: str) -> str | None:
    """Why ``name`` can be no file name on this system, or ``None``: a NUL character, text
    the file system cannot encode (a lone surrogate), a component longer than
    :data:`NAME_MAX` bytes or a name longer than :data:`PATH_MAX` bytes."""
    if "\x00" in name:
        return "holds a NUL character"
    try:
        encoded = os.fsencode(name)
    except UnicodeEncodeError as exc:
        return f"holds a character the file system cannot encode (U+{ord(name[exc.start]):04X})"
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        return (
            f"has a part of {len(longest):,} bytes; a file or folder name may be at most {NAME_MAX}"
        )
    if len(encoded) > PATH_MAX:
        return f"is {len(encoded):,} bytes long; a path may be at most {PATH_MAX:,}"
    return None


def _shown(name: str) -> str:
    shown = repr(name)
    return shown if len(shown) <= 80 else shown[:60] + "..." + shown[-15:]


def resolve_document(
    pdf_dir: str | os.PathLike[str], name: str, *, allow_outside: bool = False
) -> Path:
    """The path of document ``name`` in ``pdf_dir``, checked against the containment rule.

    The returned path is ``pdf_dir / name`` (not resolved, so a document keeps its own file
    name); the check resolves it, symlinks included, and compares it with the resolved folder.
    With ``allow_outside`` any relative or absolute path is accepted as given.
    """
    if not isinstance(name, str) or not name.strip():
        raise DocumentPathError(f"empty document name {name!r}")
    problem = name_problem(name)
    if problem is not None:
        raise DocumentPathError(f"document name {_shown(name)} {problem}")
    folder = Path(pdf_dir)
    given = Path(name)
    if allow_outside:
        return given if given.is_absolute() else folder / given
    if given.is_absolute():
        raise DocumentPathError(
            f"document {name!r} is an absolute path; {RULE} (names are relative to it; set "
            f"{OPT_IN}: true on the dataset to allow other folders)"
        )
    candidate = folder / given
    root = folder.resolve()
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a path too long
        raise DocumentPathError(f"document {name!r} cannot be resolved: {exc}") from exc
    if not resolved.is_relative_to(root):
        raise DocumentPathError(
            f"document {name!r} resolves to {resolved}, outside the PDF folder {root}; {RULE} "
            f"(set {OPT_IN}: true on the dataset to allow it)"
        )
    return candidate
