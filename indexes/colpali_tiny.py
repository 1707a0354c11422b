"""Tiny, randomly initialised ColQwen2, ColQwen2.5, ColPali and ColIdefics3 (ColSmol) models,
built fully offline.

They exercise the real colpali-engine code path (processor, model, patch layout, storage,
MaxSim, regions) in tests, benchmarks and offline smoke runs when no trained weights can be
downloaded. Their weights are random: rankings are meaningless, only the plumbing is real.

Each model gets a byte-level BPE tokenizer trained in memory on a few sentences plus the
family's special tokens, the family's default image processor shrunk to a few dozen patches
per page, and a one-layer text and vision tower of width 32. ``tiny_model_dir`` builds a model
once per machine under the temp folder (atomically, so concurrent processes can share it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scanrag.indexes.offline_models import cached_build

TINY_FAMILIES = ("colqwen2", "colqwen2_5", "colpali", "colidefics3")
QWEN_SPECIAL = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
PALI_SPECIAL = ("<pad>", "<eos>", "<bos>", "<unk>", "<image>")
IDEFICS_SPECIAL = (
    "<|endoftext|>",
    "<|im_start|>",
    "<end_of_utterance>",
    "<fake_token_around_image>",
    "<image>",
    "<global-img>",
    *(f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)),
)
_CORPUS = [
    "Describe the image. Query: what does the page say about energy, revenue and space?",
    "Photosynthesis converts sunlight into chemical energy in green plants.",
    "Quarterly revenue grew twelve percent in Europe while costs fell.",
    "The telescope observed a distant galaxy cluster and black holes.",
    "user assistant table figure chart section page number 0123456789",
]


def _bpe(special: tuple[str, ...], vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS * 4, trainer)
    return tokenizer


def _special(tokenizer: Any, tokens: tuple[str, ...]) -> None:
    from tokenizers import AddedToken

    tokenizer.add_tokens(
        [AddedToken(t, special=True, normalized=False) for t in tokens], special_tokens=True
    )


def _seeded(seed: int, build: Any) -> Any:
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def _text_config(vocab_size: int, **extra: Any) -> dict[str, Any]:
    return {
        "vocab_size": vocab_size,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        **extra,
    }


def _build_qwen(directory: str | Path, seed: int, max_patches: int, version: str) -> Path:
    import colpali_engine.models as engine
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    bpe = _bpe(QWEN_SPECIAL, 400)
    vocab = bpe.get_vocab()
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    tokenizer = Qwen2Tokenizer(vocab=vocab, merges=merges)  # type: ignore[arg-type]
    _special(tokenizer, QWEN_SPECIAL)
    pixels = Qwen2VLImageProcessor(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * max_patches)
    eos = vocab["<|endoftext|>"]
    text = _text_config(
        len(tokenizer),
        max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]},
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    vision: dict[str, Any] = {"depth": 1, "hidden_size": 32, "num_heads": 2, "patch_size": 14}
    if version == "2":
        from transformers.models.qwen2_vl import Qwen2VLConfig as Config

        vision |= {"embed_dim": 32, "mlp_ratio": 2}
        model_cls, processor_cls = engine.ColQwen2, engine.ColQwen2Processor
    else:
        from transformers.models.qwen2_5_vl import Qwen2_5_VLConfig as Config  # type: ignore

        vision |= {"intermediate_size": 64, "out_hidden_size": 32, "fullatt_block_indexes": [0]}
        model_cls, processor_cls = engine.ColQwen2_5, engine.ColQwen2_5_Processor
    processor = processor_cls(
        image_processor=pixels, tokenizer=tokenizer, video_processor=Qwen2VLVideoProcessor()
    )
    config = Config(
        text_config=text,
        vision_config=vision,
        image_token_id=vocab["<|image_pad|>"],
        video_token_id=vocab["<|video_pad|>"],
        vision_start_token_id=vocab["<|vision_start|>"],
        vision_end_token_id=vocab["<|vision_end|>"],
    )
    model = _seeded(seed, lambda: model_cls(config))
    return _save(directory, model, processor)


def build_tiny_colqwen2(directory: str | Path, *, seed: int = 0, max_patches: int = 96) -> Path:
    """Save a tiny ColQwen2 (Qwen2-VL backbone) and its processor to ``directory``.

    ``max_patches`` caps the merged 28 px patches per page (the processor's ``max_pixels``).
    """
    return _build_qwen(directory, seed, max_patches, "2")


def build_tiny_colqwen2_5(directory: str | Path, *, seed: int = 0, max_patches: int = 96) -> Path:
    """Save a tiny ColQwen2.5 (Qwen2.5-VL backbone) and its processor to ``directory``."""
    return _build_qwen(directory, seed, max_patches, "2.5")


def build_tiny_colpali(directory: str | Path, *, seed: int = 0, image_size: int = 56) -> Path:
    """Save a tiny ColPali (PaliGemma backbone: SigLIP + Gemma) and its processor.

    Pages are squashed to ``image_size`` px squares cut into 14 px patches.
    """
    from colpali_engine.models import ColPali, ColPaliProcessor
    from transformers import PaliGemmaConfig, PreTrainedTokenizerFast, SiglipImageProcessor

    bpe = _bpe(PALI_SPECIAL, 400)
    vocab = bpe.get_vocab()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    _special(tokenizer, ("<image>",))
    seq = (image_size // 14) ** 2
    image_processor = SiglipImageProcessor(size={"height": image_size, "width": image_size})
    image_processor.image_seq_length = seq  # type: ignore[attr-defined]
    processor = ColPaliProcessor(image_processor=image_processor, tokenizer=tokenizer)
    config = PaliGemmaConfig(
        text_config=_text_config(
            len(tokenizer),
            model_type="gemma",
            head_dim=16,
            pad_token_id=vocab["<pad>"],
            bos_token_id=vocab["<bos>"],
            eos_token_id=vocab["<eos>"],
        ),
        vision_config={
            "model_type": "siglip_vision_model",
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": image_size,
            "patch_size": 14,
            "projection_dim": 32,
        },
        projection_dim=32,
        image_token_index=vocab["<image>"],
        vocab_size=len(tokenizer),
    )
    model = _seeded(seed, lambda: ColPali(config))
    return _save(directory, model, processor)


def build_tiny_colidefics3(directory: str | Path, *, seed: int = 0, tile: int = 56) -> Path:
    """Save a tiny ColIdefics3 (ColSmol architecture: SigLIP + Llama) and its processor.

    Pages are resized to at most two ``tile`` px tiles per side plus a global view; each tile is
    a 2 x 2 grid of tokens (14 px patches, pixel shuffle by 2).
    """
    from colpali_engine.models import ColIdefics3, ColIdefics3Processor
    from transformers import Idefics3Config, Idefics3ImageProcessor, PreTrainedTokenizerFast

    bpe = _bpe(IDEFICS_SPECIAL, 400)
    vocab = bpe.get_vocab()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<|im_start|>",
        eos_token="<end_of_utterance>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    _special(tokenizer, IDEFICS_SPECIAL)
    pixels = Idefics3ImageProcessor(
        size={"longest_edge": 2 * tile}, max_image_size={"longest_edge": tile}
    )
    seq = (tile // 14 // 2) ** 2
    processor = ColIdefics3Processor(image_processor=pixels, tokenizer=tokenizer, image_seq_len=seq)
    config = Idefics3Config(
        text_config=_text_config(
            len(tokenizer), model_type="llama", pad_token_id=vocab["<|endoftext|>"]
        ),
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": tile,
            "patch_size": 14,
        },
        scale_factor=2,
        image_token_id=vocab["<image>"],
    )
    model = _seeded(seed, lambda: ColIdefics3(config))
    return _save(directory, model, processor)


def _save(directory: str | Path, model: Any, processor: Any) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


_BUILDERS: dict[str, Callable[..., Path]] = {
    "colqwen2": build_tiny_colqwen2,
    "colqwen2_5": build_tiny_colqwen2_5,
    "colpali": build_tiny_colpali,
    "colidefics3": build_tiny_colidefics3,
}


def tiny_model_dir(family: str = "colqwen2", root: str | Path | None = None, seed: int = 0) -> Path:
    """A tiny model of ``family`` under ``root`` (default: the temp folder), built on first use
    (see :func:`scanrag.indexes.offline_models.cached_build`)."""
    if family not in _BUILDERS:
        raise ValueError(f"no tiny model for {family!r}; available: {', '.join(TINY_FAMILIES)}")
    return cached_build(
        family,
        source=__file__,
        distributions=("transformers", "colpali-engine", "tokenizers"),
        seed=seed,
        marker="config.json",
        build=lambda folder: _BUILDERS[family](folder, seed=seed),
        root=root,
    )
