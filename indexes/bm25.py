"""The ``bm25`` retriever: BM25 (Okapi) over page texts, scored by a sparse engine.

Each page is one BM25 document. The score of page ``D`` for query terms ``q_1..q_n`` is

    sum_i idf(q_i) * f(q_i, D) * (k1 + 1) / (f(q_i, D) + k1 * (1 - b + b * |D| / avgdl))

with ``idf(q) = ln((N - n(q) + 0.5) / (n(q) + 0.5))``; a negative idf (a term in more than half
of the pages) is replaced by ``epsilon`` times the mean idf. These are rank-bm25's
``BM25Okapi`` statistics, and the scores are equal to its scores, float for float
(``scanrag.indexes.bm25_reference`` keeps rank-bm25 as the reference the tests compare against);
``scanrag.indexes.bm25_sparse`` explains how. Statistics (``N``, document frequencies, ``avgdl``)
are those of the whole store, also when a search is scoped to some documents: scoping only
restricts which pages are scored (the same matrix, cut to the documents' pages).

Building: page texts are counted a chunk of pages at a time (``scanrag.indexes.bm25_counts``, terms
ids from ``scanrag.indexes.bm25_vocab``), then laid out term by term with every (term, page)
contribution computed once; a corpus query adds a few rows and keeps the top ``k``. Incremental
``add`` recomputes the statistics over all pages (a new document changes ``N``, every document
frequency and ``avgdl``, so the scores of pages already indexed change too).

What a page contributes is ``page_text`` (``scanrag.indexes.pagetext``: by default its heading, text
and table text) cut into terms by ``tokenizer`` (``scanrag.indexes.tokenize``: by default numbers
kept whole, English stopwords dropped, Snowball stems, bigrams). Questions pass through
``query_mode`` first (``scanrag.indexes.queries``: by default instruction sentences are stripped and
financial statement names expanded to their printed titles), then the same tokenizer.

Empty pages are indexed as empty term lists and score 0. A store whose pages hold no terms at
all, or a query with no known terms, scores every page 0 (ties then rank by document id, page).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from scanrag.indexes import bm25_spread
from scanrag.indexes.base import Candidates, PageIndex
from scanrag.indexes.bm25_counts import (
    Counts,
    count_chunks,
    count_texts,
    page_text_stream,
    release_free_memory,
)
from scanrag.indexes.bm25_disk import Spill
from scanrag.indexes.bm25_sparse import BYTES_PER_ENTRY, SparseBM25
from scanrag.indexes.bm25_store import load_engine, save_engine
from scanrag.indexes.bm25_vocab import Vocabulary
from scanrag.indexes.manifest import IndexedDocument, IndexManifest, library_versions
from scanrag.indexes.pagetext import PageText, check_page_text, page_texts
from scanrag.indexes.queries import QueryMode, apply_query_mode, check_query_mode
from scanrag.indexes.ranking import top_candidates
from scanrag.indexes.tokenize import TokenizerConfig
from scanrag.schemas import Document

# A slice's share of a sharded build: its vocabulary's state and its pages' term counts.
Bm25Part = tuple[dict[str, Any], Counts]


def tokenize_pages(
    tokenizer: TokenizerConfig, documents: Iterable[Document], composition: str = "text"
) -> Iterator[list[str]]:
    """Each page's terms, document after document, with page texts composed as
    ``composition`` says: the reference tokenization (what rank-bm25 is given in the tests
    and ``scanrag.indexes.bm25_reference``). Terms are interned."""
    intern = sys.intern
    for document in documents:
        texts = (
            document.page_texts() if composition == "text" else page_texts(document, composition)
        )
        for text in texts:
            yield list(map(intern, tokenizer(text)))


PART_TASK = "scanrag.indexes.bm25:build_part_of"
TEXTS_TASK = "scanrag.indexes.bm25:count_part_of"


def build_part_of(params: dict[str, Any], documents: list[Document]) -> Bm25Part:
    """A worker's share of a spread build: ``BM25Index(**params).build_part``'s payload."""
    return BM25Index(**params)._build_part(documents)


def count_part_of(params: dict[str, Any], texts: list[str]) -> Bm25Part:
    """The same for page texts already composed (``add_texts``)."""
    vocab = Vocabulary(BM25Index(**params).tokenizer)
    counts = count_texts(vocab, texts)
    return vocab.state(), counts


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
    Runtime options (not recorded, no effect on scores): ``mmap`` memory-maps a loaded
    index's postings instead of reading them (``None``: when they exceed 1 GiB;
    ``scanrag.indexes.bm25_store``); ``memory_mb`` bounds the postings a build holds in memory
    (about 24 bytes per (term, page) entry while building): past it the index is assembled on disk,
    in a temporary folder under ``spill_dir`` (default: the system's), and memory-mapped
    (``scanrag.indexes.bm25_disk``).
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
        mmap: bool | None = None,
        memory_mb: int = 2048,
        spill_dir: str | None = None,
    ) -> None:
        super().__init__()
        self.check_params(
            {
                "k1": k1,
                "b": b,
                "page_text": page_text,
                "query_mode": query_mode,
                "memory_mb": memory_mb,
            }
        )
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.tokenizer = _tokenizer(tokenizer)
        self.page_text: PageText = page_text
        self.query_mode: QueryMode = query_mode
        self.mmap, self.memory_mb, self.spill_dir = mmap, int(memory_mb), spill_dir
        self._spill: Spill | None = None
        self._vocab = Vocabulary(self.tokenizer)
        self._engine = SparseBM25(self.k1, self.b, self.epsilon)

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        k1, b = arguments.get("k1", 1.5), arguments.get("b", 0.75)
        if k1 <= 0:  # k1 = 0 makes rank-bm25 divide 0 by 0 for pages without the term
            raise ValueError(f"k1 must be > 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must lie in [0, 1], got {b}")
        if arguments.get("memory_mb", 0) < 0:
            raise ValueError(f"memory_mb must be >= 0, got {arguments['memory_mb']}")
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
        return library_versions(*extra)

    def _index(self, documents: list[Document]) -> None:
        pages = sum(d.num_pages for d in documents)
        with self._vocabulary_kept_on_failure():
            if len(documents) < 2 or not bm25_spread.wanted(pages):
                texts = page_text_stream(documents, self.page_text)
                self._install(count_chunks(self._vocab, texts, self._engine.page_count))
                return
            self._install(
                self._spread(
                    bm25_spread.cut(documents, lambda d: d.num_pages),
                    lambda piece: sum(d.num_pages for d in piece),
                    lambda piece: page_text_stream(piece, self.page_text),
                    PART_TASK,
                )
            )

    def _spread(
        self,
        slices: list[list[Any]],
        pages: Callable[[list[Any]], int],
        texts: Callable[[list[Any]], Iterable[str]],
        task: str,
    ) -> Iterator[Counts]:
        """Count ``slices`` here and in the pool's workers (``scanrag.indexes.bm25_spread``)."""
        from scanrag.documents.parallel import submit_task

        params = {**self.params(), "query_mode": self.query_mode}
        return bm25_spread.spread(
            slices,
            pages,
            lambda piece, first_row: count_chunks(self._vocab, texts(piece), first_row),
            lambda piece: submit_task(task, params, piece),
            self._absorb,
            self._engine.page_count,
        )

    def add_texts(self, entries: Sequence[IndexedDocument], texts: Iterable[str]) -> None:
        """Index documents given as their pages' indexed texts (already composed as
        ``page_text`` says), one text per page of ``entries`` in order: ``add`` without
        reading pages (benchmarks compare engines on the same texts with it)."""
        entries = list(entries)
        known = set(self._documents)
        if len({e.id for e in entries} | known) != len(entries) + len(known):
            raise ValueError("add_texts takes new documents, each once")
        texts = list(texts)
        if len(texts) != sum(e.pages for e in entries):
            raise ValueError(f"{len(texts)} texts for {sum(e.pages for e in entries)} pages")
        with self._vocabulary_kept_on_failure():
            if bm25_spread.wanted(len(texts)):
                slices = bm25_spread.cut(texts, lambda _: 1)
                self._install(self._spread(slices, len, list, TEXTS_TASK))
            else:
                self._install(count_chunks(self._vocab, texts, self._engine.page_count))
        self._register(entries)

    def _build_part(self, documents: list[Document]) -> Bm25Part:
        """The term counts of one slice of the corpus, with the slice's own vocabulary: the
        per-page work, done apart (another process) and merged in order by ``add_parts``."""
        vocab = Vocabulary(self.tokenizer)
        counts = count_texts(vocab, page_text_stream(documents, self.page_text))
        return vocab.state(), counts

    def _index_parts(self, documents: list[Document], payloads: list[Any]) -> None:
        with self._vocabulary_kept_on_failure():
            self._install(self._mapped_parts(payloads))

    def _mapped_parts(self, payloads: Iterable[Any]) -> Iterator[Counts]:
        offset = self._engine.page_count
        for payload in payloads:
            counts = self._absorb(payload, offset)
            offset += counts.pages
            yield counts

    def _absorb(self, payload: Bm25Part, first_row: int) -> Counts:
        """A part's counts with its terms in this vocabulary (its pages from ``first_row``)."""
        state, counts = payload
        mapping = self._vocab.absorb(Vocabulary.from_state(self.tokenizer, state), first_row)
        counts.terms = [mapping[t].astype(np.int32) for t in counts.terms]
        return counts

    @contextmanager
    def _vocabulary_kept_on_failure(self) -> Iterator[None]:
        """Restore the vocabulary when an add fails (the engine is only replaced at the
        end), so a failed add leaves the index as it was."""
        saved = self._vocab.state() if self._vocab.size else None
        try:
            yield
        except BaseException:
            self._vocab = (
                Vocabulary.from_state(self.tokenizer, saved)
                if saved is not None
                else Vocabulary(self.tokenizer)
            )
            raise

    def _install(self, chunks: Iterable[Counts]) -> None:
        """Append the counted pages and recompute; on failure nothing changes. Postings past
        ``memory_mb`` (or added to an index on disk) are assembled on disk
        (``scanrag.indexes.bm25_disk``) and memory-mapped."""
        budget = self.memory_mb * (1 << 20) // BYTES_PER_ENTRY
        held, spill = Counts(), None
        on_disk = isinstance(self._engine.docs, np.memmap)
        for chunk in chunks:
            if spill is not None:
                spill.add(chunk)
                continue
            held.extend(chunk)
            if on_disk or self._engine.docs.size + held.entries > budget:
                spill = Spill.create(self.spill_dir)
                if self._engine.page_count:
                    spill.add_postings(self._engine)
                spill.add(held)
        self._vocab.settle()
        engine = copy.copy(self._engine)  # append and compute replace arrays, never edit them
        if spill is None:
            engine.append(held, self._vocab.size)
            engine.compute(self._vocab.first_rank)
        else:
            engine = SparseBM25(self.k1, self.b, self.epsilon)
            spill.assemble(engine, self._vocab)
            self._spill = spill  # its folder holds the mapped arrays
        self._engine = engine
        release_free_memory()  # the build's temporaries, kept by malloc otherwise

    def _candidates(self, queries: list[str], rows: np.ndarray | None, k: int) -> list[Candidates]:
        all_rows = np.arange(self.page_count, dtype=np.int64) if rows is None else rows
        nan = bool(self._engine.nan_docs.size)  # else no score is nan: no pass looks for one
        found = []
        for query in queries:
            terms = self.tokenizer(apply_query_mode(query, self.query_mode))
            ids = self._vocab.query_ids(terms, self.tokenizer.bigrams)
            scores = self._engine.scores(ids, rows, bool(terms))
            found.append(top_candidates(all_rows, scores, self._tie_rank, k, nan=nan))
        return found

    def query_term_ids(self, query: str) -> list[int]:
        """The term ids a question is scored with (-1: not in the index), in order."""
        terms = self.tokenizer(apply_query_mode(query, self.query_mode))
        return self._vocab.query_ids(terms, self.tokenizer.bigrams).tolist()

    @property
    def engine(self) -> SparseBM25:
        return self._engine

    def postings_by_term(self) -> dict[str, tuple[list[int], list[int], list[float]]]:
        """Each term's pages, counts and contributions, by the term's string: what two
        builds of one corpus must agree on whatever ids they gave (checks; one string per
        term)."""
        engine, out = self._engine, {}
        idf = engine.idf
        for term_id, term in enumerate(self._vocab.term_strings()):
            start, stop = int(engine.indptr[term_id]), int(engine.indptr[term_id + 1])
            pages, tf = engine.docs[start:stop].astype(np.intp), engine.tf[start:stop]
            weights = (
                engine.contributions(tf, pages, float(idf[term_id]))
                if engine.scored
                else np.zeros(pages.size)
            )
            out[term] = (pages.tolist(), tf.tolist(), weights.tolist())
        return out

    def _save_payload(self, directory: Path) -> None:
        save_engine(directory, self._engine, self._vocab)

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        engine, vocab = load_engine(
            directory,
            manifest.page_count,
            self.tokenizer,
            (self.k1, self.b, self.epsilon),
            mmap=self.mmap,
        )
        self._engine, self._vocab = engine, vocab
