"""Deprecated module: the ``bm25`` retriever is ``indexes.bm25.BM25Index`` itself.

``retrievers.bm25.BM25Retriever`` stays importable for one release as an alias of it.
"""

from scanrag.compat import moved_names

__getattr__ = moved_names(__name__, {"BM25Retriever": "indexes.bm25:BM25Index"})
