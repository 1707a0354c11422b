"""The page index base: rows, scoping, deterministic ranking, manifests, save and load.

A *page index* holds every page of the documents added to it, one row per page, in the order
the documents were added. An index is also a retriever (``scanrag.protocols.Retriever``): it is
registered as one directly, its constructor's keyword arguments are the configuration
parameters, and ``name`` (by default its ``kind``) is what manifests and trajectories record.
Subclasses only decide how pages are indexed and scored:

* ``_index(documents)`` indexes new documents (the base registers their rows afterwards, so a
  failure leaves the index unchanged);
* ``_candidates(queries, rows, k)`` returns, per query, candidate rows with exact scores. ``rows``
  is ``None`` for the whole store or the rows of the documents in scope. At least
  ``min(k, len(scope))`` candidates must come back, more is fine (the base sorts and cuts);
* ``_save_payload`` / ``_load_payload`` write and read the kind's own files;
* optionally ``_regions(query, rows)`` proposes regions for the final hits (multi-vector
  indexes can attach boxes from their similarity maps) and ``model_info()`` names the model;
* optionally ``check_params(arguments)``: cheap rules on the constructor's arguments (ranges,
  combinations) that need no model. The constructor calls it, and a run's preflight calls it
  before anything is built (see ``scanrag.params``), so one place owns each rule;
* optionally ``_build_part(documents)`` and ``_index_parts(documents, payloads)``: building in
  parts, so a corpus can be indexed by several processes (slices of documents each, merged
  in order; ``scanrag.runner.ray_shards``) with the result ``add`` would give.

Ranking is deterministic: score descending, then document id, then page. Saving writes the
payload first and ``manifest.json`` last (with a SHA-256 of every payload file), so an
interrupted save or a damaged file is detected on load.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from scanrag.indexes.errors import CorruptIndexError, IndexMismatchError, UnknownDocumentError
from scanrag.indexes.manifest import (
    SCHEMA_VERSION,
    IndexedDocument,
    IndexManifest,
    check_compatible,
    check_corpus,
    library_versions,
    plain_json,
    read_manifest,
    verify_files,
    write_manifest,
    write_payload,
)
from scanrag.indexes.ranking import check_search_args, rank_candidates
from scanrag.schemas import Document, PageHit, Region

__all__ = [
    "Candidates",
    "IndexPart",
    "PageIndex",
]

log = logging.getLogger(__name__)
Candidates = tuple[np.ndarray, np.ndarray]
# What ``build_part`` returns: the documents' manifest entries and the kind's own payload.
IndexPart = tuple[list[IndexedDocument], Any]


class PageIndex(ABC):
    """Base class of every page index, and so of every index-backed retriever. See the module
    docstring for the subclass hooks.

    ``exhaustive`` tells callers that a search returns ``min(k, pages in scope)`` hits.
    """

    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    exhaustive: ClassVar[bool] = True
    payload_errors: ClassVar[tuple[type[BaseException], ...]] = (
        OSError,
        ValueError,
        KeyError,
        EOFError,
        RuntimeError,
        TypeError,
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__ and "kind" in cls.__dict__:
            cls.name = cls.kind

    page_progress: Callable[[int], None] | None = None
    """Told how many pages were just indexed, as a long build goes (set by the index pool
    for progress lines; kinds that build in one quick pass never call it)."""

    def __init__(self) -> None:
        self._reset_rows()

    def _pages_indexed(self, n: int) -> None:
        if self.page_progress is not None:
            self.page_progress(n)

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` (or ``TypeError``) for constructor arguments that cannot work.

        ``arguments`` maps parameter names to values (a run's preflight passes every one,
        defaults filled in; a constructor may pass only those it checks). Must not load models.
        """
        return None  # no rules by default

    def __repr__(self) -> str:
        return f"{type(self).__name__}(pages={self.page_count}, docs={len(self._doc_order)})"

    # -- rows -----------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        self._documents: dict[str, IndexedDocument] = {}
        self._doc_start: dict[str, int] = {}
        self._row_doc: np.ndarray = np.zeros(0, dtype=np.int64)  # position in _doc_order
        self._row_page: np.ndarray = np.zeros(0, dtype=np.int64)
        self._doc_order: list[str] = []
        self._tie_rank: np.ndarray = np.zeros(0, dtype=np.int64)

    def _register(self, entries: Sequence[IndexedDocument]) -> None:
        row_doc, row_page = [self._row_doc], [self._row_page]
        start = self.page_count
        for entry in entries:
            self._doc_start[entry.id] = start
            start += entry.pages
            self._documents[entry.id] = entry
            self._doc_order.append(entry.id)
            row_doc.append(np.full(entry.pages, len(self._doc_order) - 1, dtype=np.int64))
            row_page.append(np.arange(1, entry.pages + 1, dtype=np.int64))
        self._row_doc = np.concatenate(row_doc)
        self._row_page = np.concatenate(row_page)
        doc_sort = np.argsort(np.argsort(np.array(self._doc_order, dtype=object)))
        order = np.lexsort((self._row_page, doc_sort[self._row_doc]))
        self._tie_rank = np.empty(len(order), dtype=np.int64)
        self._tie_rank[order] = np.arange(len(order))

    @property
    def page_count(self) -> int:
        return int(self._row_page.size)

    @property
    def document_ids(self) -> list[str]:
        return list(self._doc_order)

    @property
    def documents(self) -> list[IndexedDocument]:
        return [self._documents[d] for d in self._doc_order]

    def __len__(self) -> int:
        return self.page_count

    def _scope_rows(self, scope: list[str] | None) -> np.ndarray | None:
        if scope is None:
            return None
        spans = [
            np.arange(self._doc_start[d], self._doc_start[d] + self._documents[d].pages)
            for d in scope
        ]
        return np.concatenate(spans).astype(np.int64) if spans else np.zeros(0, dtype=np.int64)

    # -- adding -----------------------------------------------------------------------------
    def add(self, documents: Sequence[Document]) -> None:
        """Index ``documents``. A document already present with the same content is skipped;
        the same id with different content raises ``IndexMismatchError``."""
        if isinstance(documents, Document):
            documents = [documents]
        fresh: dict[str, tuple[Document, IndexedDocument]] = {}
        for document in documents:
            entry = IndexedDocument.of(document)
            known = self._documents.get(entry.id) or (
                fresh[entry.id][1] if entry.id in fresh else None
            )
            if known is None:
                fresh[entry.id] = (document, entry)
            elif (known.sha256, known.text_hash) != (entry.sha256, entry.text_hash):
                raise IndexMismatchError(
                    f"document id {entry.id!r} ({entry.name}) is already indexed with different "
                    "content; rebuild the index or remove the old copy"
                )
        if not fresh:
            return
        self._index([doc for doc, _ in fresh.values()])
        self._register([entry for _, entry in fresh.values()])

    # -- building in parts (sharded builds) -------------------------------------------------
    @property
    def builds_in_parts(self) -> bool:
        """Whether this kind implements ``_build_part``/``_index_parts`` (see ``add_parts``)."""
        cls = type(self)
        return cls._build_part is not PageIndex._build_part

    def build_part(self, documents: Sequence[Document]) -> IndexPart:
        """The document-local work of indexing ``documents`` (tokenizing, encoding, content
        hashes), as a picklable value: another process (a Ray worker) computes it for one
        slice of a corpus and :meth:`add_parts` combines the slices. Needs nothing of this
        index's contents, only its parameters."""
        docs = list(documents)
        return [IndexedDocument.of(d) for d in docs], self._build_part(docs)

    def add_parts(self, documents: Sequence[Document], parts: Sequence[IndexPart]) -> None:
        """Index ``documents`` from ``parts``, the :meth:`build_part` results of consecutive
        slices of ``documents`` in order: the same index as ``add(documents)`` gives. The
        index must be empty and the documents distinct (a sharded build starts afresh)."""
        entries = [entry for part_entries, _ in parts for entry in part_entries]
        if self.page_count or self._documents:
            raise ValueError("add_parts builds an empty index; this one holds documents")
        if [e.id for e in entries] != [d.id for d in documents]:
            raise ValueError("the parts do not cover the documents, in order, once each")
        if len({e.id for e in entries}) != len(entries):
            raise ValueError("add_parts takes each document once")
        self._index_parts(list(documents), [payload for _, payload in parts])
        self._register(entries)

    def _build_part(self, documents: list[Document]) -> Any:
        """Subclass hook for :meth:`build_part` (the kind's own payload)."""
        raise NotImplementedError(f"a {self.kind!r} index cannot be built in parts")

    def _index_parts(self, documents: list[Document], payloads: list[Any]) -> None:
        """Subclass hook for :meth:`add_parts`: install the payloads (rows from 0)."""
        raise NotImplementedError(f"a {self.kind!r} index cannot be built in parts")

    # -- searching --------------------------------------------------------------------------
    def search(
        self, query: str, k: int, doc_ids: Sequence[str] | str | None = None
    ) -> list[PageHit]:
        """The ``k`` best pages for ``query`` within ``doc_ids`` (``None``: whole store).

        A blank query returns ``[]``; ``k`` larger than the scope returns every page in it.
        """
        return self.search_batch([query], k, doc_ids)[0]

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | str | None = None
    ) -> list[list[PageHit]]:
        if isinstance(queries, str):
            raise TypeError("search_batch takes a sequence of queries, not one string")
        scope: list[str] | None = None
        for query in queries:
            scope = self._check(query, k, doc_ids)
        if not queries:
            self._check("", k, doc_ids)
        rows = self._scope_rows(scope)
        results: list[list[PageHit]] = [[] for _ in queries]
        active = [i for i, q in enumerate(queries) if q.strip()]
        if not active or self.page_count == 0 or (rows is not None and rows.size == 0):
            return results
        found = self._candidates([queries[i] for i in active], rows, int(k))
        for i, (cand_rows, cand_scores) in zip(active, found, strict=True):
            results[i] = self._hits(queries[i], cand_rows, cand_scores, int(k))
        return results

    def _check(self, query: object, k: object, doc_ids: Any) -> list[str] | None:
        try:
            return check_search_args(query, k, doc_ids, self._documents.keys())
        except UnknownDocumentError as exc:
            names = {e.name: e.id for e in self._documents.values()}
            raise UnknownDocumentError(exc.missing, exc.known, names) from None

    def _hits(self, query: str, rows: np.ndarray, scores: np.ndarray, k: int) -> list[PageHit]:
        top_rows, top_scores = rank_candidates(rows, scores, self._tie_rank, k)
        regions = self._regions(query, top_rows)
        docs = self._row_doc[top_rows].tolist()
        pages = self._row_page[top_rows].tolist()
        return [
            PageHit(doc_id=self._doc_order[doc], page=page, score=score, rank=rank, regions=found)
            for rank, (doc, page, score, found) in enumerate(
                zip(docs, pages, top_scores.tolist(), regions, strict=True), start=1
            )
        ]

    def _regions(self, query: str, rows: np.ndarray) -> list[list[Region]]:
        """Regions to attach to each final hit; plain page indexes propose none."""
        return [[] for _ in rows]

    # -- subclass hooks ---------------------------------------------------------------------
    @abstractmethod
    def _index(self, documents: list[Document]) -> None:
        """Index new documents; their rows start at ``self.page_count``."""

    @abstractmethod
    def _candidates(self, queries: list[str], rows: np.ndarray | None, k: int) -> list[Candidates]:
        """Per query: (row ids, exact scores) covering at least ``min(k, scope)`` rows."""

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Constructor arguments that shape the stored contents (recorded and checked)."""

    @abstractmethod
    def _save_payload(self, directory: Path) -> None: ...

    @abstractmethod
    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        """Read the payload; raise ``CorruptIndexError`` (or an I/O error) if inconsistent."""

    def model_info(self) -> tuple[str | None, str | None]:
        """(model name, revision or content fingerprint); ``(None, None)`` without a model."""
        return None, None

    def libraries(self) -> dict[str, str]:
        return library_versions()

    def manifest_extra(self) -> dict[str, Any]:
        return {}

    # -- manifest, save, load ---------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        """The manifest of the current contents (``retriever`` names it), as a plain dict."""
        return self._manifest().model_dump(mode="json")

    def _manifest(self, files: dict[str, str] | None = None) -> IndexManifest:
        model, revision = self.model_info()
        return IndexManifest(
            retriever=self.name or self.kind,
            schema_version=SCHEMA_VERSION,
            kind=self.kind,
            model=model,
            model_revision=revision,
            params=plain_json(self.params()),
            documents=self.documents,
            page_count=self.page_count,
            libraries=self.libraries(),
            files=files or {},
            extra=plain_json(self.manifest_extra()),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )

    def save(self, directory: str | Path) -> Path:
        """Write the index to ``directory`` (created; an old index there is replaced)."""
        directory = Path(directory)
        files = write_payload(directory, self._save_payload)
        write_manifest(directory, self._manifest(files))
        return directory

    def load(self, directory: str | Path, documents: Sequence[Document] | None = None) -> Self:
        """Replace this index's contents with the index saved in ``directory``.

        The saved kind, schema version, model (and its revision) and parameters must equal this
        instance's, and when ``documents`` is given the saved corpus must be exactly those
        documents with the same content; otherwise ``IndexMismatchError`` says what differs.
        Missing or damaged files raise ``CorruptIndexError``.
        """
        directory = Path(directory)
        manifest = read_manifest(directory)
        model, revision = self.model_info()
        check_compatible(
            manifest,
            directory,
            kind=self.kind,
            model=model,
            revision=revision,
            params=plain_json(self.params()),
            libraries=self.libraries(),
        )
        if documents is not None:
            check_corpus(manifest, documents, directory)
        verify_files(manifest, directory)
        previous = self.__dict__.copy()
        self._reset_rows()
        try:
            self._load_payload(directory / "payload", manifest)
            self._register(manifest.documents)
        except CorruptIndexError:
            self.__dict__.update(previous)
            raise
        except self.payload_errors as exc:
            self.__dict__.update(previous)
            raise CorruptIndexError(
                f"{directory}: cannot read the {self.kind} payload: {exc}"
            ) from exc
        return self

    @classmethod
    def open(cls, directory: str | Path, **runtime: Any) -> Self:
        """Build an instance from the saved parameters and load it.

        ``runtime`` passes options that do not shape the contents (``device``, ``batch_size``).
        """
        manifest = read_manifest(Path(directory))
        if manifest.kind != cls.kind:
            raise IndexMismatchError(
                f"{directory} holds a {manifest.kind!r} index, not a {cls.kind!r} index"
            )
        return cls(**manifest.params, **runtime).load(directory)
