"""The ``bm25`` retriever: Okapi BM25 over page texts (see ``indexes.bm25``)."""

from __future__ import annotations

from typing import Any

from indexes.bm25 import BM25Index
from indexes.tokenize import TokenizerConfig
from retrievers.base import BaseRetriever


class BM25Retriever(BaseRetriever):
    """BM25 page retrieval.

    Parameters: ``k1`` (term-frequency saturation, > 0), ``b`` (length normalization, 0..1),
    ``epsilon`` (floor for negative idf, as a fraction of the mean idf) and ``tokenizer``
    (``TokenizerConfig`` fields: ``lowercase``, ``pattern``, ``stopwords``, ``min_length``).
    """

    name = "bm25"
    index_class = BM25Index

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenizer: TokenizerConfig | dict[str, Any] | None = None,
    ) -> None:
        super().__init__(BM25Index(k1=k1, b=b, epsilon=epsilon, tokenizer=tokenizer))
