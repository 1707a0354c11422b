"""A BM25 page index on top of ``rank_bm25.BM25Okapi``.

Each page is one BM25 document. The score of page ``D`` for query terms ``q_1..q_n`` is

    sum_i idf(q_i) * f(q_i, D) * (k1 + 1) / (f(q_i, D) + k1 * (1 - b + b * |D| / avgdl))

with ``idf(q) = ln((N - n(q) + 0.5) / (n(q) + 0.5))``; rank-bm25 replaces a negative idf (a term
in more than half of the pages) by ``epsilon`` times the mean idf. Statistics (``N``, document
frequencies, ``avgdl``) are those of the whole store, also when a search is scoped to some
documents: scoping only restricts which pages are scored.

Incremental ``add`` rebuilds the BM25 statistics over all pages: a new document changes ``N``,
every document frequency and ``avgdl``, so the scores of pages already indexed change too, and
``BM25Okapi`` computes these once at construction. The index keeps each page's term counts (in
first-seen order; ``BM25Okapi`` holds the same dicts as ``doc_freqs``) and the number of pages
per term, so a rebuild only recomputes the idf: token lists are neither kept nor saved (a
saved index holds the counts; indexes saved with token lists still load).

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

COUNTS_FILE = "counts.json.gz"
TOKENS_FILE = "tokens.json.gz"  # what earlier versions saved: each page's terms, in order
# A slice's share of a sharded build: term counts per page, page lengths, pages per term.
Bm25Part = tuple[list[dict[str, int]], list[int], dict[str, int]]


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
        self._counts: list[dict[str, int]] = []  # per page: term -> occurrences
        self._lengths: list[int] = []  # per page: terms in all
        self._pages_with: dict[str, int] = {}  # per term: pages holding it (first seen first)
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

    def _index(self, documents: list[Document]) -> None:
        counts, lengths, pages_with = _count(
            tokenize_pages(self.tokenizer, documents, self.page_text)
        )
        self._extend(counts, lengths, [pages_with])

    def _build_part(self, documents: list[Document]) -> Bm25Part:
        """Term counts per page, page lengths and pages per term (first seen first): the work
        rank-bm25 does per page, done for one slice of the corpus."""
        return _count(tokenize_pages(self.tokenizer, documents, self.page_text))

    def _index_parts(self, documents: list[Document], payloads: list[Any]) -> None:
        counts = [page for part_counts, _, _ in payloads for page in part_counts]
        lengths = [n for _, part_lengths, _ in payloads for n in part_lengths]
        self._extend(counts, lengths, [part[2] for part in payloads])

    def _extend(
        self,
        counts: list[dict[str, int]],
        lengths: list[int],
        pages_with: list[dict[str, int]],
    ) -> None:
        """Append pages (their counts, lengths and pages-per-term tallies, in corpus order)
        and rebuild the statistics; nothing changes if the rebuild fails."""
        merged = dict(self._pages_with)
        for tally in pages_with:  # in order: first-seen order is kept
            if not merged:  # the first tally of a fresh index: a plain copy (C speed)
                merged.update(tally)
                continue
            get = merged.get
            for term, n in tally.items():
                merged[term] = get(term, 0) + n
        all_counts, all_lengths = self._counts + counts, self._lengths + lengths
        self._bm25 = self._from_counts(all_counts, all_lengths, merged)
        self._counts, self._lengths, self._pages_with = all_counts, all_lengths, merged

    def _from_counts(
        self, counts: list[dict[str, int]], lengths: list[int], pages_with: dict[str, int]
    ) -> Any:
        """The ``BM25Okapi`` that ``BM25Okapi(corpus)`` builds, from counts: the same
        attributes in the same order (so idf sums and scores are bit-identical)."""
        if not any(lengths):  # rank-bm25 divides by the vocabulary size
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
        data = json.dumps(self._counts, ensure_ascii=False, separators=(",", ":"))
        with gzip.GzipFile(directory / COUNTS_FILE, "wb", mtime=0) as fh:
            fh.write(data.encode("utf-8"))

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        counted = (directory / COUNTS_FILE).is_file() or not (directory / TOKENS_FILE).is_file()
        name = COUNTS_FILE if counted else TOKENS_FILE
        with gzip.open(directory / name, "rb") as fh:
            pages = json.loads(fh.read().decode("utf-8"))
        if not isinstance(pages, list) or len(pages) != manifest.page_count:
            raise CorruptIndexError(
                f"{directory}: {name} does not hold the {manifest.page_count} pages the "
                "manifest lists"
            )
        intern = sys.intern
        if counted:
            counts = [{intern(str(t)): int(n) for t, n in page.items()} for page in pages]
        else:
            counts = [dict(Counter(intern(str(t)) for t in page)) for page in pages]
        lengths, pages_with = [sum(c.values()) for c in counts], _count_pages(counts)
        self._bm25 = self._from_counts(counts, lengths, pages_with)
        self._counts, self._lengths, self._pages_with = counts, lengths, pages_with


def _count(pages: Iterable[Iterable[str]]) -> Bm25Part:
    """Each page's term counts (first seen first) and length, and pages per term."""
    counts = [dict(Counter(page)) for page in pages]
    return counts, [sum(c.values()) for c in counts], _count_pages(counts)


def _count_pages(counts: list[dict[str, int]]) -> dict[str, int]:
    pages_with: dict[str, int] = {}
    get = pages_with.get
    for page_counts in counts:
        for term in page_counts:
            pages_with[term] = get(term, 0) + 1
    return pages_with
