"""Deprecated module: the ``dense`` retriever is ``indexes.dense.DenseIndex`` itself.

``retrievers.dense.DenseRetriever`` stays importable for one release as an alias of it.
"""

from scanrag.compat import moved_names

__getattr__ = moved_names(__name__, {"DenseRetriever": "indexes.dense:DenseIndex"})
