"""One build per index in a command: retriever instances shared by their type and parameters.

``scanrag retrieve eval --retrievers bm25,dense,hybrid`` and a run whose config lists ``dense``
and a ``hybrid`` over it (or two hybrids over one ``dense``) need the dense index once. An
:class:`IndexPool` is handed to ``RetrieverSpecs.build``: every *leaf* retriever (one that is not
a composite) is keyed by its registered type and its constructor arguments with the defaults
filled in, so ``"dense"``, ``{name: dense}`` and an alias ``dense: {}`` are one key, and a
second request for a key gets the same instance, already indexed. A new leaf is indexed at
once: loaded from ``folder_for(kind, key)`` when a saved index is there (and matches the
documents), otherwise built over the documents and saved there. A composite receives indexed
components, so its own ``add`` finds every document present and indexes nothing twice; it is
never saved as a whole (its components are).

Leaves whose arguments are not plain data (instances given from Python) are built and indexed
without sharing. Each index start and end is reported through ``report`` (one line each, with
pages per second), so a long build is never silent; ``phase`` hears what the pool is doing
meanwhile (``loading retriever dense`` while its model loads, ``building index dense
1,200/4,000 pages`` as an index that counts its pages goes, ``loading index dense`` from disk)
and ``None`` when it is done, which a progress stage shows in its line.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanrag.hashing import stable_hash
from scanrag.protocols import Retriever
from scanrag.schemas import Document

log = logging.getLogger(__name__)

FolderFor = Callable[[str, str], Path | None]  # (registered type, key) -> index folder


@dataclass
class PoolEntry:
    """One shared leaf: its instance, seconds to build or load it, whether it was loaded."""

    retriever: Retriever
    seconds: float
    cached: bool
    finished: float = field(default_factory=time.perf_counter)  # when it became ready


@dataclass
class IndexPool:
    """Leaf retrievers of one command by key (see the module docstring).

    ``documents`` are indexed into every leaf; ``folder_for(kind, key)`` says where a leaf's
    index is saved (``None``: nowhere); ``report`` receives progress lines.
    """

    documents: Sequence[Document]
    folder_for: FolderFor | None = None
    report: Callable[[str], None] | None = None
    phase: Callable[[str | None], None] | None = None
    entries: dict[str, PoolEntry] = field(default_factory=dict)
    used: list[str] = field(default_factory=list)  # keys handed out, in order

    def key(self, kind: str, factory: Callable[..., Any], params: Mapping[str, Any]) -> str | None:
        """The sharing key of a leaf, or ``None`` when its arguments are not plain data."""
        arguments = dict(params)
        try:
            bound = inspect.signature(factory).bind_partial(**arguments)
            bound.apply_defaults()
            arguments = {k: v for k, v in bound.arguments.items() if k not in ("self", "samples")}
        except (TypeError, ValueError):
            pass  # the constructor reports bad arguments itself
        try:
            return f"{kind}-{stable_hash({'type': kind, 'params': arguments}, length=16)}"
        except (TypeError, ValueError):
            return None

    def leaf(self, kind: str, key: str | None, create: Callable[[], Retriever]) -> Retriever:
        """The shared instance for ``key``: created and indexed on first request."""
        if key is not None and key in self.entries:
            self.used.append(key)
            return self.entries[key].retriever
        start = time.perf_counter()
        self._phase(f"loading retriever {kind}")
        try:
            retriever = create()  # loading a model counts as building
            folder = self.folder_for(kind, key) if self.folder_for and key is not None else None
            entry = self._index(retriever, kind, folder)
        finally:
            self._phase(None)
        entry.seconds = time.perf_counter() - start
        if key is not None:
            self.entries[key] = entry
            self.used.append(key)
        return retriever

    def _index(self, retriever: Retriever, name: str, folder: Path | None) -> PoolEntry:
        pages = sum(len(d.pages) for d in self.documents)
        start = time.perf_counter()
        if folder is not None and (folder / "manifest.json").is_file():
            self._phase(f"loading index {name} ({pages:,} pages)")
            try:
                retriever.load(folder, list(self.documents))  # type: ignore[attr-defined]
                seconds = time.perf_counter() - start
                self._say(f"index {name}: {pages:,} pages loaded from {folder} ({seconds:.1f} s)")
                return PoolEntry(retriever, seconds, True)
            except Exception as exc:  # a stale or damaged index: build afresh
                log.warning("%s: saved index at %s unusable, rebuilding: %s", name, folder, exc)
        self._say(f"index {name}: building over {pages:,} pages")
        self._phase(f"building index {name} ({pages:,} pages)")
        done = [0]

        def pages_done(n: int) -> None:  # an index that reports its pages as it goes
            done[0] += n
            self._phase(f"building index {name} {done[0]:,}/{pages:,} pages")

        if hasattr(retriever, "page_progress"):
            retriever.page_progress = pages_done  # type: ignore[attr-defined]
        try:
            retriever.add(list(self.documents))
        finally:
            if hasattr(retriever, "page_progress"):
                retriever.page_progress = None  # type: ignore[attr-defined]
        seconds = time.perf_counter() - start
        rate = pages / seconds if seconds > 0 else float("inf")
        self._say(f"index {name}: {pages:,} pages in {seconds:.1f} s ({rate:,.0f} pages/s)")
        if folder is not None and callable(getattr(retriever, "save", None)):
            try:
                retriever.save(folder)  # type: ignore[attr-defined]
            except Exception as exc:
                log.warning("%s: index not saved in %s (%s)", name, folder, exc)
        return PoolEntry(retriever, seconds, False)

    def index_composite(self, retriever: Retriever) -> None:
        """A composite's own ``add`` (its components, pool leaves, hold the documents)."""
        retriever.add(list(self.documents))

    def _phase(self, doing: str | None) -> None:
        if self.phase is not None:
            self.phase(doing)

    def _say(self, line: str) -> None:
        if self.report is not None:
            self.report(line)
        log.info(line)

    # -- accounting ---------------------------------------------------------------------------
    def mark(self) -> int:
        """A position in the hand-out record (see :meth:`since`)."""
        return len(self.used)

    def since(self, mark: int) -> list[PoolEntry]:
        """The distinct entries handed out after ``mark``."""
        keys = dict.fromkeys(self.used[mark:])
        return [self.entries[k] for k in keys]
