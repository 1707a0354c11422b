"""Page text to unigram ids, once per distinct run or word (for ``bm25_vocab.Vocabulary``).

``TokenizerConfig.runs`` cuts a page into runs (bytes); a run maps to one code: its one unigram
id, -1 when the tokenizer keeps nothing of it, or ``MULTI - i`` when it holds several unigrams
(``RunIds.multi[i]``). For another token pattern raw words are cached instead (``WordIds``).
Either way the regular expression, stopword tests and stemming run once per distinct run or
word; :func:`expand_runs` puts the several unigrams of a run back in place.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from itertools import chain
from typing import Protocol

import numpy as np

from scanrag.indexes.tokenize import TokenizerConfig

MULTI = -2  # a run code <= MULTI names the run's several unigrams: multi[MULTI - code]
RUN_CACHE_LIMIT = 1 << 21  # distinct runs cached (cleared between chunks past it)


class UnigramSource(Protocol):
    """What the caches ask of a vocabulary: its tokenizer and a word's unigram id."""

    tokenizer: TokenizerConfig

    def word_id(self, word: str) -> int: ...


class WordIds(dict[str, int]):
    """Raw word -> unigram id (-1: dropped), filled on first sight."""

    def __init__(self, vocab: UnigramSource) -> None:
        super().__init__()
        self._vocab = weakref.proxy(vocab)  # no cycle: a part's vocabulary goes at once

    def __missing__(self, word: str) -> int:
        found = self._vocab.word_id(word)
        self[word] = found
        return found


class RunIds(dict[bytes, int]):
    """Run -> code: its one unigram id, -1 when it has none, or ``MULTI - i`` when it has
    several (``multi[i]``); filled on first sight."""

    def __init__(self, vocab: UnigramSource) -> None:
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


def expand_runs(
    codes: np.ndarray, counts: np.ndarray, several: np.ndarray, multi: Sequence[tuple[int, ...]]
) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` (the pages' run codes one after another, ``counts`` per page) with each code
    of several unigrams (at ``several``) replaced by them, and the pages' new counts."""
    groups = [multi[MULTI - code] for code in codes[several].tolist()]
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
