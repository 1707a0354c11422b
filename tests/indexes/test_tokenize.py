"""The BM25 tokenizer."""

from __future__ import annotations

import pytest

from indexes.tokenize import ENGLISH_STOPWORDS, TokenizerConfig


def test_default_lowercases_unicode_words():
    assert TokenizerConfig()("Café-au-lait, ZÜRICH 2024!") == [
        "café",
        "au",
        "lait",
        "zürich",
        "2024",
    ]


def test_no_stemming():
    assert TokenizerConfig()("tables table") == ["tables", "table"]


def test_options():
    assert TokenizerConfig(lowercase=False)("The Cat") == ["The", "Cat"]
    assert TokenizerConfig(stopwords="english")("the cat is here") == ["cat"]
    assert TokenizerConfig(stopwords=("Cat",))("the cat") == ["the"]
    assert TokenizerConfig(min_length=3)("a an ant") == ["ant"]
    assert TokenizerConfig(pattern=r"[a-z]+")("abc123def") == ["abc", "def"]
    assert "the" in ENGLISH_STOPWORDS


def test_capturing_group_pattern_returns_whole_match():
    assert TokenizerConfig(pattern=r"(a)b")("abab") == ["ab", "ab"]


@pytest.mark.parametrize("pattern", ["(", "a*"])
def test_bad_patterns_rejected(pattern):
    with pytest.raises(ValueError):
        TokenizerConfig(pattern=pattern)


def test_unknown_option_rejected():
    with pytest.raises(ValueError):
        TokenizerConfig.model_validate({"stem": True})
