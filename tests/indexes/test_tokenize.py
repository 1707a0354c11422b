"""The BM25 tokenizer: each option, their order, and a golden file of the default."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanrag.indexes.tokenize import ENGLISH_STOPWORDS, TokenizerConfig

from .conftest import GOLDEN

GOLDEN_FILE = GOLDEN / "tokenizer.json"


def test_plain_lowercases_unicode_words():
    assert TokenizerConfig.plain()("Café-au-lait, ZÜRICH 2024!") == [
        "café",
        "au",
        "lait",
        "zürich",
        "2024",
    ]


def test_plain_has_no_stemming():
    assert TokenizerConfig.plain()("tables table") == ["tables", "table"]


def test_default_steps_in_order():
    # stopwords go before stemming and bigrams: "the" never pairs with a neighbour
    assert TokenizerConfig()("The Balance Sheets of 2015") == [
        "balanc",
        "sheet",
        "2015",
        "balanc_sheet",
        "sheet_2015",
    ]


@pytest.mark.parametrize(
    ("changes", "text", "tokens"),
    [
        ({"numbers": True}, "cash 1,117,400 and 3.5%", ["cash", "1117400", "and", "3.5"]),
        ({}, "cash 1,117,400 and 3.5%", ["cash", "1", "117", "400", "and", "3", "5"]),
        ({"stopwords": "english"}, "the cat is here", ["cat"]),
        ({"stem": True}, "liabilities liability operations", ["liabil", "liabil", "oper"]),
        ({"bigrams": True}, "cash flow statement", ["cash", "flow", "statement", "cash_flow",
                                                    "flow_statement"]),
        ({"bigrams": True}, "one", ["one"]),
    ],
)  # fmt: skip
def test_each_option_alone(changes, text, tokens):
    assert TokenizerConfig.plain(**changes)(text) == tokens


def test_other_options():
    assert TokenizerConfig.plain(lowercase=False)("The Cat") == ["The", "Cat"]
    assert TokenizerConfig.plain(stopwords=("Cat",))("the cat") == ["the"]
    assert TokenizerConfig.plain(min_length=3)("a an ant") == ["ant"]
    assert TokenizerConfig.plain(pattern=r"[a-z]+")("abc123def") == ["abc", "def"]
    assert "the" in ENGLISH_STOPWORDS


def test_numbers_rule_goes_before_a_custom_pattern():
    assert TokenizerConfig.plain(numbers=True, pattern=r"[a-z]+")("x 12,000 y") == [
        "x",
        "12000",
        "y",
    ]


def test_capturing_group_pattern_returns_whole_match():
    assert TokenizerConfig.plain(pattern=r"(a)b")("abab") == ["ab", "ab"]


@pytest.mark.parametrize("pattern", ["(", "a*"])
def test_bad_patterns_rejected(pattern):
    with pytest.raises(ValueError):
        TokenizerConfig(pattern=pattern)


def test_unknown_option_rejected():
    with pytest.raises(ValueError):
        TokenizerConfig.model_validate({"stemming": True})


def test_default_tokens_match_golden_file():
    """Any change to the default tokenizer changes every BM25 index: it must be deliberate."""
    golden = json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))
    tokenizer = TokenizerConfig()
    assert tokenizer.model_dump(mode="json") == golden["config"]
    for case in golden["cases"]:
        assert tokenizer(case["text"]) == case["tokens"], case["text"]


# ---------------------------------------------- issue 33: runs give the tokens words() gives

# ASCII word characters, number separators, punctuation, whitespace, and characters whose
# lowercase or class is special: accented and Greek letters (final sigma), dotted capital I
# (two characters lowercased), a ligature, a superscript digit, a no-break space, a curly quote.
_ALPHABET = "aZ9_0,.5 -$()\n\t'éΣσİﬁ²\xa0’ΑΒ"
_CONFIGS = [
    TokenizerConfig(),
    TokenizerConfig(numbers=False),
    TokenizerConfig.plain(lowercase=False),
    TokenizerConfig(lowercase=False),
]


def _by_runs(config: TokenizerConfig, text: str) -> list[str]:
    return [word for run in config.runs(text) for word in config.run_words(run)]


@pytest.mark.parametrize(
    "text",
    [
        "Net revenue was 1,117,400 and 3.5% (2023); total: 12,345abc a12.5 1.5.3 1,234,5678",
        "ΟΔΟΣ ΑΣ'Β İstanbul ﬁnance x² café,crème 1\xa0000 company’s",
        "___ _lead trail_ a_b, x_y. ...,,, 1,000. .5 5. 1,00 12,3456",
        "",
    ],
)
@pytest.mark.parametrize("config", _CONFIGS)
def test_runs_give_the_words(config: TokenizerConfig, text: str) -> None:
    assert _by_runs(config, text) == config.words(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_runs_give_the_words_of_any_text(text: str) -> None:
    for config in _CONFIGS:
        assert _by_runs(config, text) == config.words(text)


def test_runs_need_the_default_pattern() -> None:
    custom = TokenizerConfig(pattern=r"[a-z]+")
    assert not custom.splits_runs and TokenizerConfig().splits_runs
    with pytest.raises(ValueError, match="default token pattern"):
        custom.runs("text")
