"""The lexical tokenizer used by the BM25 index.

Steps, in order (each measured on mmlb-dev and financebench-dev, see docs/retrievers.md):

1. ``lowercase`` the text;
2. split it into tokens: with ``numbers``, a number written with thousands separators or
   decimals is one token, commas removed ("1,117,400" → "1117400", "3.5" → "3.5"); everything
   else is a match of ``pattern`` (``\\w+``: letters, digits, underscore in any script);
3. drop ``stopwords`` (``"english"``: the function words below) and tokens shorter than
   ``min_length``;
4. ``stem`` with the Snowball English stemmer (PyStemmer): "liabilities" and "liability" meet;
5. with ``bigrams``, append every adjacent pair of the remaining terms as ``"a_b"`` ("balance
   sheet" → ``balanc_sheet``), which rewards phrases.

The defaults are the measured best for BM25 on both dev sets. ``TokenizerConfig.plain()`` is
the earlier tokenizer (lowercase ``\\w+`` only; no stopwords, stems, numbers or bigrams).

Building an index cuts pages into *runs* first (``runs``, for the default ``pattern``): the text
(lowercased) as UTF-8 bytes, every ASCII byte that is not a letter, digit or ``_`` (nor ``.``
or ``,`` with ``numbers``) made a space by one ``bytes.translate``, then split. No token of
step 2 holds such a byte (a number's separators are ``.`` and ``,``; ``\\w`` is a letter, digit
or underscore in ASCII) and the regular expression starts afresh after one, so the tokens of
a page are the tokens of its runs in order (``run_words``: step 2 on one run). Most runs are one
word, and a run is tokenized once per distinct run (``scanrag.indexes.bm25_vocab``), so pages
never pay for the number pattern or the regular expression per word.
"""

from __future__ import annotations

import re
from functools import cached_property
from itertools import pairwise
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# A short list of English function words (articles, pronouns, auxiliaries, prepositions).
_ENGLISH = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves"""
ENGLISH_STOPWORDS = frozenset(_ENGLISH.split())
# A number with thousands separators (and maybe decimals), or with decimals.
NUMBER_PATTERN = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+"
DEFAULT_PATTERN = r"\w+"


def _run_table(numbers: bool, lowercase: bool) -> bytes:
    """``bytes.translate`` table for ``runs``: ASCII bytes no token holds become spaces
    (A-Z lowercased when ``lowercase``); bytes of non-ASCII characters are kept."""
    keep = b"abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    table = bytearray(b" " * 128 + bytes(range(128, 256)))
    for byte in keep + (b".," if numbers else b""):
        table[byte] = byte
    if lowercase:
        for byte in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            table[byte] = byte + 32
    return bytes(table)


class TokenizerConfig(BaseModel):
    """How page and query text become BM25 terms (recorded in the index manifest)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lowercase: bool = True
    pattern: str = Field(default=r"\w+", description="Regular expression matching one token.")
    numbers: bool = Field(default=True, description="Numbers with separators as one token.")
    stopwords: Literal["none", "english"] | tuple[str, ...] = "english"
    min_length: int = Field(default=1, ge=1)
    stem: bool = Field(default=True, description="Snowball English stems (PyStemmer).")
    bigrams: bool = Field(default=True, description="Append adjacent term pairs as 'a_b'.")

    @classmethod
    def plain(cls, **changes: Any) -> TokenizerConfig:
        """The earlier default: lowercase ``\\w+`` tokens, nothing else."""
        fields = {"numbers": False, "stopwords": "none", "stem": False, "bigrams": False}
        return cls(**{**fields, **changes})

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid token pattern {pattern!r}: {exc}") from exc
        if compiled.match(""):
            raise ValueError(f"token pattern {pattern!r} matches the empty string")
        return pattern

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        if self.numbers:
            return re.compile(f"{NUMBER_PATTERN}|(?:{self.pattern})")
        return re.compile(self.pattern)

    @cached_property
    def _stemmer(self) -> Any:
        if not self.stem:
            return None
        try:
            import Stemmer
        except ImportError as exc:
            raise RuntimeError(
                "BM25 stemming needs PyStemmer (pip install PyStemmer), or set tokenizer.stem "
                "to false"
            ) from exc
        return Stemmer.Stemmer("english")

    @cached_property
    def _stop(self) -> frozenset[str]:
        if self.stopwords == "none":
            return frozenset()
        if self.stopwords == "english":
            return ENGLISH_STOPWORDS
        return frozenset(w.lower() if self.lowercase else w for w in self.stopwords)

    @cached_property
    def _run_tables(self) -> tuple[bytes, bytes] | None:
        """(table for ASCII text, table for text already lowercased), or ``None`` when
        ``pattern`` is not the default (``runs`` does not apply)."""
        if self.pattern != DEFAULT_PATTERN:
            return None
        return (
            _run_table(self.numbers, self.lowercase),
            _run_table(self.numbers, lowercase=False),
        )

    @property
    def splits_runs(self) -> bool:
        """Whether ``runs`` applies (the default ``pattern``)."""
        return self._run_tables is not None

    def runs(self, text: str) -> list[bytes]:
        """``text`` cut into runs (see the module docstring); ``run_words`` of each, in
        order, is ``words(text)``. Only for the default ``pattern`` (``splits_runs``)."""
        tables = self._run_tables
        if tables is None:
            raise ValueError(f"runs need the default token pattern, not {self.pattern!r}")
        if text.isascii():  # lowercased by the table, as str.lower() would
            return text.encode("ascii").translate(tables[0]).split()
        if self.lowercase:  # whole text: str.lower() looks at neighbours (final sigma)
            text = text.lower()
        return text.encode("utf-8").translate(tables[1]).split()

    def run_words(self, run: bytes) -> list[str]:
        """Step 2 on one run (already lowercased by ``runs``)."""
        text = run.decode("utf-8")
        regex = self._regex
        if regex.groups == 0:
            return regex.findall(text)
        return [match.group(0) for match in regex.finditer(text)]

    def words(self, text: str) -> list[str]:
        """The raw tokens of ``text`` (steps 1–2: lowercased, matched, commas still in)."""
        if self.lowercase:
            text = text.lower()
        regex = self._regex
        if regex.groups == 0:
            return regex.findall(text)
        return [match.group(0) for match in regex.finditer(text)]

    def word_term(self, word: str) -> str | None:
        """What steps 2–4 make of one raw token: its term, or ``None`` when it is dropped.
        ``[t for w in words(text) if (t := word_term(w))]`` equals ``__call__`` without
        bigrams; the BM25 build calls this once per distinct word
        (``scanrag.indexes.bm25_vocab``)."""
        if self.numbers and "," in word:
            word = word.replace(",", "")
        stop, min_length = self._stop, self.min_length
        if (stop or min_length > 1) and (len(word) < min_length or word in stop):
            return None
        return str(self._stemmer.stemWord(word)) if self.stem else word

    def __call__(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        regex, stop, min_length = self._regex, self._stop, self.min_length
        tokens = (
            regex.findall(text)
            if regex.groups == 0
            else [match.group(0) for match in regex.finditer(text)]
        )
        if self.numbers:
            tokens = [t.replace(",", "") if "," in t else t for t in tokens]
        if stop or min_length > 1:
            tokens = [token for token in tokens if len(token) >= min_length and token not in stop]
        if self.stem:
            tokens = self._stemmer.stemWords(tokens)
        if self.bigrams:
            tokens = tokens + [f"{a}_{b}" for a, b in pairwise(tokens)]
        return tokens
