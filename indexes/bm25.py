"""A BM25 page index on top of ``rank_bm25.BM25Okapi``.

Each page is one BM25 document. The score of page ``D`` for query terms ``q_1..q_n`` is

    sum_i idf(q_i) * f(q_i, D) * (k1 + 1) / (f(q_i, D) + k1 * (1 - b + b * |D| / avgdl))

with ``idf(q) = ln((N - n(q) + 0.5) / (n(q) + 0.5))``; rank-bm25 replaces a negative idf (a term
in more than half of the pages) by ``epsilon`` times the mean idf. Statistics (``N``, document
frequencies, ``avgdl``) are those of the whole store, also when a search is scoped to some
documents: scoping only restricts which pages are scored.

Incremental ``add`` rebuilds the BM25 statistics over all pages: a new document changes ``N``,
every document frequency and ``avgdl``, so the scores of pages already indexed change too, and
``BM25Okapi`` computes these once at construction. Tokens are kept, so a rebuild only counts.

What a page contributes is ``page_text`` (``indexes.pagetext``: by default its heading, text and
table text) cut into terms by ``tokenizer`` (``indexes.tokenize``: by default numbers kept
whole, English stopwords dropped, Snowball stems, bigrams). Questions pass through
``query_mode`` first (``indexes.queries``: by default instruction sentences are stripped and
financial statement names expanded to their printed titles), then the same tokenizer.

Empty pages are indexed as empty term lists and score 0. A store whose pages hold no terms at
all, or a query with no known terms, scores every page 0 (ties then rank by document id, page).
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from indexes.base import Candidates, IndexManifest, PageIndex, library_versions
from indexes.errors import CorruptIndexError
from indexes.pagetext import PageText, check_page_text, page_texts
from indexes.queries import QueryMode, apply_query_mode, check_query_mode
from indexes.tokenize import TokenizerConfig
from scanrag.schemas import Document

TOKENS_FILE = "tokens.json.gz"
# A slice's share of a sharded build: terms per page, term counts per page, pages per term.
Bm25Part = tuple[list[list[str]], list[dict[str, int]], dict[str, int]]


def tokenize_pages(
    tokenizer: TokenizerConfig, documents: Iterable[Document], composition: str = "text"
) -> Iterator[list[str]]:
    """Each page's terms, document after document, with page texts composed as
    ``composition`` says (plain text is read one page text at a time; a composition reads one
    document's pages). Terms are interned: a corpus repeats a few thousand words millions of
    times, and the index then holds one string per word instead of one per occurrence."""
    intern = sys.intern
    for document in documents:
        texts = (
            document.page_texts() if composition == "text" else page_texts(document, composition)
        )
        for text in texts:
            yield list(map(intern, tokenizer(text)))


def _tokenizer(value: TokenizerConfig | Mapping[str, Any] | None) -> TokenizerConfig:
    if isinstance(value, TokenizerConfig):
        return value
    try:
        return TokenizerConfig.model_validate(value or {})
    except ValidationError as exc:
        raise ValueError(f"tokenizer: {_errors_text(exc)}") from exc


def _errors_text(exc: ValidationError) -> str:
    errors = exc.errors()
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)


class BM25Index(PageIndex):
    """The ``bm25`` retriever: BM25 (Okapi) over page texts.

    ``k1`` (term-frequency saturation, > 0), ``b`` (length normalization, 0..1) and ``epsilon``
    (floor for negative idf, as a fraction of the mean idf) are rank-bm25's parameters;
    ``tokenizer`` is a ``TokenizerConfig`` or its fields as a dict (``lowercase``, ``pattern``,
    ``numbers``, ``stopwords``, ``min_length``, ``stem``, ``bigrams``; fields left out keep
    their defaults). ``page_text`` composes the indexed text of a page (``heading+text+tables``,
    ``heading+text``, ``text+tables``, ``text``); ``query_mode`` prepares questions (``raw``,
    ``strip``, ``stmt``, ``strip+stmt``; only affects searching, not the stored index).
    """

    kind = "bm25"

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenizer: TokenizerConfig | dict[str, Any] | None = None,
        page_text: PageText = "heading+text+tables",
        query_mode: QueryMode = "strip+stmt",
    ) -> None:
        super().__init__()
        self.check_params({"k1": k1, "b": b, "page_text": page_text, "query_mode": query_mode})
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.tokenizer = _tokenizer(tokenizer)
        self.page_text: PageText = page_text
        self.query_mode: QueryMode = query_mode
        self._tokens: list[list[str]] = []
        self._bm25: Any = None

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        k1, b = arguments.get("k1", 1.5), arguments.get("b", 0.75)
        if k1 <= 0:  # k1 = 0 makes rank-bm25 divide 0 by 0 for pages without the term
            raise ValueError(f"k1 must be > 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must lie in [0, 1], got {b}")
        if "tokenizer" in arguments:
            _tokenizer(arguments["tokenizer"])
        if "page_text" in arguments:
            check_page_text(arguments["page_text"])
        if "query_mode" in arguments:
            check_query_mode(arguments["query_mode"])

    def params(self) -> dict[str, Any]:
        return {
            "k1": self.k1,
            "b": self.b,
            "epsilon": self.epsilon,
            "tokenizer": self.tokenizer.model_dump(mode="json"),
            "page_text": self.page_text,
        }

    def manifest_extra(self) -> dict[str, Any]:
        return {"query_mode": self.query_mode}

    def libraries(self) -> dict[str, str]:
        extra = ("PyStemmer",) if self.tokenizer.stem else ()
        return library_versions("rank-bm25", *extra)

    def _build(self, corpus: list[list[str]]) -> Any:
        if not any(corpus):  # rank-bm25 divides by the vocabulary size
            return None
        from rank_bm25 import BM25Okapi

        return BM25Okapi(corpus, k1=self.k1, b=self.b, epsilon=self.epsilon)

    def _index(self, documents: list[Document]) -> None:
        new = list(tokenize_pages(self.tokenizer, documents, self.page_text))
        corpus = self._tokens + new
        self._bm25 = self._build(corpus)
        self._tokens = corpus

    def _build_part(self, documents: list[Document]) -> Bm25Part:
        """Terms, term counts per page and page counts per term (first seen first): the work
        rank-bm25 does per page, done for one slice of the corpus."""
        tokens = list(tokenize_pages(self.tokenizer, documents, self.page_text))
        counts = [dict(Counter(page)) for page in tokens]
        pages_with: dict[str, int] = {}
        for page_counts in counts:
            for term in page_counts:
                pages_with[term] = pages_with.get(term, 0) + 1
        return tokens, counts, pages_with

    def _index_parts(self, documents: list[Document], payloads: list[Any]) -> None:
        tokens = [page for part_tokens, _, _ in payloads for page in part_tokens]
        counts = [page for _, part_counts, _ in payloads for page in part_counts]
        pages_with: dict[str, int] = {}
        for _, _, part_pages_with in payloads:  # slices in order: first-seen order is kept
            for term, n in part_pages_with.items():
                pages_with[term] = pages_with.get(term, 0) + n
        self._bm25 = self._from_counts(counts, [len(page) for page in tokens], pages_with)
        self._tokens = tokens

    def _from_counts(
        self, counts: list[dict[str, int]], lengths: list[int], pages_with: dict[str, int]
    ) -> Any:
        """The ``BM25Okapi`` that ``BM25Okapi(corpus)`` builds, from counts made elsewhere:
        the same attributes in the same order (so idf sums and scores are bit-identical)."""
        if not any(lengths):
            return None
        from rank_bm25 import BM25Okapi

        okapi = BM25Okapi.__new__(BM25Okapi)
        okapi.k1, okapi.b, okapi.epsilon = self.k1, self.b, self.epsilon
        okapi.corpus_size = len(counts)
        okapi.avgdl = sum(lengths) / len(counts)
        okapi.doc_freqs = counts
        okapi.idf = {}
        okapi.doc_len = lengths
        okapi.tokenizer = None
        okapi._calc_idf(pages_with)
        return okapi

    def _candidates(self, queries: list[str], rows: np.ndarray | None, k: int) -> list[Candidates]:
        all_rows = np.arange(self.page_count, dtype=np.int64) if rows is None else rows
        found = []
        for query in queries:
            terms = self.tokenizer(apply_query_mode(query, self.query_mode))
            if self._bm25 is None or not terms:
                scores = np.zeros(all_rows.size)
            elif rows is None:
                scores = self._bm25.get_scores(terms)
            else:
                scores = self._bm25.get_batch_scores(terms, rows.tolist())
            found.append((all_rows, np.asarray(scores, dtype=np.float64)))
        return found

    def _save_payload(self, directory: Path) -> None:
        data = json.dumps(self._tokens, ensure_ascii=False, separators=(",", ":"))
        with gzip.GzipFile(directory / TOKENS_FILE, "wb", mtime=0) as fh:
            fh.write(data.encode("utf-8"))

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        with gzip.open(directory / TOKENS_FILE, "rb") as fh:
            tokens = json.loads(fh.read().decode("utf-8"))
        if not isinstance(tokens, list) or len(tokens) != manifest.page_count:
            raise CorruptIndexError(
                f"{directory}: {TOKENS_FILE} does not hold the {manifest.page_count} pages the "
                "manifest lists"
            )
        intern = sys.intern
        self._tokens = [[intern(str(term)) for term in page] for page in tokens]
        self._bm25 = self._build(self._tokens)
