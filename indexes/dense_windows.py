"""Page texts to model input ids, tokenized once: the windows' ids go straight to the encoder.

A page longer than the encoder's window is cut into overlapping windows of ``window`` tokens
(``scanrag.indexes.encoders.token_windows`` cuts the *text* at the tokens' character offsets). The
reference way to encode a window is to tokenize its text again, with the passage prefix and
the special tokens. ``WindowCutter`` gives the same ids from the page's single tokenization:

* the page is tokenized once as ``prefix + text`` (fast tokenizers, batches of pages spread
  over threads: the Rust tokenizer releases the GIL, so this is parallel whatever
  ``TOKENIZERS_PARALLELISM`` says);
* a window's ids are the prefix's ids plus the page's ids in the window, between the special
  tokens, cut to the model's ``max_length``;
* a window that starts or ends inside a word (a word split into sub-word pieces across the
  cut) gets that partial word tokenized again on its own — tokenizing the cut text would have
  read it as a word of its own (``"##ing"`` becomes ``"ing"``). Those few short strings are
  the only second tokenization.

Whether this matches the reference for a tokenizer is checked once, on probe texts with tiny
windows that cut words, numbers, accents and punctuation (``matches_reference``). Tokenizers
whose words are not independent (byte-level BPE keeps the space in front of a word) or slow
(Python) tokenizers fail the check and use the reference way (``exact=False``): the window
texts are tokenized again, still straight to ids.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from scanrag.indexes.encoders import token_windows

# Pages per tokenizer call when a batch of pages is spread over threads.
TOKENIZE_BATCH = 32
Piece = tuple[int, int] | int  # a slice of a page's token ids, or a re-tokenized partial word
PROBE_TEXTS = (
    "Unbelievably, the photosynthesising plants' revenue grew 12.5% (from $1,234,567.89) "
    "in 2023-2024; naïve café owners re-evaluated counter-intuitive multi-year forecasts!",
    "  Leading  spaces\tand\ttabs,\nnew lines… and UPPERCASE WordsWithoutSpaces 3.14159265 "
    "https://example.com/a/b?c=d#e — emdash — ‘quotes’ «guillemets» 数字 and emoji 🚀 too.",
    "short",
    "",
)


def tokenizer_threads() -> int:
    """Threads for tokenizing: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def special_ids(tokenizer: Any) -> tuple[list[int], list[int]] | None:
    """The special token ids a single sequence gets before and after its own ids, or ``None``
    when they cannot be told apart (the fast path is then not used)."""
    plain = list(tokenizer("x", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("x")["input_ids"])
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    return None


class WindowCutter:
    """Model input ids (special tokens included, int64 arrays) of page windows and of queries.

    ``window``/``overlap`` are in tokens of the page text; ``prefix`` goes in front of every
    window; ``max_length`` is the model's limit (special tokens included). ``exact`` chooses
    the single-tokenization path when ``None`` (after the probe check) or forces a path.
    """

    def __init__(
        self,
        tokenizer: Any,
        window: int,
        overlap: int,
        prefix: str = "",
        max_length: int = 512,
        threads: int | None = None,
        exact: bool | None = None,
    ) -> None:
        if window < 1 or not 0 <= overlap < window:
            raise ValueError(f"need window >= 1 and 0 <= overlap < window, got {window}, {overlap}")
        self.tokenizer = tokenizer
        self.window, self.overlap, self.prefix = window, overlap, prefix
        self.max_length = max_length
        self.threads = threads or tokenizer_threads()
        self._backend = _own_copy(getattr(tokenizer, "backend_tokenizer", None))
        specials = special_ids(tokenizer)
        head, tail = specials or ([], [])
        self._head_ids = np.asarray(head, dtype=np.int64)
        self._tail_ids = np.asarray(tail, dtype=np.int64)
        self._room = max_length - len(head) - len(tail)
        self._prefix_tokens = (
            len(self._backend.encode(prefix, add_special_tokens=False).ids) if self._backend else 0
        )
        if exact is None:
            exact = self._backend is not None and specials is not None and self.matches_reference()
        self.exact = bool(exact)

    # -- public -----------------------------------------------------------------------------
    def pages(self, texts: Sequence[str]) -> list[list[np.ndarray]]:
        """Per page, the model input ids of its windows (one window for a page that fits)."""
        if not self.exact:
            return self._reference_pages(texts)
        full = [self.prefix + text for text in texts]
        fixes: list[str] = []  # partial words to tokenize on their own, for every page
        plans = [self._plan(t, e, fixes) for t, e in zip(full, self._encode_all(full), strict=True)]
        fixed = [np.asarray(e.ids, dtype=np.int64) for e in self._encode_all(fixes)]
        return [
            [
                self._wrap([ids[p[0] : p[1]] if isinstance(p, tuple) else fixed[p] for p in parts])
                for parts in windows
            ]
            for ids, windows in plans
        ]

    def texts(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Model input ids of whole texts (queries): tokenized with the special tokens and
        truncated to ``max_length``, as sentence-transformers does (no prefix added here)."""
        if not texts:
            return []
        ids = self.tokenizer(
            list(texts), truncation=True, max_length=self.max_length, verbose=False
        )["input_ids"]
        return [np.asarray(row, dtype=np.int64) for row in ids]

    def matches_reference(self) -> bool:
        """Whether the single-tokenization path gives the reference ids on the probe texts
        (windows of 3 to 7 tokens, so many cuts fall inside words)."""
        for window, overlap in ((3, 1), (5, 2), (7, 0)):
            probe = copy.copy(self)  # shares the tokenizer copy
            probe.window, probe.overlap, probe.threads, probe.exact = window, overlap, 1, True
            fast, slow = probe.pages(PROBE_TEXTS), probe._reference_pages(PROBE_TEXTS)
            for mine, theirs in zip(fast, slow, strict=True):
                if len(mine) != len(theirs) or any(
                    not np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True)
                ):
                    return False
        return True

    # -- the reference: tokenize every window's text again ----------------------------------
    def _reference_pages(self, texts: Sequence[str]) -> list[list[np.ndarray]]:
        pieces = token_windows(texts, self.tokenizer, self.window, self.overlap)
        flat = self.texts([self.prefix + piece for chunks in pieces for piece in chunks])
        out, cursor = [], 0
        for chunks in pieces:
            out.append(flat[cursor : cursor + len(chunks)])
            cursor += len(chunks)
        return out

    # -- the single tokenization -------------------------------------------------------------
    def _encode_all(self, texts: list[str]) -> list[Any]:
        backend = self._backend
        assert backend is not None
        return threaded(
            lambda batch: backend.encode_batch(batch, add_special_tokens=False), texts, self.threads
        )

    def _plan(
        self, full: str, encoding: Any, fixes: list[str]
    ) -> tuple[np.ndarray, list[list[Piece]]]:
        """A page's ids and, per window, its pieces: ``(a, b)`` for the page's tokens
        ``a:b`` or an index into ``fixes``, where the text of a partial word is appended."""
        ids = np.asarray(encoding.ids, dtype=np.int64)
        n = len(ids)
        first = self._content_start(encoding, n)
        if n - first <= self.window:
            return ids, [[(0, n)]]

        def fix(a: int, b: int) -> int:  # the text of tokens [a, b) tokenized on its own
            fixes.append(full[encoding.token_to_chars(a)[0] : encoding.token_to_chars(b - 1)[1]])
            return len(fixes) - 1

        windows: list[list[Piece]] = []
        for start in range(first, n, self.window - self.overlap):
            end = min(start + self.window, n)
            lead, trail = _split_words(encoding, start, end, first)
            parts: list[Piece] = [(0, first)]
            if lead >= trail:  # the window lies inside one word
                parts.append(fix(start, end))
            else:
                if lead > start:  # begins inside a word: the rest of that word on its own
                    parts.append(fix(start, lead))
                parts.append((lead, trail))
                if trail < end:  # ends inside a word: the start of that word on its own
                    parts.append(fix(trail, end))
            windows.append(parts)
            if end == n:
                break
        return ids, windows

    def _content_start(self, encoding: Any, n: int) -> int:
        """The first token of the page's text (after the prefix's tokens)."""
        chars = len(self.prefix)
        first = min(self._prefix_tokens, n)
        while first > 0 and encoding.token_to_chars(first - 1)[0] >= chars:
            first -= 1
        while first < n and encoding.token_to_chars(first)[0] < chars:
            first += 1
        return first

    def _wrap(self, parts: list[np.ndarray]) -> np.ndarray:
        """The special tokens around ``parts``, cut to the model's limit."""
        room = self._room
        if sum(len(p) for p in parts) > room:
            kept = []
            for part in parts:
                kept.append(part[:room])
                room -= len(kept[-1])
            parts = kept
        return np.concatenate([self._head_ids, *parts, self._tail_ids])


def _own_copy(backend: Any) -> Any:
    """A private copy of a fast tokenizer's Rust tokenizer without truncation or padding (the
    transformers wrapper sets both on the shared one at every call and leaves them there)."""
    if backend is None:
        return None
    from tokenizers import Tokenizer

    own = Tokenizer.from_str(backend.to_str())
    own.no_truncation()
    own.no_padding()
    return own


def _split_words(encoding: Any, start: int, end: int, first: int) -> tuple[int, int]:
    """For a window ``[start, end)`` of a page's tokens: ``lead``, the end of the tokens that
    finish a word begun before the window, and ``trail``, the start of those beginning a word
    that goes on after it (``lead >= trail``: the window lies inside one word). The first
    window (``start == first``) never begins inside a word."""
    lead, trail = start, end
    if start > first:
        word = encoding.token_to_word(start)
        if word is not None:
            begin, stop = encoding.word_to_tokens(word)
            if begin < start:
                lead = min(stop, end)
    word = encoding.token_to_word(end - 1)
    if word is not None:
        begin, stop = encoding.word_to_tokens(word)
        if stop > end:
            trail = max(begin, start)
    return lead, trail


def threaded(fn: Callable[[list[str]], Sequence[Any]], texts: list[str], threads: int) -> list[Any]:
    """``fn`` over batches of ``texts`` on ``threads`` threads, results in order."""
    batches = [texts[i : i + TOKENIZE_BATCH] for i in range(0, len(texts), TOKENIZE_BATCH)]
    if threads == 1 or len(batches) <= 1:
        return [r for batch in batches for r in fn(batch)]
    with ThreadPoolExecutor(min(threads, len(batches))) as pool:
        return [r for part in pool.map(fn, batches) for r in part]
