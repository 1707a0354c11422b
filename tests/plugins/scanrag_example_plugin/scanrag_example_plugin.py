"""An example ScanRAG retriever plugin: TF-IDF vectors compared by cosine similarity.

A retriever is one ``PageIndex`` subclass: the base gives scoping, deterministic ranking,
input checks, the manifest and save/load; the plugin only indexes pages and scores the
candidate rows. Its constructor's keyword arguments are the configuration parameters.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from scanrag.indexes.base import Candidates, PageIndex
from scanrag.indexes.manifest import IndexManifest
from scanrag.indexes.tokenize import TokenizerConfig
from scanrag.schemas import Document


class TfidfIndex(PageIndex):
    """``example_tfidf``: TF-IDF cosine page retrieval (``sublinear_tf``: 1 + log tf)."""

    kind = "example_tfidf"

    def __init__(self, sublinear_tf: bool = True) -> None:
        super().__init__()
        self.sublinear_tf = sublinear_tf
        self.tokenize = TokenizerConfig(stopwords="english")
        self._counts: list[Counter[str]] = []

    def params(self) -> dict[str, Any]:
        return {"sublinear_tf": self.sublinear_tf}

    def _index(self, documents: list[Document]) -> None:
        self._counts += [Counter(self.tokenize(p.text)) for d in documents for p in d.pages]

    def _weights(self, counts: Counter[str], df: Counter[str]) -> dict[str, float]:
        n = len(self._counts)
        tf = {t: 1 + math.log(c) if self.sublinear_tf else c for t, c in counts.items()}
        vec = {t: w * math.log((1 + n) / (1 + df[t])) for t, w in tf.items()}
        norm = math.sqrt(sum(w * w for w in vec.values())) or 1.0
        return {t: w / norm for t, w in vec.items()}

    def _candidates(self, queries: list[str], rows: np.ndarray | None, k: int) -> list[Candidates]:
        rows = np.arange(self.page_count) if rows is None else rows
        df = Counter(t for counts in self._counts for t in counts)
        pages = [self._weights(self._counts[r], df) for r in rows]
        found = []
        for query in queries:
            q = self._weights(Counter(self.tokenize(query)), df)
            scores = [sum(w * page.get(t, 0.0) for t, w in q.items()) for page in pages]
            found.append((rows, np.asarray(scores, dtype=np.float64)))
        return found

    def _save_payload(self, directory: Path) -> None:
        (directory / "counts.json").write_text(json.dumps([dict(c) for c in self._counts]))

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        counts = json.loads((directory / "counts.json").read_text())
        if len(counts) != manifest.page_count:
            raise ValueError(
                f"counts.json holds {len(counts)} pages, expected {manifest.page_count}"
            )
        self._counts = [Counter(c) for c in counts]
