"""Page texts to BM25 term counts, a chunk of pages at a time, as arrays.

The result equals ``Counter(tokenizer(text))`` of every page (the test compares them): per
chunk, each (term, page) entry with its count, grouped by term, and each page's length (terms
in all). The work per chunk: each page's text cut into runs (``TokenizerConfig.runs``: one
``bytes.translate`` and ``split``) and each run mapped to its unigram ids through the
vocabulary's per-run cache (C-level ``map`` over a dict; the regular expression, stopword
test, comma removal and stemmer run once per distinct run), then, with numpy over the whole
chunk, the dropped words removed, neighbouring unigrams paired into bigram ids, first
occurrences recorded and (term, page) pairs counted by one sort, which leaves them term-major:
what the engine lays out (``scanrag.indexes.bm25_sparse``) without another sort.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scanrag.indexes.bm25_vocab import LOW_MASK, PAIR_SHIFT, POSITION_BITS, Vocabulary
from scanrag.indexes.pagetext import page_texts
from scanrag.schemas import Document

CHUNK_PAGES = 512  # pages counted together (a chunk's pages fit ``ROW_TYPE``)
ROW_TYPE = np.uint16
_MAX_POSITION = 1 << POSITION_BITS


@dataclass
class Counts:
    """Term counts of consecutive chunks of pages. Per chunk: each (term, page) entry's term,
    page (its row within the chunk) and count, grouped by term (a term's entries together,
    rows ascending), and each page's length."""

    terms: list[np.ndarray] = field(default_factory=list)  # term id per entry (int32)
    rows: list[np.ndarray] = field(default_factory=list)  # page within the chunk per entry
    tf: list[np.ndarray] = field(default_factory=list)  # count per entry (smallest uint)
    lengths: list[np.ndarray] = field(default_factory=list)  # terms per page (int64)

    def extend(self, other: Counts) -> None:
        self.terms += other.terms
        self.rows += other.rows
        self.tf += other.tf
        self.lengths += other.lengths

    @property
    def pages(self) -> int:
        return sum(int(part.size) for part in self.lengths)

    @property
    def entries(self) -> int:
        return sum(int(part.size) for part in self.terms)

    def take(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(terms, rows, tf, lengths) of each chunk in order, each let go once the next is
        asked for (memory returns as the caller consumes them); empties this object."""
        chunks = list(zip(self.terms, self.rows, self.tf, self.lengths, strict=True))
        self.terms, self.rows, self.tf, self.lengths = [], [], [], []
        chunks.reverse()
        while chunks:
            yield chunks.pop()


def smallest_uint(largest: int) -> type:
    """The smallest unsigned integer type that holds ``largest``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if largest <= np.iinfo(dtype).max:
            return dtype
    return np.uint64


def page_text_stream(documents: Iterable[Document], composition: str) -> Iterator[str]:
    """Each page's indexed text, document after document."""
    for document in documents:
        if composition == "text":
            yield from document.page_texts()
        else:
            yield from page_texts(document, composition)


def count_texts(vocab: Vocabulary, texts: Iterable[str], first_page: int = 0) -> Counts:
    """Count the terms of ``texts`` (pages ``first_page``, ``first_page + 1``...), adding new
    terms to ``vocab``."""
    counts = Counts()
    for chunk in count_chunks(vocab, texts, first_page):
        counts.extend(chunk)
    return counts


def count_chunks(vocab: Vocabulary, texts: Iterable[str], first_page: int = 0) -> Iterator[Counts]:
    """``count_texts``, one chunk of pages at a time."""
    chunk: list[str] = []
    page = first_page
    for text in texts:
        chunk.append(text)
        if len(chunk) == CHUNK_PAGES:
            yield count_chunk(vocab, chunk, page)
            page += len(chunk)
            chunk = []
            release_free_memory()
    if chunk:
        yield count_chunk(vocab, chunk, page)


def count_chunk(vocab: Vocabulary, texts: list[str], first_page: int) -> Counts:
    """Term counts of one chunk of pages (see the module docstring)."""
    tokenizer = vocab.tokenizer
    start = vocab.size
    n = len(texts)
    if n > np.iinfo(ROW_TYPE).max:
        raise ValueError(f"a chunk holds at most {np.iinfo(ROW_TYPE).max} pages")
    flat, raw_lengths = vocab.text_unigrams(texts)
    page_of = np.repeat(np.arange(n, dtype=np.int64), raw_lengths)
    kept = flat >= 0
    unigrams, unigram_page = flat[kept], page_of[kept]
    del flat, page_of, kept
    per_page_kept = np.bincount(unigram_page, minlength=n).astype(np.int64)
    page_start = np.cumsum(per_page_kept) - per_page_kept
    lengths = per_page_kept.copy()
    # first sightings: only terms new in this chunk need their first position
    new = np.flatnonzero(unigrams >= start)
    first_ids = [unigrams[new]]
    first_keys = [_key(unigram_page[new], new - page_start[unigram_page[new]], first_page)]
    ids, pages = [unigrams], [unigram_page]
    if tokenizer.bigrams and unigrams.size > 1:
        left = np.flatnonzero(unigram_page[1:] == unigram_page[:-1])
        pair_page = unigram_page[left]
        pair_ids = vocab.pair_ids_for(unigrams[left], unigrams[left + 1])
        ids.append(pair_ids)
        pages.append(pair_page)
        new = np.flatnonzero(pair_ids >= start)
        at = pair_page[new]
        first_ids.append(pair_ids[new])
        first_keys.append(_key(at, per_page_kept[at] + left[new] - page_start[at], first_page))
        lengths += np.maximum(per_page_kept - 1, 0)
    vocab.record_first(np.concatenate(first_ids), np.concatenate(first_keys), start)
    all_ids, all_pages = np.concatenate(ids), np.concatenate(pages)
    del ids, pages
    entries, tf = np.unique((all_ids << PAIR_SHIFT) | all_pages, return_counts=True)
    return Counts(
        terms=[(entries >> PAIR_SHIFT).astype(np.int32)],
        rows=[(entries & LOW_MASK).astype(ROW_TYPE)],
        tf=[tf.astype(smallest_uint(int(tf.max()) if tf.size else 0))],
        lengths=[lengths],
    )


def _key(pages: np.ndarray, positions: np.ndarray, first_page: int) -> np.ndarray:
    """First-seen keys: page << POSITION_BITS | position of the term in the page's list."""
    if positions.size and int(positions.max()) >= _MAX_POSITION:
        raise ValueError(f"a page holds more than {_MAX_POSITION} terms")
    return ((pages + first_page) << np.int64(POSITION_BITS)) | positions


def count_term_dicts(vocab: Vocabulary, pages: Iterable[dict[str, int]]) -> Counts:
    """Counts from per-page ``{term: count}`` dicts in first-seen order (indexes saved by
    earlier versions): every string enters the vocabulary as it is spelled."""
    counts = Counts()
    terms: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for page, page_counts in enumerate(pages):
        start = vocab.size
        ids = np.array([vocab.unigram_id(t) for t in page_counts], dtype=np.int64)
        keys = (np.int64(page) << np.int64(POSITION_BITS)) | np.arange(ids.size, dtype=np.int64)
        vocab.record_first(ids, keys, start)
        terms.append(ids)
        values.append(np.array(list(page_counts.values()), dtype=np.int64))
        if len(terms) == CHUNK_PAGES:
            counts.extend(_chunk_of_pages(terms, values))
            terms, values = [], []
    if terms:
        counts.extend(_chunk_of_pages(terms, values))
    return counts


def _chunk_of_pages(terms: list[np.ndarray], values: list[np.ndarray]) -> Counts:
    """One chunk from each page's term ids and counts (distinct terms per page)."""
    sizes = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    ids, tf = np.concatenate(terms), np.concatenate(values)
    rows = np.repeat(np.arange(len(terms), dtype=np.int64), sizes)
    order = np.lexsort((rows, ids))
    lengths = np.array([int(v.sum()) for v in values], dtype=np.int64)
    return Counts(
        terms=[ids[order].astype(np.int32)],
        rows=[rows[order].astype(ROW_TYPE)],
        tf=[tf[order].astype(smallest_uint(int(tf.max()) if tf.size else 0))],
        lengths=[lengths],
    )


def release_free_memory() -> None:
    """Hand memory freed by the last chunk back to the system (glibc keeps freed arrays of a
    size it has seen in its heap, which grows the process by the chunk temporaries)."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None
