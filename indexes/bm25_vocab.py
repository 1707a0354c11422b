"""The term ids of a BM25 index, assigned without building a string per bigram.

A term is a string (``scanrag.indexes.tokenize``): a unigram (a stemmed word) or a bigram ``"a_b"``
of two neighbouring unigrams. Every distinct string gets one integer id:

* unigrams by string (``unigrams``); raw words map to their unigram id (or -1 when the
  tokenizer drops them) through a per-word cache, so stemming and stopword tests run once per
  distinct word, not once per occurrence;
* a bigram by the pair of its parts' ids, ``a << 32 | b``, looked up in a sorted array
  (``pair_keys`` / ``pair_ids``): 16 bytes per bigram instead of a Python string and a dict
  entry;
* strings that contain ``_`` otherwise (``joined``): unigrams with an underscore (``\\w``
  matches it: ``"___"`` lines of a form) and bigrams whose parts have one. They make the only
  cases where two different pairs spell one string (``"a_b" + "c"`` and ``"a" + "b_c"``), or a
  pair spells a unigram (``"x" + "y"`` and the word ``"x_y"``); those share one id, as the
  reference tokenizer's strings would.

Ids are given in no particular order; ``first_key`` records where each term first occurs
(page << 24 | position in the page's term list), which is the order rank-bm25 sums its idf
values in (``scanrag.indexes.bm25_sparse``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scanrag.indexes.tokenize import TokenizerConfig

PAIR_SHIFT = np.int64(32)
LOW_MASK = np.int64(0xFFFFFFFF)
POSITION_BITS = 24  # a first-seen key is page << 24 | position of the term in the page's list
UNSEEN = np.iinfo(np.int64).max


class _WordIds(dict[str, int]):
    """Raw word -> unigram id (-1: dropped), filled on first sight."""

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__()
        self._vocab = vocab

    def __missing__(self, word: str) -> int:
        term = self._vocab.tokenizer.word_term(word)
        found = -1 if term is None else self._vocab.unigram_id(term)
        self[word] = found
        return found


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
        self._first: list[np.ndarray] = []  # first-seen keys, in id order, in blocks
        self._first_len = 0
        self.words = _WordIds(self)

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
        ids = np.full(keys.size, -1, dtype=np.int64)
        for table_keys, table_ids in ((self.pair_keys, self.pair_ids), self._recent):
            if table_keys.size:
                at = np.searchsorted(table_keys, keys)
                np.minimum(at, table_keys.size - 1, out=at)
                hit = table_keys[at] == keys
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
        """Give ids ``start..size-1`` (new since ``start``) their first-seen keys: the
        smallest of ``keys`` where ``ids`` names them."""
        block = np.full(self.size - start, UNSEEN, dtype=np.int64)
        new = ids >= start
        np.minimum.at(block, ids[new] - start, keys[new])
        self._extend_first(block, start)

    def _extend_first(self, block: np.ndarray, start: int) -> None:
        if start != self._first_len:
            raise RuntimeError("first-seen keys recorded out of order")
        self._first.append(block)
        self._first_len += block.size

    @property
    def first_key(self) -> np.ndarray:
        if len(self._first) != 1:
            merged = np.concatenate(self._first) if self._first else np.zeros(0, np.int64)
            self._first = [merged]
        return self._first[0]

    # -- queries ----------------------------------------------------------------------------
    def query_ids(self, terms: list[str], bigrams: bool) -> list[int]:
        """Ids of the tokenizer's output for a query (unigrams then bigrams when
        ``bigrams``), in order; -1 for terms the index does not hold."""
        n = (len(terms) + 1) // 2 if bigrams and terms else len(terms)
        unis = [self.unigrams.get(t, -1) for t in terms[:n]]
        found = list(unis)
        for j, term in enumerate(terms[n:]):
            a, b = unis[j], unis[j + 1]
            pair = self._pair_lookup(a, b) if a >= 0 and b >= 0 else None
            if pair is None:
                pair = self.joined.get(term, -1)
            found.append(pair)
        return found

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
        first = np.empty(self.size, dtype=np.int64)
        first[new_of_old] = self.first_key
        self._first, self._first_len = [first], first.size

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
            "first_key": self.first_key,
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
        first = np.asarray(state["first_key"], dtype=np.int64)
        if first.size != vocab.size:
            raise ValueError(f"{first.size} first-seen keys for {vocab.size} terms")
        vocab._first, vocab._first_len = [first], first.size
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
        shifted = other.first_key + (np.int64(page_offset) << np.int64(POSITION_BITS))
        self.record_first(mapping, shifted, start)
        return mapping
