"""Deprecated module: the ``colpali`` retriever is ``indexes.colpali.ColPaliIndex`` itself.

``retrievers.colpali.ColPaliRetriever`` stays importable for one release as an alias of it (its
parameters after ``model`` are keyword-only now).
"""

from scanrag.compat import moved_names

__getattr__ = moved_names(__name__, {"ColPaliRetriever": "indexes.colpali:ColPaliIndex"})
