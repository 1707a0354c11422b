"""A tiny randomly initialised sentence-transformers encoder, built fully offline.

For checks that need a real ``SentenceTransformer`` (tokenizer, transformer forward pass,
pooling, normalization) but no meaningful ranking: device selection, CPU/GPU agreement,
chunking with a short window. A WordPiece vocabulary is trained in memory on a fixed word list
and a two-layer BERT with seeded random weights is saved next to it, with mean pooling.
Rankings from this model mean nothing; use the bundled all-MiniLM-L6-v2 for quality.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from scanrag.indexes.offline_models import cached_build

WORDS = (  # noqa: SIM905
    "the a of and in to is was for on with by revenue profit energy light cell plant galaxy "
    "telescope table figure page report growth europe asia water black hole sun power year "
    "quarter percent million value chart method result data model error study question answer"
).split()


def _tokenizer(max_length: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast  # type: ignore[attr-defined]

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    raw = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    raw.normalizer = normalizers.BertNormalizer(lowercase=True)
    raw.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=special)
    raw.train_from_iterator([" ".join(WORDS)] * 4, trainer)
    cls, sep = raw.token_to_id("[CLS]"), raw.token_to_id("[SEP]")
    raw.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return BertTokenizerFast(tokenizer_object=raw, model_max_length=max_length)


def build_tiny_encoder(directory: str | Path, *, seed: int = 0, max_length: int = 64) -> Path:
    """Write a tiny sentence-transformers model (BERT, 2 layers, dim 32) to ``directory``."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel

    directory = Path(directory)
    tokenizer = _tokenizer(max_length)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_length,
    )
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        bert = BertModel(config)
    finally:
        torch.random.set_rng_state(state)
    weights = directory / "bert"
    bert.save_pretrained(weights)
    tokenizer.save_pretrained(weights)
    transformer = models.Transformer(str(weights), max_seq_length=max_length)
    dim_of = getattr(transformer, "get_embedding_dimension", None)
    dim = dim_of() if dim_of else transformer.get_word_embedding_dimension()
    pooling = models.Pooling(dim, "mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(directory))
    shutil.rmtree(weights, ignore_errors=True)
    return directory


def tiny_encoder_dir(root: str | Path | None = None, seed: int = 0) -> Path:
    """The tiny encoder under ``root`` (default: the temp folder), built on first use."""
    return cached_build(
        "encoder",
        source=__file__,
        distributions=("transformers", "sentence-transformers", "tokenizers"),
        seed=seed,
        marker="modules.json",
        build=lambda folder: build_tiny_encoder(folder, seed=seed),
        root=root,
    )
