"""The retriever contract and the name-based factory.

Every retriever honours the same search contract (``scanrag.protocols.Retriever``):

* ``search(query, k, doc_ids=None)`` returns at most ``k`` ``PageHit``s, best first, ranks
  1..n, ties broken by document id then page; ``search_batch`` does the same for many queries;
* ``doc_ids`` scopes the search to those ``Document.id`` values (one id string, a list, or
  ``None`` for every indexed document; an empty list scopes to nothing and returns ``[]``);
* a blank query returns ``[]``; ``k <= 0`` raises ``ValueError``; ``k`` larger than the scope
  returns every page in it; an id the retriever does not hold raises ``UnknownDocumentError``
  naming it (and listing the known ids).

An index is a retriever: ``indexes.base.PageIndex`` subclasses (``BM25Index``, ``DenseIndex``,
``ColPaliIndex``, plugins) are registered directly, with ``save``/``load``/``open`` and a
manifest of their own. Composites (``hybrid``, ``oracle``) live in this package and hold other
retrievers. Retrievers are created by name with ``build_retriever(name, **params)``: the
constructor's keyword arguments are the configuration parameters.

``BaseRetriever`` is a deprecated alias of ``indexes.base.PageIndex`` (kept for one release).
"""

from __future__ import annotations

from typing import Any

from indexes.base import PageIndex, check_search_args
from indexes.errors import (
    CorruptIndexError,
    IndexMismatchError,
    ModelLoadError,
    UnknownDocumentError,
)
from scanrag.compat import moved_names
from scanrag.protocols import Retriever
from scanrag.retriever_specs import create_retriever

__all__ = [
    "CorruptIndexError",
    "IndexMismatchError",
    "ModelLoadError",
    "PageIndex",
    "Retriever",
    "UnknownDocumentError",
    "build_retriever",
    "check_search_args",
]


def build_retriever(name: str, /, **params: Any) -> Retriever:
    """Create the retriever registered as ``name`` (built-in or plugin) with ``params``.

    Unknown names raise ``scanrag.registry.UnknownNameError`` listing the known ones; a
    factory that does not build a ``Retriever`` raises ``TypeError``.
    """
    return create_retriever(name, params)


__getattr__ = moved_names(__name__, {"BaseRetriever": "indexes.base:PageIndex"})
