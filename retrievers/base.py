"""The retriever contract, a retriever over a page index, and the name-based factory.

Every retriever honours the same search contract (``scanrag.protocols.Retriever``):

* ``search(query, k, doc_ids=None)`` returns at most ``k`` ``PageHit``s, best first, ranks
  1..n, ties broken by document id then page; ``search_batch`` does the same for many queries;
* ``doc_ids`` scopes the search to those ``Document.id`` values (one id string, a list, or
  ``None`` for every indexed document; an empty list scopes to nothing and returns ``[]``);
* a blank query returns ``[]``; ``k <= 0`` raises ``ValueError``; ``k`` larger than the scope
  returns every page in it; an id the retriever does not hold raises ``UnknownDocumentError``
  naming it (and listing the known ids).

``BaseRetriever`` wraps one ``PageIndex`` and adds ``save``/``load``/``open``; a new
index-backed retriever is a subclass that builds its index in ``__init__``. Retrievers are
created by name with ``build_retriever(name, **params)``: the constructor's keyword arguments
are the configuration parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

from indexes.base import PageIndex, check_search_args
from indexes.errors import (
    CorruptIndexError,
    IndexMismatchError,
    ModelLoadError,
    UnknownDocumentError,
)
from scanrag.protocols import Retriever
from scanrag.registry import RETRIEVERS
from scanrag.schemas import Document, PageHit

__all__ = [
    "BaseRetriever",
    "CorruptIndexError",
    "IndexMismatchError",
    "ModelLoadError",
    "Retriever",
    "UnknownDocumentError",
    "build_retriever",
    "check_search_args",
]


class BaseRetriever:
    """A retriever answering from one ``PageIndex``.

    ``exhaustive`` tells callers that a search returns ``min(k, pages in scope)`` hits (the oracle
    is the exception: it returns only gold pages).
    """

    name: ClassVar[str] = "index"
    exhaustive: ClassVar[bool] = True
    index_class: ClassVar[type[PageIndex]]

    def __init__(self, index: PageIndex) -> None:
        self.index = index

    @classmethod
    def from_index(cls, index: PageIndex) -> Self:
        """Wrap an existing index (for instance one returned by ``PageIndex.open``)."""
        retriever = cls.__new__(cls)
        BaseRetriever.__init__(retriever, index)
        return retriever

    @classmethod
    def open(cls, directory: str | Path, **runtime: Any) -> Self:
        """Load a saved index with the parameters recorded in its manifest."""
        return cls.from_index(cls.index_class.open(directory, **runtime))

    def add(self, documents: Sequence[Document]) -> None:
        self.index.add(documents)

    def search(
        self, query: str, k: int, doc_ids: Sequence[str] | str | None = None
    ) -> list[PageHit]:
        return self.index.search(query, k, doc_ids)

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | str | None = None
    ) -> list[list[PageHit]]:
        return self.index.search_batch(queries, k, doc_ids)

    def manifest(self) -> dict[str, Any]:
        return {"retriever": self.name, **self.index.manifest()}

    @property
    def document_ids(self) -> list[str]:
        return self.index.document_ids

    @property
    def page_count(self) -> int:
        return self.index.page_count

    def save(self, directory: str | Path) -> Path:
        return self.index.save(directory)

    def load(self, directory: str | Path, documents: Sequence[Document] | None = None) -> Self:
        """Load a saved index built with this retriever's parameters (see ``PageIndex.load``)."""
        self.index.load(directory, documents)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(pages={self.page_count}, docs={len(self.document_ids)})"


def build_retriever(name: str, /, **params: Any) -> Retriever:
    """Create the retriever registered as ``name`` (built-in or plugin) with ``params``.

    Unknown names raise ``scanrag.registry.UnknownNameError`` listing the known ones.
    """
    retriever = RETRIEVERS.create(name, **params)
    if not isinstance(retriever, Retriever):
        raise TypeError(
            f"retriever {name!r} built a {type(retriever).__name__}, which lacks the Retriever "
            "protocol (name, add, search, search_batch, manifest)"
        )
    return retriever
