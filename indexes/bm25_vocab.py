"""The term ids of a BM25 index, assigned without building a string per bigram.

A term is a string (``scanrag.indexes.tokenize``): a unigram (a stemmed word) or a bigram ``"a_b"``
of two neighbouring unigrams. Every distinct string gets one integer id:

* unigrams by string (``unigrams``); page text maps to unigram ids through a cache of runs
  (``runs``: ``TokenizerConfig.runs``, bytes -> the run's unigram ids) or, for another token
  pattern, of raw words (``words``), so the regular expression, stopword tests and stemming
  run once per distinct run or word, not once per occurrence;
* a bigram by the pair of its parts' ids, ``a << 32 | b``, looked up in a sorted array
  (``pair_keys`` / ``pair_ids``): 16 bytes per bigram instead of a Python string and a dict
  entry;
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

import weakref
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from scanrag.indexes.tokenize import TokenizerConfig

PAIR_SHIFT = np.int64(32)
LOW_MASK = np.int64(0xFFFFFFFF)
POSITION_BITS = 24  # a first-seen key is page << 24 | position of the term in the page's list
UNSEEN = np.iinfo(np.int64).max
MULTI = -2  # a run code <= MULTI names the run's several unigrams: multi[MULTI - code]
RUN_CACHE_LIMIT = 1 << 21  # distinct runs cached (cleared between chunks past it)


class _WordIds(dict[str, int]):
    """Raw word -> unigram id (-1: dropped), filled on first sight."""

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__()
        self._vocab = weakref.proxy(vocab)  # no cycle: a part's vocabulary goes at once

    def __missing__(self, word: str) -> int:
        found = self._vocab.word_id(word)
        self[word] = found
        return found


class _RunIds(dict[bytes, int]):
    """Run -> code: its one unigram id, -1 when it has none, or ``MULTI - i`` when it has
    several (``multi[i]``); filled on first sight."""

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__()
        self._vocab = weakref.proxy(vocab)  # no cycle: a part's vocabulary goes at once
        self.multi: list[tuple[int, ...]] = []

    def __missing__(self, run: bytes) -> int:
        vocab = self._vocab
        ids = [i for w in vocab.tokenizer.run_words(run) if (i := vocab.word_id(w)) >= 0]
        if len(ids) == 1:
            code = ids[0]
        elif not ids:
            code = -1
        else:
            code = MULTI - len(self.multi)
            self.multi.append(tuple(ids))
        self[run] = code
        return code

    def trim(self) -> None:
        """Forget every run past ``RUN_CACHE_LIMIT`` (a cache; only between chunks)."""
        if len(self) > RUN_CACHE_LIMIT:
            self.clear()
            self.multi.clear()


class Vocabulary:
    """Term ids (see the module docstring). ``size`` ids are in use, ``0..size-1``."""

    def __init__(self, tokenizer: TokenizerConfig) -> None:
        self.tokenizer = tokenizer
        self.size = 0
        self.unigrams: dict[str, int] = {}
        self.unigram_of: dict[int, str] = {}
        self.joined: dict[str, int] = {}
        self.underscored: set[int] = set()  # unigram ids whose string holds "_"
        self.pair_keys = np.zeros(0, dtype=np.int64)
        self.pair_ids = np.zeros(0, dtype=np.int64)
        self._recent = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        self._pending: dict[int, int] = {}  # pairs not yet merged into the sorted arrays
        self._waiting: dict[str, list[str]] = {}  # part -> "x_y" unigrams waiting for it
        self._ranks: list[np.ndarray] = []  # first-seen ranks, in id order, in blocks
        self._ranked = 0
        self._last_key = -1  # the largest first-seen key recorded (blocks must follow it)
        self.words = _WordIds(self)
        self.runs = _RunIds(self)

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
            codes, counts = self._expand(codes, counts, several)
        return codes, counts

    def _expand(
        self, codes: np.ndarray, counts: np.ndarray, several: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``codes`` with each run of several unigrams (at ``several``) replaced by them."""
        groups = [self.runs.multi[MULTI - code] for code in codes[several].tolist()]
        sizes = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
        repeats = np.ones(codes.size, dtype=np.int64)
        repeats[several] = sizes
        out = np.repeat(codes, repeats)
        firsts = np.cumsum(repeats)[several] - sizes  # where each group starts in ``out``
        within = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(sizes) - sizes, sizes
        )
        out[np.repeat(firsts, sizes) + within] = np.fromiter(
            chain.from_iterable(groups), dtype=np.int64, count=int(sizes.sum())
        )
        page_of = np.searchsorted(np.cumsum(counts), several, side="right")
        counts = counts + np.bincount(page_of, weights=sizes - 1, minlength=counts.size).astype(
            np.int64
        )
        return out, counts

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
                found = self._pair_lookup(ux, uy)
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
        if self._pair_lookup(ux, uy) is None:
            self._pending[(ux << 32) | uy] = term_id

    # -- bigrams ----------------------------------------------------------------------------
    def _pair_lookup(self, a: int, b: int) -> int | None:
        key = (a << 32) | b
        pending = self._pending.get(key)
        if pending is not None:
            return pending
        for keys, ids in ((self.pair_keys, self.pair_ids), self._recent):
            at = int(np.searchsorted(keys, key))
            if at < keys.size and int(keys[at]) == key:
                return int(ids[at])
        return None

    def pair_ids_for(self, a: np.ndarray, b: np.ndarray, create: bool = True) -> np.ndarray:
        """The bigram id of each pair ``(a[i], b[i])`` of unigram ids; new pairs get ids
        (``create``) or -1."""
        self._merge_pending()
        keys = (a.astype(np.int64) << PAIR_SHIFT) | b.astype(np.int64)
        # distinct keys, ascending: fewer lookups, and binary searches that move forward
        distinct, inverse = np.unique(keys, return_inverse=True)
        del keys
        ids = self._table_lookup(distinct)
        missing = ids < 0
        if create and missing.any():
            new_keys = distinct[missing]
            new_ids = self._new_pairs(new_keys)
            ids[missing] = new_ids
            self._insert(new_keys, new_ids)
        return ids[inverse]

    def _table_lookup(self, keys: np.ndarray) -> np.ndarray:
        """The id of each pair key in the tables, or -1."""
        ids = np.empty(keys.size, dtype=np.int64)
        ids.fill(-1)
        for table_keys, table_ids in ((self.pair_keys, self.pair_ids), self._recent):
            if table_keys.size:
                at = np.searchsorted(table_keys, keys)
                hit = table_keys.take(at, mode="clip") == keys
                ids[hit] = table_ids[at[hit]]
        return ids

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

    def _insert(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Add sorted new pairs: into a small second table, merged into the main one when
        it grows past a quarter of it (each insert then copies little)."""
        recent_keys, recent_ids = self._recent
        at = np.searchsorted(recent_keys, keys)
        self._recent = (np.insert(recent_keys, at, keys), np.insert(recent_ids, at, ids))
        if self._recent[0].size > max(1 << 16, self.pair_keys.size // 4):
            self._merge_recent()

    def _merge_recent(self) -> None:
        keys, ids = self._recent
        if keys.size:
            at = np.searchsorted(self.pair_keys, keys)
            self.pair_keys = np.insert(self.pair_keys, at, keys)
            self.pair_ids = np.insert(self.pair_ids, at, ids)
            self._recent = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def settle(self) -> None:
        """Merge every pair added lately into the main table (after a build: a query then
        searches one table)."""
        self._merge_pending()
        self._merge_recent()

    def _merge_pending(self) -> None:
        if self._pending:
            keys = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
            ids = np.fromiter(self._pending.values(), dtype=np.int64, count=keys.size)
            order = np.argsort(keys)
            self._pending = {}
            self._insert(keys[order], ids[order])

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
        pairs = self._table_lookup(keys)
        if self._pending:
            for i in np.flatnonzero(pairs < 0).tolist():
                pairs[i] = self._pending.get(int(keys[i]), -1)
        if self.joined:  # spelled with an underscore (else unknown)
            for j in np.flatnonzero(pairs < 0).tolist():
                pairs[j] = self.joined.get(terms[n + j], -1)
        return np.concatenate([unis, pairs])

    def term_strings(self) -> list[str]:
        """Each id's term as the tokenizer spells it (for checks and inspection; builds one
        string per bigram)."""
        self._merge_pending()
        self._merge_recent()
        spelled = [""] * self.size
        for term, term_id in self.joined.items():
            spelled[term_id] = term
        for term_id, term in self.unigram_of.items():
            spelled[term_id] = term
        unigram_of = self.unigram_of
        for key, term_id in zip(self.pair_keys.tolist(), self.pair_ids.tolist(), strict=True):
            if not spelled[term_id]:
                spelled[term_id] = f"{unigram_of[key >> 32]}_{unigram_of[key & 0xFFFFFFFF]}"
        return spelled

    def renumber(self, new_of_old: np.ndarray) -> None:
        """Give every term the id ``new_of_old[old id]`` (a permutation)."""
        self._merge_pending()
        self._merge_recent()
        new = new_of_old.tolist()
        self.unigrams = {t: new[i] for t, i in self.unigrams.items()}
        self.unigram_of = {new[i]: t for i, t in self.unigram_of.items()}
        self.joined = {t: new[i] for t, i in self.joined.items()}
        self.underscored = {new[i] for i in self.underscored}
        words = _WordIds(self)
        words.update({w: (new[i] if i >= 0 else -1) for w, i in self.words.items()})
        self.words = words
        if self.pair_keys.size:
            keys = (new_of_old[self.pair_keys >> PAIR_SHIFT] << PAIR_SHIFT) | new_of_old[
                self.pair_keys & LOW_MASK
            ]
            order = np.argsort(keys)
            self.pair_keys, self.pair_ids = keys[order], new_of_old[self.pair_ids][order]
        ranks = np.empty(self.size, dtype=self.first_rank.dtype)
        ranks[new_of_old] = self.first_rank
        self._ranks = [ranks]
        self.runs = _RunIds(self)  # codes name the old ids

    # -- merging and persistence -------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything needed to rebuild this vocabulary (arrays and plain lists)."""
        self._merge_pending()
        self._merge_recent()
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
            "pair_keys": self.pair_keys,
            "pair_ids": self.pair_ids,
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
        vocab.pair_keys = np.asarray(state["pair_keys"], dtype=np.int64)
        vocab.pair_ids = np.asarray(state["pair_ids"], dtype=np.int64)
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
        other._merge_pending()
        other._merge_recent()
        if other.pair_keys.size:
            a = mapping[other.pair_keys >> PAIR_SHIFT]
            b = mapping[other.pair_keys & LOW_MASK]
            ids = self.pair_ids_for(a, b)
            unset = mapping[other.pair_ids] < 0
            mapping[other.pair_ids[unset]] = ids[unset]
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
