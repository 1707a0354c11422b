"""Late-interaction page encoders from colpali-engine: model families, loading, devices.

``FAMILIES`` maps a family name to its colpali-engine model and processor classes, the name
patterns that select it and its patch layout (``scanrag.indexes.colpali_layouts``). A model is given
by hub name or local directory; its family is read from ``config.json`` (``model_type``), from
an adapter's ``base_model_name_or_path``, or from the name (``vidore/colqwen2.5-v0.2`` →
``colqwen2_5``); ``family=`` overrides. ``register_family`` adds a family.

Encoding runs on CUDA (bfloat16 weights) when torch sees a GPU, else on the CPU (float32).
Page vectors are returned as float16 for storage; query vectors as float32.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scanrag.indexes.colpali_layouts import (
    EMPTY_GRID,
    Layout,
    PatchGrid,
    page_grid,
    qwen_layout,
    square_layout,
    tiled_layout,
)
from scanrag.indexes.encoders import model_fingerprint
from scanrag.indexes.errors import ModelLoadError

log = logging.getLogger(__name__)
DEFAULT_COLPALI_MODEL = "vidore/colqwen2-v1.0"


@dataclass(frozen=True)
class ModelFamily:
    """A colpali-engine model family (class names are looked up in ``colpali_engine.models``)."""

    name: str
    model_class: str
    processor_class: str
    layout: Layout
    patterns: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()
    max_visual_tokens: bool = False  # processor accepts ``max_num_visual_tokens``
    forward_options: tuple[tuple[str, Any], ...] = ()  # extra keyword arguments of forward


FAMILIES: dict[str, ModelFamily] = {}


def register_family(family: ModelFamily) -> ModelFamily:
    """Add (or replace) a model family; name patterns of later families are tried first."""
    FAMILIES[family.name] = family
    return family


for _family in (
    # PaliGemma computes vocabulary logits we never use: keep them for one position only
    ModelFamily(
        "colpali",
        "ColPali",
        "ColPaliProcessor",
        square_layout,
        ("colpali",),
        ("paligemma",),
        forward_options=(("logits_to_keep", 1),),
    ),
    ModelFamily(
        "colidefics3",
        "ColIdefics3",
        "ColIdefics3Processor",
        tiled_layout,
        ("colsmol", "colidefics3", "colidefics"),
        ("idefics3",),
    ),
    ModelFamily(
        "colqwen2", "ColQwen2", "ColQwen2Processor", qwen_layout, ("colqwen2",), ("qwen2_vl",), True
    ),
    ModelFamily(
        "colqwen2_5",
        "ColQwen2_5",
        "ColQwen2_5_Processor",
        qwen_layout,
        ("colqwen2.5", "colqwen2_5", "colqwen2-5", "colqwen25"),
        ("qwen2_5_vl",),
        True,
    ),
):
    register_family(_family)


def _local_hints(path: Path) -> list[str]:
    """``model_type`` from config.json, else the base model of a PEFT adapter."""
    for name, key in (("config.json", "model_type"), ("adapter_config.json", None)):
        file = path / name
        if not file.is_file():
            continue
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if key and isinstance(data.get(key), str):
            return [data[key]]
        base = data.get("base_model_name_or_path")
        if isinstance(base, str):
            return [base]
    return []


def resolve_family(model: str, family: str | None = None) -> ModelFamily:
    """The family of ``model`` (see the module docstring); ``ModelLoadError`` if none fits."""
    if family is not None:
        if family not in FAMILIES:
            raise ModelLoadError(
                f"unknown ColPali model family {family!r}; known: {', '.join(sorted(FAMILIES))}"
            )
        return FAMILIES[family]
    path = Path(model).expanduser()
    candidates = _local_hints(path) if path.is_dir() else []
    candidates.append(model)
    for hint in candidates:
        for fam in reversed(FAMILIES.values()):
            if hint in fam.model_types:
                return fam
        lowered = hint.lower()
        for fam in reversed(FAMILIES.values()):
            if any(p in lowered for p in fam.patterns):
                return fam
    raise ModelLoadError(
        f"cannot tell which ColPali model family {model!r} belongs to; pass family= one of "
        f"{', '.join(sorted(FAMILIES))} (names containing e.g. 'colqwen2', 'colqwen2.5', "
        "'colpali' or 'colsmol' are recognised)"
    )


def select_device(device: str | None = None) -> str:
    """``cuda`` when torch sees a GPU, else ``cpu``; ``device`` (e.g. ``"cuda:1"``) forces one."""
    if device not in (None, "auto"):
        return str(device)
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _dtype(device: str) -> Any:
    import torch

    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


@dataclass
class EncodedQuery:
    """A query's token vectors (float32) and which tokens are words of the query (not special
    or augmentation tokens): those drive the region maps."""

    vectors: np.ndarray
    text_tokens: np.ndarray


@dataclass
class EncodedPage:
    vectors: np.ndarray  # float16 (tokens, dim)
    grid: PatchGrid


@dataclass
class ColPaliEncoder:
    """A loaded model and processor. Build with ``load_colpali``."""

    model_name: str
    family: ModelFamily
    device: str
    model: Any
    processor: Any
    revision: str
    dim: int = field(init=False)

    def __post_init__(self) -> None:
        self.dim = int(getattr(self.model, "dim", 128))
        tokenizer = self.processor.tokenizer
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        special |= {int(i) for i, tok in decoder.items() if getattr(tok, "special", False)}
        self._special = np.array(sorted(special), dtype=np.int64)

    def _forward(self, batch: Any) -> Any:
        import torch

        inputs = {k: v for k, v in batch.to(self.device).items() if k != "labels"}
        with torch.inference_mode():
            return self.model(**inputs, **dict(self.family.forward_options))

    def encode_images(self, images: Sequence[Any]) -> list[EncodedPage]:
        """One ``EncodedPage`` per PIL image (padding tokens dropped)."""
        batch = self.processor.process_images(list(images))
        masks = batch["attention_mask"].cpu().numpy().astype(bool)
        out = self._forward(batch).float().cpu().numpy()
        pages = []
        for i, kept in enumerate(masks):
            try:
                grid = page_grid(self.family.layout, batch, i, self.processor, kept)
            except (ValueError, KeyError, IndexError) as exc:  # scoring still works
                log.warning("%s: no patch grid for a page, so no regions: %s", self.model_name, exc)
                grid = EMPTY_GRID
            pages.append(EncodedPage(out[i][kept].astype(np.float16), grid))
        return pages

    def encode_query(self, query: str) -> EncodedQuery:
        """Encode one query on its own, so its vectors never depend on other queries."""
        batch = self.processor.process_queries(queries=[query])
        kept = batch["attention_mask"][0].cpu().numpy().astype(bool)
        ids = batch["input_ids"][0].cpu().numpy()[kept]
        vectors = self._forward(batch)[0].float().cpu().numpy()[kept]
        text = ~np.isin(ids, self._special)
        return EncodedQuery(np.ascontiguousarray(vectors, dtype=np.float32), text)


def _tie_unloaded_head(net: Any) -> None:
    """Tie an output head the loader left unmaterialised to the input embeddings.

    With transformers 5, colpali-engine's ColPali loses the tie between PaliGemma's ``lm_head``
    and its token embeddings, so the head stays on the meta device. Embeddings never use the
    head, but moving the model to a device fails on it. Any other missing weight is an error.
    """
    missing = [name for name, param in net.named_parameters() if param.is_meta]
    if not missing:
        return
    heads = [name for name in missing if name.endswith("lm_head.weight")]
    if heads != missing:
        raise ModelLoadError(f"weights missing from the checkpoint: {', '.join(missing[:5])}")
    embeddings = net.get_input_embeddings().weight
    for name in heads:
        head = net.get_submodule(name.rsplit(".", 1)[0])
        if tuple(head.weight.shape) != tuple(embeddings.shape):
            raise ModelLoadError(f"{name} is missing and cannot be tied to the embeddings")
        head.weight = embeddings


_LOADED: dict[tuple[str, str, str, int | None], ColPaliEncoder] = {}


def check_model(
    model: str, family: str | None = None, max_visual_tokens: int | None = None
) -> ModelFamily:
    """The family of ``model``, after the checks that need no weights: a known family, a
    local folder that exists, ``max_visual_tokens`` only where the processor takes it."""
    fam = resolve_family(model, family)
    if max_visual_tokens is not None and not fam.max_visual_tokens:
        raise ValueError(f"max_visual_tokens is not supported by the {fam.name} processor")
    if model.startswith((".", "/", "~")) and not Path(model).expanduser().is_dir():
        raise ModelLoadError(f"ColPali model directory {model!r} does not exist")
    return fam


def load_colpali(
    model: str,
    family: str | None = None,
    device: str | None = None,
    max_visual_tokens: int | None = None,
) -> ColPaliEncoder:
    """Load (once per process) ``model`` with its processor on ``device``."""
    fam = resolve_family(model, family)
    device = select_device(device)
    key = (model, fam.name, device, max_visual_tokens)
    if key in _LOADED:
        return _LOADED[key]
    check_model(model, fam.name, max_visual_tokens)
    path = Path(model).expanduser()
    local = path.is_dir()
    try:
        import colpali_engine.models as engine
    except ImportError as exc:
        raise ModelLoadError(
            f"ColPali models need colpali-engine and torchvision ({exc}); install the colpali "
            "extra (see scripts/install.sh)"
        ) from exc
    target = str(path.resolve()) if local else model
    try:
        model_cls = getattr(engine, fam.model_class)
        processor_cls = getattr(engine, fam.processor_class)
        extra = {} if max_visual_tokens is None else {"max_num_visual_tokens": max_visual_tokens}
        processor = processor_cls.from_pretrained(target, local_files_only=local, **extra)
        net = model_cls.from_pretrained(target, dtype=_dtype(device), local_files_only=local)
        _tie_unloaded_head(net)
        net = net.to(device).eval()
    except Exception as exc:  # re-raised with the model's name and a hint
        hint = ""
        if not local and os.environ.get("HF_HUB_OFFLINE") == "1":
            hint = " (the Hugging Face hub is off and the model is not cached; use a local dir)"
        raise ModelLoadError(f"cannot load ColPali model {model!r}: {exc}{hint}") from exc
    encoder = ColPaliEncoder(model, fam, device, net, processor, model_fingerprint(target))
    _LOADED[key] = encoder
    return encoder
