"""Retrievers: the search contract and the composites (``hybrid``, ``oracle``).

Every retriever honours the same search contract (``scanrag.protocols.Retriever``):

* ``search(query, k, doc_ids=None)`` returns at most ``k`` ``PageHit``s, best first, ranks
  1..n, ties broken by document id then page; ``search_batch`` does the same for many queries;
* ``doc_ids`` scopes the search to those ``Document.id`` values (one id string, a list, or
  ``None`` for every indexed document; an empty list scopes to nothing and returns ``[]``);
* a blank query returns ``[]``; ``k <= 0`` raises ``ValueError``; ``k`` larger than the scope
  returns every page in it; an id the retriever does not hold raises
  ``scanrag.indexes.errors.UnknownDocumentError`` naming it (and listing the known ids).

An index is a retriever: ``scanrag.indexes.base.PageIndex`` subclasses (``BM25Index``,
``DenseIndex``, ``ColPaliIndex``, plugins) are registered directly, with ``save``/``load``/``open``
and a manifest of their own. Composites live in this package and hold other retrievers. A retriever
is created by name with ``scanrag.retriever_specs.create_retriever(name, params)``: the
constructor's keyword arguments are the configuration parameters.
"""
