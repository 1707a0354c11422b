"""Page texts to BM25 term counts, a chunk of pages at a time, as arrays.

The result equals ``Counter(tokenizer(text))`` of every page (the test compares them): per
page, each term id with its count, and the page's length (terms in all). The work per chunk:
the tokenizer's regular expression per page (C), each raw word mapped to its unigram id
through the vocabulary's per-word cache (C-level ``map`` over a dict; the tokenizer's stopword
test, comma removal and stemmer run once per distinct word), then, with numpy over the whole
chunk, the dropped words removed, neighbouring unigrams paired into bigram ids, first
occurrences recorded and (page, term) pairs counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from scanrag.indexes.bm25_vocab import LOW_MASK, PAIR_SHIFT, POSITION_BITS, Vocabulary
from scanrag.indexes.pagetext import page_texts
from scanrag.schemas import Document

CHUNK_PAGES = 512
_MAX_POSITION = 1 << POSITION_BITS


@dataclass
class Counts:
    """Term counts of consecutive pages, page after page, terms ascending within a page."""

    row_counts: list[np.ndarray] = field(default_factory=list)  # entries per page
    terms: list[np.ndarray] = field(default_factory=list)  # term id per entry
    tf: list[np.ndarray] = field(default_factory=list)  # count per entry
    lengths: list[np.ndarray] = field(default_factory=list)  # terms per page

    def extend(self, other: Counts) -> None:
        self.row_counts += other.row_counts
        self.terms += other.terms
        self.tf += other.tf
        self.lengths += other.lengths

    @property
    def pages(self) -> int:
        return sum(int(part.size) for part in self.lengths)

    @property
    def entries(self) -> int:
        return sum(int(part.size) for part in self.terms)

    def joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(row counts, terms, tf, lengths) as single arrays; empties this object."""
        row_counts = _cat(self.row_counts, np.int64)
        terms = _cat(self.terms, np.int32)
        tf = _cat(self.tf, np.uint16 if all(t.dtype == np.uint16 for t in self.tf) else np.uint32)
        lengths = _cat(self.lengths, np.int64)
        self.row_counts, self.terms, self.tf, self.lengths = [], [], [], []
        return row_counts, terms, tf, lengths


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    out: np.ndarray = np.concatenate(parts).astype(dtype, copy=False)
    parts.clear()
    return out


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
    words = [tokenizer.words(text) for text in texts]
    n = len(words)
    raw_lengths = np.fromiter(map(len, words), dtype=np.int64, count=n)
    total = int(raw_lengths.sum())
    word_id = vocab.words.__getitem__
    flat = np.fromiter(map(word_id, chain.from_iterable(words)), dtype=np.int64, count=total)
    del words
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
    entries, tf = np.unique((all_pages << PAIR_SHIFT) | all_ids, return_counts=True)
    return Counts(
        row_counts=[np.bincount(entries >> PAIR_SHIFT, minlength=n).astype(np.int64)],
        terms=[(entries & LOW_MASK).astype(np.int32)],
        tf=[tf.astype(np.uint16 if tf.size == 0 or tf.max() < 1 << 16 else np.uint32)],
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
    row_counts, terms, tf, lengths = [], [], [], []
    for page, page_counts in enumerate(pages):
        start = vocab.size
        ids = np.array([vocab.unigram_id(t) for t in page_counts], dtype=np.int64)
        values = np.array(list(page_counts.values()), dtype=np.int64)
        keys = (np.int64(page) << np.int64(POSITION_BITS)) | np.arange(ids.size, dtype=np.int64)
        vocab.record_first(ids, keys, start)
        order = np.argsort(ids)
        row_counts.append(np.array([ids.size], dtype=np.int64))
        terms.append(ids[order].astype(np.int32))
        tf.append(values[order].astype(np.uint32))
        lengths.append(np.array([int(values.sum())], dtype=np.int64))
    return Counts(row_counts, terms, tf, lengths)


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
