"""Window ids from one tokenization equal the reference (every window's text tokenized again)."""

from __future__ import annotations

import numpy as np
import pytest

from scanrag.indexes.dense_tiny import tiny_encoder_dir
from scanrag.indexes.dense_windows import PROBE_TEXTS, WindowCutter, _split_words, special_ids
from scanrag.indexes.encoders import DEFAULT_MODEL, load_encoder, token_windows

pytestmark = pytest.mark.model

TEXTS = [
    "Quarterly revenue grew 12.5% (from $1,234,567.89) in Europe; telescopes observed galaxies.",
    "photosynthesis " * 40 + "unbelievably " * 30,
    "A figure shows water use per plant over one year.",
    "",
    "   \n\t ",
    "naïve Café owners re-evaluated counter-intuitive multi-year forecasts " * 12,
    *PROBE_TEXTS,
]


@pytest.fixture(scope="module")
def tiny():
    """The tiny encoder: a 400-word WordPiece vocabulary, so most words split into pieces."""
    return load_encoder(str(tiny_encoder_dir()), "cpu")


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(DEFAULT_MODEL, "cpu")


def _same(a: list[list[np.ndarray]], b: list[list[np.ndarray]]) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and all(np.array_equal(p, q) for p, q in zip(x, y, strict=True))
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("prefix", ["", "passage: "])
@pytest.mark.parametrize(("window", "overlap"), [(4, 1), (9, 3), (20, 0), (62, 8)])
def test_single_tokenization_matches_the_reference(tiny, prefix, window, overlap):
    cutter = WindowCutter(tiny.tokenizer, window, overlap, prefix, 64)
    assert cutter.exact
    fast = cutter.pages(TEXTS)
    assert _same(fast, cutter._reference_pages(TEXTS))
    assert [len(p) for p in fast] == [
        len(p) for p in token_windows(TEXTS, tiny.tokenizer, window, overlap)
    ]


def test_the_reference_is_what_sentence_transformers_feeds_the_model(minilm):
    cutter = WindowCutter(minilm.tokenizer, 254, 32, "", 256)
    pieces = [p for ps in token_windows(TEXTS, minilm.tokenizer, 254, 32) for p in ps]
    mine = [w for ws in cutter.pages(TEXTS) for w in ws]
    features = minilm.preprocess(pieces)
    for i, ids in enumerate(mine):
        row = features["input_ids"][i][features["attention_mask"][i].bool()].numpy()
        assert np.array_equal(row, ids)
    query = cutter.texts(["What grew in Europe?"])[0]
    assert query.tolist() == minilm.preprocess(["What grew in Europe?"])["input_ids"][0].tolist()


def test_windows_respect_the_model_limit_when_a_cut_word_grows(tiny):
    cutter = WindowCutter(tiny.tokenizer, 6, 2, "", 8)  # 8 = 6 + [CLS] + [SEP]
    for windows in cutter.pages(TEXTS):
        assert all(len(w) <= 8 for w in windows)


def test_threads_do_not_change_the_ids(minilm):
    texts = [t * 3 for t in TEXTS] * 20
    one = WindowCutter(minilm.tokenizer, 30, 5, "", 256, threads=1).pages(texts)
    many = WindowCutter(minilm.tokenizer, 30, 5, "", 256, threads=4).pages(texts)
    assert _same(one, many)


def test_truncation_left_on_the_shared_tokenizer_does_not_cut_pages(minilm):
    cutter = WindowCutter(minilm.tokenizer, 40, 4, "", 256)
    minilm.tokenizer(["x " * 600], truncation=True, max_length=16)  # sets it on the backend
    long = "word " * 500
    assert len(cutter.pages([long])[0]) == len(token_windows([long], minilm.tokenizer, 40, 4)[0])


def test_a_tokenizer_that_fails_the_check_uses_the_reference(tiny, monkeypatch):
    monkeypatch.setattr(WindowCutter, "matches_reference", lambda self: False)
    cutter = WindowCutter(tiny.tokenizer, 5, 1, "", 64)
    assert not cutter.exact
    assert _same(cutter.pages(TEXTS), cutter._reference_pages(TEXTS))


def test_byte_level_bpe_is_checked_and_still_exact():
    """Byte-level BPE keeps the space in front of a word: the check decides, and either way
    the ids are the reference's."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>", "<pad>"])
    raw.train_from_iterator(TEXTS * 4, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    cutter = WindowCutter(tokenizer, 7, 2, "", 64)
    assert _same(cutter.pages(TEXTS), cutter._reference_pages(TEXTS))


def test_special_ids(minilm):
    head, tail = special_ids(minilm.tokenizer) or ([], [])
    assert head == [minilm.tokenizer.cls_token_id] and tail == [minilm.tokenizer.sep_token_id]


@pytest.mark.parametrize(
    ("start", "end", "words", "expected"),
    [
        (2, 5, [0, 1, 2, 3, 4, 5], (2, 5)),  # cut between words on both sides
        (2, 5, [0, 1, 1, 2, 3, 4], (3, 5)),  # begins inside word 1
        (2, 5, [0, 1, 2, 3, 4, 4], (2, 4)),  # ends inside word 4
        (2, 5, [0, 1, 1, 1, 1, 1], (5, 2)),  # inside one word: lead >= trail
        (0, 3, [0, 0, 0, 1], (0, 3)),  # the first window never begins inside a word
    ],
)
def test_split_words(start, end, words, expected):
    class Encoding:
        def token_to_word(self, i):
            return words[i]

        def word_to_tokens(self, word):
            hits = [i for i, w in enumerate(words) if w == word]
            return hits[0], hits[-1] + 1

    assert _split_words(Encoding(), start, end, 0) == expected


def test_bad_windows_raise(tiny):
    with pytest.raises(ValueError, match="window"):
        WindowCutter(tiny.tokenizer, 4, 4)
