"""The term ids of a BM25 index, assigned without building a string per bigram.

A term is a string (``scanrag.indexes.tokenize``): a unigram (a stemmed word) or a bigram ``"a_b"``
of two neighbouring unigrams. Every distinct string gets one integer id:

* unigrams by string (``unigrams``); page text maps to unigram ids through a cache of runs
  or of raw words (``scanrag.indexes.bm25_runs``), so the regular expression, stopword tests
  and stemming run once per distinct run or word, not once per occurrence;
* a bigram by the pair of its parts' ids, ``a << 32 | b``, in sorted arrays (``pairs``,
  ``scanrag.indexes.bm25_pairs``): 16 bytes per bigram instead of a string and a dict entry;
* strings that contain ``_`` otherwise (``joined``): unigrams with an underscore (``\\w``
  matches it: ``"___"`` lines of a form) and bigrams whose parts have one. They make the only
  cases where two different pairs spell one string (``"a_b" + "c"`` and ``"a" + "b_c"``), or a
  pair spells a unigram (``"x" + "y"`` and the word ``"x_y"``); those share one id, as the
  reference tokenizer's strings would.

Ids are given in no particular order; ``first_rank`` records each term's place in the order
terms first occur (by page, then position in the page's term list), which is the order
rank-bm25 sums its idf values in (``scanrag.indexes.bm25_sparse``). Pages arrive in order, so
the terms new in a chunk (or a part, or a page of an earlier index's counts) all come after
every term before them: their ranks are the next ones, in the order of their first-seen keys
(``page << 24 | position``, only compared within the block). One integer per term, kept as
the smallest type that holds the ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from scanrag.indexes.bm25_pairs import LOW_MASK, PAIR_SHIFT, PairTable
from scanrag.indexes.bm25_runs import MULTI, RunIds, WordIds, expand_runs
from scanrag.indexes.tokenize import TokenizerConfig

POSITION_BITS = 24  # a first-seen key is page << 24 | position of the term in the page's list
UNSEEN = np.iinfo(np.int64).max


class Vocabulary:
    """Term ids (see the module docstring). ``size`` ids are in use, ``0..size-1``."""

    def __init__(self, tokenizer: TokenizerConfig) -> None:
        self.tokenizer = tokenizer
        self.size = 0
        self.unigrams: dict[str, int] = {}
        self.unigram_of: dict[int, str] = {}
        self.joined: dict[str, int] = {}
        self.underscored: set[int] = set()  # unigram ids whose string holds "_"
        self.pairs = PairTable()  # bigrams by the pair of their unigrams' ids
        self._waiting: dict[str, list[str]] = {}  # part -> "x_y" unigrams waiting for it
        self._ranks: list[np.ndarray] = []  # first-seen ranks, in id order, in blocks
        self._ranked = 0
        self._last_key = -1  # the largest first-seen key recorded (blocks must follow it)
        self.words = WordIds(self)
        self.runs = RunIds(self)

    # -- page text ----------------------------------------------------------------------------
    def text_unigrams(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each page's raw tokens as unigram ids (-1: dropped by the tokenizer), pages one
        after another, and the number of ids of each page; new unigrams get ids."""
        tokenizer = self.tokenizer
        self.runs.trim()
        if tokenizer.splits_runs:
            pieces: list[Any] = [tokenizer.runs(text) for text in texts]
            lookup: Any = self.runs.__getitem__
        else:
            pieces, lookup = [tokenizer.words(text) for text in texts], self.words.__getitem__
        counts = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        total = int(counts.sum())
        codes = np.fromiter(map(lookup, chain.from_iterable(pieces)), np.int64, count=total)
        del pieces
        several = np.flatnonzero(codes <= MULTI)
        if several.size:
            codes, counts = expand_runs(codes, counts, several, self.runs.multi)
        return codes, counts

    def word_id(self, word: str) -> int:
        """The unigram id of raw token ``word`` (-1: the tokenizer drops it), created when
        new; not cached (``words`` caches)."""
        term = self.tokenizer.word_term(word)
        return -1 if term is None else self.unigram_id(term)

    # -- unigrams ---------------------------------------------------------------------------
    def unigram_id(self, term: str) -> int:
        """The id of unigram ``term``, created when new."""
        found = self.unigrams.get(term)
        if found is not None:
            return found
        found = self._existing_string(term) if "_" in term else None
        if found is None:
            found = self._new_ids(1)
        self.unigrams[term] = found
        self.unigram_of[found] = term
        if "_" in term:
            self.joined[term] = found
            self.underscored.add(found)
            self._register_spelled_pair(term, found)
        for waiting in self._waiting.pop(term, ()):
            self._register_spelled_pair(waiting, self.unigrams[waiting])
        return found

    def _existing_string(self, term: str) -> int | None:
        """The id a new unigram with an underscore already has as another term's string."""
        found = self.joined.get(term)
        if found is None and term.count("_") == 1:
            x, y = term.split("_")
            ux, uy = self.unigrams.get(x), self.unigrams.get(y)
            if ux is not None and uy is not None:
                found = self.pairs.get((ux << 32) | uy)
        return found

    def _register_spelled_pair(self, term: str, term_id: int) -> None:
        """``"x_y"`` (one underscore) is also the bigram of unigrams x and y: once both
        exist, the pair maps to ``term_id``."""
        if term.count("_") != 1:
            return
        x, y = term.split("_")
        if not x or not y:
            return
        ux, uy = self.unigrams.get(x), self.unigrams.get(y)
        if ux is None or uy is None:
            for part in (x, y):
                if part not in self.unigrams:
                    self._waiting.setdefault(part, []).append(term)
            return
        key = (ux << 32) | uy
        if self.pairs.get(key) is None:
            self.pairs.pending[key] = term_id

    # -- bigrams ----------------------------------------------------------------------------
    def pair_ids_for(self, a: np.ndarray, b: np.ndarray, create: bool = True) -> np.ndarray:
        """The bigram id of each pair ``(a[i], b[i])`` of unigram ids; new pairs get ids
        (``create``) or -1."""
        self.pairs.merge_pending()
        keys = (a.astype(np.int64) << PAIR_SHIFT) | b.astype(np.int64)
        # distinct keys, ascending: fewer lookups, and binary searches that move forward
        distinct, inverse = np.unique(keys, return_inverse=True)
        del keys
        ids = self.pairs.lookup(distinct)
        missing = ids < 0
        if create and missing.any():
            new_keys = distinct[missing]
            new_ids = self._new_pairs(new_keys)
            ids[missing] = new_ids
            self.pairs.insert(new_keys, new_ids)
        return ids[inverse]

    def _new_pairs(self, keys: np.ndarray) -> np.ndarray:
        """Ids for pairs not seen before: fresh ones, except where an underscore makes the
        spelled string one that already has an id."""
        a, b = keys >> PAIR_SHIFT, keys & LOW_MASK
        spelled = np.zeros(keys.size, dtype=bool)
        if self.underscored:
            marked = np.fromiter(self.underscored, dtype=np.int64, count=len(self.underscored))
            spelled = np.isin(a, marked) | np.isin(b, marked)
        ids = np.empty(keys.size, dtype=np.int64)
        plain = ~spelled
        count = int(plain.sum())
        ids[plain] = np.arange(self.size, self.size + count, dtype=np.int64)
        self._new_ids(count)
        for i in np.flatnonzero(spelled).tolist():
            term = f"{self.unigram_of[int(a[i])]}_{self.unigram_of[int(b[i])]}"
            found = self.joined.get(term)
            if found is None:
                found = self._new_ids(1)
                self.joined[term] = found
            ids[i] = found
        return ids

    def settle(self) -> None:
        """Merge every pair added lately into the main table (after a build: a query then
        searches one table)."""
        self.pairs.settle()

    # -- ids and first-seen keys -------------------------------------------------------------
    def _new_ids(self, count: int) -> int:
        first = self.size
        self.size += count
        return first

    def record_first(self, ids: np.ndarray, keys: np.ndarray, start: int) -> None:
        """Give ids ``start..size-1`` (new since ``start``) their first-seen ranks, ordered by
        the smallest of ``keys`` where ``ids`` names them (ties by id); every key must follow
        those recorded before."""
        if start != self._ranked:
            raise RuntimeError("first-seen keys recorded out of order")
        block = np.full(self.size - start, UNSEEN, dtype=np.int64)
        new = ids >= start
        np.minimum.at(block, ids[new] - start, keys[new])
        if not block.size:
            return
        if int(block.min()) <= self._last_key:
            raise RuntimeError("first-seen keys must follow the ones recorded before")
        self._last_key = int(block.max())
        ranks = np.empty(block.size, dtype=np.int64)
        ranks[np.argsort(block, kind="stable")] = np.arange(start, self.size, dtype=np.int64)
        self._ranks.append(ranks.astype(_rank_type(self.size)))
        self._ranked = self.size

    @property
    def first_rank(self) -> np.ndarray:
        """Each id's place in first-seen order (a permutation of ``0..size-1``)."""
        if len(self._ranks) != 1:
            merged = np.concatenate(self._ranks) if self._ranks else np.zeros(0, np.int64)
            self._ranks = [merged.astype(_rank_type(merged.size), copy=False)]
        return self._ranks[0]

    def _reset_ranks(self, keys: np.ndarray) -> None:
        """Take the order of ``keys`` (one per id: first-seen keys or ranks) as every id's
        first-seen rank."""
        ranks: np.ndarray = np.empty(keys.size, dtype=_rank_type(keys.size))
        ranks[np.argsort(keys, kind="stable")] = np.arange(keys.size)
        self._ranks, self._ranked = [ranks], keys.size
        self._last_key = int(keys.max()) if keys.size else -1

    # -- queries ----------------------------------------------------------------------------
    def query_ids(self, terms: list[str], bigrams: bool) -> np.ndarray:
        """Ids of the tokenizer's output for a query (unigrams then bigrams when
        ``bigrams``), in order; -1 for terms the index does not hold. The bigrams are
        looked up together (one search per pair table); reads only, so searches may run
        concurrently."""
        n = (len(terms) + 1) // 2 if bigrams and terms else len(terms)
        get = self.unigrams.get
        unis = np.array([get(t, -1) for t in terms[:n]], dtype=np.int64)
        if len(terms) == n:
            return unis
        # a pair with an unknown part makes a negative key, which no table holds
        keys = (unis[:-1] << PAIR_SHIFT) | unis[1:]
        pairs = self.pairs.lookup(keys)
        if self.pairs.pending:
            for i in np.flatnonzero(pairs < 0).tolist():
                pairs[i] = self.pairs.pending.get(int(keys[i]), -1)
        if self.joined:  # spelled with an underscore (else unknown)
            for j in np.flatnonzero(pairs < 0).tolist():
                pairs[j] = self.joined.get(terms[n + j], -1)
        return np.concatenate([unis, pairs])

    def term_strings(self) -> list[str]:
        """Each id's term as the tokenizer spells it (for checks and inspection; builds one
        string per bigram)."""
        self.pairs.settle()
        spelled = [""] * self.size
        for term, term_id in self.joined.items():
            spelled[term_id] = term
        for term_id, term in self.unigram_of.items():
            spelled[term_id] = term
        unigram_of = self.unigram_of
        for key, term_id in zip(self.pairs.keys.tolist(), self.pairs.ids.tolist(), strict=True):
            if not spelled[term_id]:
                spelled[term_id] = f"{unigram_of[key >> 32]}_{unigram_of[key & 0xFFFFFFFF]}"
        return spelled

    def renumber(self, new_of_old: np.ndarray) -> None:
        """Give every term the id ``new_of_old[old id]`` (a permutation)."""
        self.pairs.remap(new_of_old)
        new = new_of_old.tolist()
        self.unigrams = {t: new[i] for t, i in self.unigrams.items()}
        self.unigram_of = {new[i]: t for i, t in self.unigram_of.items()}
        self.joined = {t: new[i] for t, i in self.joined.items()}
        self.underscored = {new[i] for i in self.underscored}
        words = WordIds(self)
        words.update({w: (new[i] if i >= 0 else -1) for w, i in self.words.items()})
        self.words = words
        ranks = np.empty(self.size, dtype=self.first_rank.dtype)
        ranks[new_of_old] = self.first_rank
        self._ranks = [ranks]
        self.runs = RunIds(self)  # codes name the old ids

    # -- merging and persistence -------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything needed to rebuild this vocabulary (arrays and plain lists)."""
        self.pairs.settle()
        unigram_terms = list(self.unigrams)
        others = [(t, i) for t, i in self.joined.items() if t not in self.unigrams]
        return {
            "size": self.size,
            "unigram_terms": unigram_terms,
            "unigram_ids": np.fromiter(
                self.unigrams.values(), dtype=np.int64, count=len(unigram_terms)
            ),
            "joined_terms": [t for t, _ in others],
            "joined_ids": np.array([i for _, i in others], dtype=np.int64),
            "pair_keys": self.pairs.keys,
            "pair_ids": self.pairs.ids,
            "first_key": self.first_rank,
        }

    @classmethod
    def from_state(cls, tokenizer: TokenizerConfig, state: dict[str, Any]) -> Vocabulary:
        vocab = cls(tokenizer)
        vocab.size = int(state["size"])
        ids = state["unigram_ids"].tolist()
        for term, term_id in zip(state["unigram_terms"], ids, strict=True):
            vocab.unigrams[term] = term_id
            vocab.unigram_of[term_id] = term
            if "_" in term:
                vocab.joined[term] = term_id
                vocab.underscored.add(term_id)
        for term in [t for t in vocab.unigrams if "_" in t and t.count("_") == 1]:
            x, y = term.split("_")
            if x and y and (x not in vocab.unigrams or y not in vocab.unigrams):
                for part in (x, y):
                    if part not in vocab.unigrams:
                        vocab._waiting.setdefault(part, []).append(term)
        vocab.joined.update(zip(state["joined_terms"], state["joined_ids"].tolist(), strict=True))
        vocab.pairs = PairTable(state["pair_keys"], state["pair_ids"])
        first = np.asarray(state["first_key"])  # ranks (keys from earlier versions)
        if first.size != vocab.size:
            raise ValueError(f"{first.size} first-seen keys for {vocab.size} terms")
        vocab._reset_ranks(first)
        return vocab

    def absorb(self, other: Vocabulary, page_offset: int) -> np.ndarray:
        """Add ``other``'s terms (a part built apart, its pages starting at ``page_offset``
        here); returns the id here of each of its ids."""
        start = self.size
        mapping = np.full(other.size, -1, dtype=np.int64)
        for term, term_id in other.unigrams.items():
            mapping[term_id] = self.unigram_id(term)
        other.pairs.settle()
        theirs = other.pairs
        if theirs.keys.size:
            a = mapping[theirs.keys >> PAIR_SHIFT]
            b = mapping[theirs.keys & LOW_MASK]
            ids = self.pair_ids_for(a, b)
            unset = mapping[theirs.ids] < 0
            mapping[theirs.ids[unset]] = ids[unset]
        for term, term_id in other.joined.items():
            if mapping[term_id] < 0:
                found = self.joined.get(term)
                if found is None:
                    found = self._new_ids(1)
                    self.joined[term] = found
                mapping[term_id] = found
        shifted = other.first_rank + (np.int64(page_offset) << np.int64(POSITION_BITS))
        self.record_first(mapping, shifted, start)
        return mapping


def _rank_type(count: int) -> type:
    return np.int32 if count < np.iinfo(np.int32).max else np.int64
