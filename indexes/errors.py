"""Errors raised by indexes and retrievers, each with a message that says what to do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

_SHOW = 8


class IndexStoreError(RuntimeError):
    """Base class for index failures."""


class IndexMismatchError(IndexStoreError):
    """A saved index was built with another kind, model, parameters or corpus than expected."""


class CorruptIndexError(IndexStoreError):
    """An index directory is missing files, or its files are unreadable or inconsistent."""


class ModelLoadError(IndexStoreError):
    """An encoder model name could not be resolved or loaded."""


class UnknownDocumentError(KeyError):
    """A search was scoped to a document id the index does not hold."""

    def __init__(
        self,
        missing: Sequence[str],
        known: Sequence[str],
        names: Mapping[str, str] | None = None,
    ) -> None:
        self.missing = list(missing)
        self.known = sorted(known)
        shown = ", ".join(self.known[:_SHOW]) or "(empty index)"
        if len(self.known) > _SHOW:
            shown += f", ... ({len(self.known)} in all)"
        message = f"document id(s) not in the index: {', '.join(map(repr, self.missing))}; "
        message += f"indexed ids: {shown}"
        hints = [
            f"{m!r} is the file name of id {names[m]!r}"
            for m in self.missing
            if names and m in names
        ]
        if hints:
            message += " (" + "; ".join(hints) + ")"
        super().__init__(message)

    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return str(self.args[0])
