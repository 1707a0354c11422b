"""The ``dense`` retriever: a sentence-transformers encoder with FAISS (see ``indexes.dense``)."""

from __future__ import annotations

from typing import Any

from indexes.dense import DenseIndex
from indexes.encoders import DEFAULT_MODEL
from retrievers.base import BaseRetriever


class DenseRetriever(BaseRetriever):
    """Dense page retrieval.

    ``model`` is any sentence-transformers model name or directory (default: the bundled
    all-MiniLM-L6-v2, offline). Other options are ``DenseIndex``'s: ``query_prefix``,
    ``passage_prefix``, ``pooling`` (auto/mean/cls), ``normalize``, ``faiss_index``
    (flat/ivf/hnsw), ``nlist``, ``nprobe``, ``hnsw_m``, ``ef_search``, ``chunk_tokens``,
    ``chunk_overlap``, ``aggregation`` (max/mean/sum), ``device`` and ``batch_size``.
    """

    name = "dense"
    index_class = DenseIndex

    def __init__(self, model: str = DEFAULT_MODEL, **options: Any) -> None:
        super().__init__(DenseIndex(model, **options))
