"""Run and word caches of the BM25 vocabulary: one tokenizer call per distinct run or word."""

from __future__ import annotations

import numpy as np

from scanrag.indexes.bm25_runs import MULTI, RunIds, WordIds, expand_runs
from scanrag.indexes.tokenize import TokenizerConfig


class Source:
    """A vocabulary stand-in that counts the words it is asked about."""

    def __init__(self) -> None:
        self.tokenizer = TokenizerConfig()
        self.asked: list[str] = []
        self.ids: dict[str, int] = {}

    def word_id(self, word: str) -> int:
        self.asked.append(word)
        if word.lower() in {"the", "of"}:
            return -1
        return self.ids.setdefault(word.lower(), len(self.ids))


def test_each_distinct_word_or_run_is_tokenized_once() -> None:
    source = Source()
    words = WordIds(source)
    assert [words[w] for w in ("Alpha", "the", "Alpha", "beta")] == [0, -1, 0, 1]
    assert source.asked == ["Alpha", "the", "beta"]
    runs = RunIds(source)
    codes = [runs[run] for run in (b"gamma", b"the", b"gamma", b"delta-epsilon")]
    assert codes[:3] == [2, -1, 2]
    assert codes[3] == MULTI  # a run of several words: the first of ``multi``, in order
    assert runs.multi == [(3, 4)]
    assert source.asked[3:] == ["gamma", "the", "delta", "epsilon"]


def test_expand_runs_puts_several_unigrams_in_place_and_recounts_pages() -> None:
    multi = [(7, 8, 9), (5, 6)]
    codes = np.array([1, MULTI, 2, MULTI - 1, 3], dtype=np.int64)  # page 1: 2 codes, page 2: 3
    counts = np.array([2, 3], dtype=np.int64)
    several = np.flatnonzero(codes <= MULTI)
    out, new_counts = expand_runs(codes, counts, several, multi)
    assert out.tolist() == [1, 7, 8, 9, 2, 5, 6, 3]
    assert new_counts.tolist() == [4, 4]
