"""The bigram table: pair keys found wherever they wait, merged in order, renumbered."""

from __future__ import annotations

import numpy as np

from scanrag.indexes import bm25_pairs
from scanrag.indexes.bm25_pairs import PAIR_SHIFT, PairTable


def key(a: int, b: int) -> int:
    return (a << 32) | b


def test_a_key_is_found_in_the_main_table_the_recent_one_and_the_pending_pairs() -> None:
    table = PairTable(np.array([key(1, 2), key(3, 4)]), np.array([10, 11]))
    table.insert(np.array([key(2, 2)]), np.array([12]))
    table.pending[key(5, 6)] = 13
    assert [table.get(k) for k in (key(1, 2), key(2, 2), key(5, 6), key(9, 9))] == [
        10,
        12,
        13,
        None,
    ]
    # the vectorised lookup reads the two sorted tables, not the pending pairs
    found = table.lookup(np.array([key(3, 4), key(2, 2), key(5, 6), -1]))
    assert found.tolist() == [11, 12, -1, -1]
    table.settle()
    assert table.pending == {} and table.recent[0].size == 0
    assert table.keys.tolist() == sorted([key(1, 2), key(2, 2), key(3, 4), key(5, 6)])
    assert table.lookup(np.array([key(5, 6)])).tolist() == [13]


def test_the_recent_table_merges_into_the_main_one_past_its_share(monkeypatch) -> None:
    monkeypatch.setattr(bm25_pairs, "MIN_RECENT", 2)
    table = PairTable()
    for i in range(3):
        table.insert(np.array([key(i, 0)]), np.array([i]))
    assert table.recent[0].size == 0 and table.keys.size == 3  # merged at the third
    table.insert(np.array([key(7, 0)]), np.array([7]))
    assert table.recent[0].tolist() == [key(7, 0)] and table.keys.size == 3
    assert np.all(np.diff(table.keys) > 0)


def test_remap_renumbers_ids_and_the_unigrams_inside_the_keys() -> None:
    table = PairTable(np.array([key(0, 1), key(1, 0)]), np.array([2, 3]))
    table.pending[key(0, 0)] = 4
    new_of_old = np.array([1, 0, 4, 3, 2], dtype=np.int64)  # swap 0 and 1, 2 and 4
    table.remap(new_of_old)
    pairs = dict(zip(table.keys.tolist(), table.ids.tolist(), strict=True))
    assert pairs == {key(1, 0): 4, key(0, 1): 3, key(1, 1): 2}
    assert np.all(np.diff(table.keys) > 0) and PAIR_SHIFT == 32
