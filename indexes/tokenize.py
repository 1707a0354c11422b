"""The lexical tokenizer used by the BM25 index.

Tokens are the matches of a Unicode word pattern (``\\w+`` by default: letters, digits and the
underscore in any script), lowercased by default. Optionally English stopwords are removed and
tokens shorter than ``min_length`` dropped. There is no stemming: "tables" and "table" are
different terms, which keeps the index language-neutral and its scores easy to check by hand.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

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


class TokenizerConfig(BaseModel):
    """How page and query text become BM25 terms (recorded in the index manifest)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lowercase: bool = True
    pattern: str = Field(default=r"\w+", description="Regular expression matching one token.")
    stopwords: Literal["none", "english"] | tuple[str, ...] = "none"
    min_length: int = Field(default=1, ge=1)

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
        return re.compile(self.pattern)

    @cached_property
    def _stop(self) -> frozenset[str]:
        if self.stopwords == "none":
            return frozenset()
        if self.stopwords == "english":
            return ENGLISH_STOPWORDS
        return frozenset(w.lower() if self.lowercase else w for w in self.stopwords)

    def __call__(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        regex, stop, min_length = self._regex, self._stop, self.min_length
        tokens = (
            regex.findall(text)
            if regex.groups == 0
            else [match.group(0) for match in regex.finditer(text)]
        )
        if stop or min_length > 1:
            return [token for token in tokens if len(token) >= min_length and token not in stop]
        return tokens
