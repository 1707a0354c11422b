"""The bigram table of a BM25 vocabulary: pair keys ``a << 32 | b`` mapped to term ids.

A bigram is looked up by the ids of its two unigrams rather than by its string, so the table
holds two int64 arrays (16 bytes a bigram) instead of a Python string and a dict entry each:
``keys`` sorted, ``ids`` beside them, found by binary search. New pairs go to a small second
sorted table (``recent``), merged into the main one when it grows past a quarter of it, so
an insert copies little; single pairs registered one at a time (``pending``: an underscored
unigram that also spells a pair) wait in a dict until the next batch. ``settle`` merges
everything into the main table (a query then searches one table).
"""

from __future__ import annotations

import numpy as np

PAIR_SHIFT = np.int64(32)
LOW_MASK = np.int64(0xFFFFFFFF)
MIN_RECENT = 1 << 16  # the second table is merged past max(this, a quarter of the main one)


def _empty() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


class PairTable:
    """Pair keys → term ids (see the module docstring)."""

    def __init__(self, keys: np.ndarray | None = None, ids: np.ndarray | None = None) -> None:
        self.keys = _empty() if keys is None else np.asarray(keys, dtype=np.int64)
        self.ids = _empty() if ids is None else np.asarray(ids, dtype=np.int64)
        self.recent = (_empty(), _empty())
        self.pending: dict[int, int] = {}  # pairs not yet merged into the sorted arrays

    def get(self, key: int) -> int | None:
        """The id of one pair key, wherever it waits; ``None`` when it has none."""
        pending = self.pending.get(key)
        if pending is not None:
            return pending
        for keys, ids in ((self.keys, self.ids), self.recent):
            at = int(np.searchsorted(keys, key))
            if at < keys.size and int(keys[at]) == key:
                return int(ids[at])
        return None

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """The id of each pair key in the two sorted tables, or -1 (``pending`` is not
        searched: merge it first, or look there after)."""
        ids = np.empty(keys.size, dtype=np.int64)
        ids.fill(-1)
        for table_keys, table_ids in ((self.keys, self.ids), self.recent):
            if table_keys.size:
                at = np.searchsorted(table_keys, keys)
                hit = table_keys.take(at, mode="clip") == keys
                ids[hit] = table_ids[at[hit]]
        return ids

    def insert(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Add new pairs, ``keys`` sorted: into the second table, merged into the main one
        when it grows past a quarter of it."""
        recent_keys, recent_ids = self.recent
        at = np.searchsorted(recent_keys, keys)
        self.recent = (np.insert(recent_keys, at, keys), np.insert(recent_ids, at, ids))
        if self.recent[0].size > max(MIN_RECENT, self.keys.size // 4):
            self._merge_recent()

    def merge_pending(self) -> None:
        """Move the pairs registered one at a time into the sorted tables."""
        if self.pending:
            keys = np.fromiter(self.pending, dtype=np.int64, count=len(self.pending))
            ids = np.fromiter(self.pending.values(), dtype=np.int64, count=keys.size)
            order = np.argsort(keys)
            self.pending = {}
            self.insert(keys[order], ids[order])

    def settle(self) -> None:
        """Merge every pair added lately into the main table."""
        self.merge_pending()
        self._merge_recent()

    def _merge_recent(self) -> None:
        keys, ids = self.recent
        if keys.size:
            at = np.searchsorted(self.keys, keys)
            self.keys = np.insert(self.keys, at, keys)
            self.ids = np.insert(self.ids, at, ids)
            self.recent = (_empty(), _empty())

    def remap(self, new_of_old: np.ndarray) -> None:
        """Renumber the term ids, and the unigram ids inside the keys, by ``new_of_old[old]``
        (a permutation); settles first."""
        self.settle()
        if self.keys.size:
            keys = (new_of_old[self.keys >> PAIR_SHIFT] << PAIR_SHIFT) | new_of_old[
                self.keys & LOW_MASK
            ]
            order = np.argsort(keys)
            self.keys, self.ids = keys[order], new_of_old[self.ids][order]
