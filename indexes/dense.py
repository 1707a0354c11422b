"""A dense page index: a sentence-transformers encoder with a FAISS inner-product store.

Pages longer than the encoder's window are cut into overlapping token windows; each window is
one vector and a page's score aggregates its windows' scores (``max`` by default, or ``mean`` /
``sum``). Vectors are L2-normalized unless the model's preset says otherwise, so inner product
is cosine similarity. An empty page gets one all-zero vector and therefore scores exactly 0.

Whole-store searches with ``max`` aggregation go through FAISS, fetching more chunks until the
top ``k`` pages are certain. Scoped searches (and ``mean``/``sum``) score the chunks in scope
exactly with one matrix product, which for a few documents is faster than any FAISS structure
and exact even when the store is IVF or HNSW.

Pages are tokenized once (``scanrag.indexes.dense_windows``): the windows' token ids go straight to
the model through a *feed* (``scanrag.indexes.dense_feed``: length-sorted batches; on CUDA pinned,
non-blocking copies with the next pages tokenized meanwhile), giving the vectors the text
windows re-tokenized by sentence-transformers gave. A query runs on one CPU thread (on a few
busy cores several threads wait on each other), and the last ``QUERY_CACHE`` query vectors
are kept.

Encoding runs on CUDA when torch sees a GPU. Exact vector search then runs on the GPU too:
through faiss-gpu when the installed faiss has GPU support, else in torch (a matrix product
and a top-k, flat stores); see ``scanrag.indexes.encoders.select_devices`` and
``scanrag.indexes.vector_store``. What searched is recorded in the manifest
(``extra.vector_search``). ``backend`` chooses the encoder runtime: ``torch``
(sentence-transformers' modules), ``torch-fp16`` / ``torch-bf16`` (the same with float16 / bfloat16
weights, re-normalised in float32: fp16 is what CUDA runs by default; bf16 is ~3× faster on CPUs
with AMX, vectors within ~1e-3 cosine), ``onnx`` (an ONNX Runtime export of the same model, fused
fp32: the same vectors), ``onnx-int8`` (dynamic int8 quantisation: faster on a CPU, vectors within
~0.01 cosine) or ``auto`` (``scanrag.indexes.encoders.CUDA_BACKEND`` on CUDA, else
``scanrag.indexes.encoders.CPU_BACKEND``: fp32 torch). ``batch_size`` defaults to 32 chunks on a CPU
and 256 on CUDA. The backend that ran is recorded in the manifest (``extra``); it is not one
of the checked parameters, since every backend encodes the same model (an index built by one
can be searched with another; a mix of precisions is logged).

Questions pass through ``query_mode`` (``scanrag.indexes.queries``) before encoding: by default
instruction sentences ("Round your answer to two decimal places.") are stripped.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from scanrag.indexes.base import Candidates, PageIndex
from scanrag.indexes.dense_feed import Feed, default_batch_size, feed_for, prefetch
from scanrag.indexes.dense_params import Aggregation, DenseParams, check_rules
from scanrag.indexes.dense_search import exact_candidates, top_pages
from scanrag.indexes.dense_windows import WindowCutter
from scanrag.indexes.encoders import (
    DEFAULT_MODEL,
    Backend,
    Pooling,
    faiss_dist,
    load_encoder,
    model_fingerprint,
    preset_for,
    resolve_backend,
    runs_on_torch,
    select_devices,
)
from scanrag.indexes.errors import CorruptIndexError, ModelLoadError
from scanrag.indexes.manifest import IndexManifest, library_versions
from scanrag.indexes.queries import QueryMode, apply_query_mode
from scanrag.indexes.vector_store import VectorStore
from scanrag.params import checked
from scanrag.schemas import Document

log = logging.getLogger(__name__)
VECTORS_FILE, INDEX_FILE, CHUNKS_FILE = "vectors.npy", "index.faiss", "chunk_rows.npy"


# Pages tokenized and encoded at once while building: bounds the texts held at once and is the
# unit that overlaps (tokenizing one group while the device encodes the previous one).
FEED_PAGES = 1024
QUERY_CACHE = 1024  # query vectors kept per index


class DenseIndex(PageIndex):
    """The ``dense`` retriever: dense retrieval over page texts.

    ``model`` is any sentence-transformers name or local directory (default: the bundled
    all-MiniLM-L6-v2, offline). ``query_prefix``, ``passage_prefix``, ``pooling``
    (auto/mean/cls) and ``normalize`` default to the model's preset. ``faiss_index``
    (flat/ivf/hnsw) with ``nlist``, ``nprobe``, ``hnsw_m`` and ``ef_search`` choose the FAISS
    store; ``chunk_tokens`` (default: the encoder's window) and ``chunk_overlap`` cut long pages
    into windows whose scores ``aggregation`` (max/mean/sum) combines per page.
    ``query_mode`` prepares questions (raw/strip/stmt/strip+stmt). ``device``, ``batch_size``
    and ``backend`` (auto/torch/torch-fp16/torch-bf16/onnx/onnx-int8) only affect speed
    (fp16, bf16 and int8 also the vectors, slightly).
    """

    kind = "dense"
    params_class = DenseParams

    def __init__(self, model: str = DEFAULT_MODEL, **params: Any) -> None:
        """``params``: the fields of :class:`~scanrag.indexes.dense_params.DenseParams`, which
        checks them (names, types, rules)."""
        super().__init__()
        p = checked(DenseParams, {"model": model, **params})
        preset = preset_for(p.model)
        self.model = p.model
        self.query_prefix = preset.query_prefix if p.query_prefix is None else p.query_prefix
        self.passage_prefix = (
            preset.passage_prefix if p.passage_prefix is None else p.passage_prefix
        )
        self.pooling: Pooling = preset.pooling if p.pooling is None else p.pooling
        self.normalize = preset.normalize if p.normalize is None else p.normalize
        self.faiss_index, self.nlist, self.hnsw_m = p.faiss_index, p.nlist, p.hnsw_m
        self.nprobe, self.ef_search = p.nprobe, p.ef_search
        self.chunk_tokens, self.chunk_overlap = p.chunk_tokens, p.chunk_overlap
        self.aggregation: Aggregation = p.aggregation
        self.query_mode: QueryMode = p.query_mode
        self.devices = select_devices(p.device)
        self.batch_size = p.batch_size or default_batch_size(self.devices.encoder)
        self.backend_requested: Backend = p.backend
        self.backend, self.encoder = self._load_encoder(p.backend)
        self.window = self._window()
        self.cutter = WindowCutter(
            self.encoder.tokenizer,
            self.window,
            self.chunk_overlap,
            self.passage_prefix,
            self.encoder.max_seq_length or 512,
        )
        self.feed: Feed = feed_for(
            self.encoder, self.backend, self.devices.encoder, self.normalize, self.batch_size
        )
        self._revision = model_fingerprint(model)
        self.store = self._new_store(self._dim())
        self._chunk_rows = np.zeros(0, dtype=np.int64)
        self._chunk_start = np.zeros(1, dtype=np.int64)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        """The rules of :func:`~scanrag.indexes.dense_params.check_rules` on ``arguments``."""
        check_rules(arguments)

    def _load_encoder(self, backend: str) -> tuple[str, Any]:
        """(backend that runs, encoder); ``auto`` falls back to torch when the model has no
        ONNX export here (an unsupported pooling, say)."""
        device = self.devices.encoder
        resolved = resolve_backend(backend, device, self.model)
        if not runs_on_torch(resolved) and device.startswith("cuda"):
            log.warning("backend %s runs on the CPU; device %s is not used", resolved, device)
        try:
            return resolved, load_encoder(self.model, device, self.pooling, resolved)
        except ModelLoadError as exc:
            if backend != "auto" or runs_on_torch(resolved):
                raise
            log.warning("ONNX backend unavailable for %s (%s); using torch", self.model, exc)
            return "torch", load_encoder(self.model, device, self.pooling, "torch")

    # -- configuration ----------------------------------------------------------------------
    def _window(self) -> int:
        prefix = len(
            self.encoder.tokenizer(self.passage_prefix, add_special_tokens=False)["input_ids"]
        )
        limit = (
            self.encoder.max_seq_length or 512
        ) - self.encoder.tokenizer.num_special_tokens_to_add()
        limit -= prefix
        window = limit if self.chunk_tokens is None else min(self.chunk_tokens, limit)
        if window < 1 or not 0 <= self.chunk_overlap < window:
            raise ValueError(
                f"chunk window {window} tokens with overlap {self.chunk_overlap} is invalid for "
                f"{self.model!r} (max_seq_length {self.encoder.max_seq_length})"
            )
        return window

    def _dim(self) -> int:
        return int(self._encode([""]).shape[1])

    def _new_store(self, dim: int) -> VectorStore:
        return VectorStore(
            dim,
            kind=self.faiss_index,
            nlist=self.nlist,
            nprobe=self.nprobe,
            hnsw_m=self.hnsw_m,
            ef_search=self.ef_search,
            use_gpu=self.devices.faiss_gpu,
            gpu_device=self.devices.gpu_index,
            torch_device=self.devices.search_device,
        )

    def params(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "pooling": self.pooling,
            "normalize": self.normalize,
            "faiss_index": self.faiss_index,
            "nlist": self.nlist,
            "hnsw_m": self.hnsw_m,
            "chunk_tokens": self.chunk_tokens,
            "chunk_overlap": self.chunk_overlap,
            "aggregation": self.aggregation,
        }

    def model_info(self) -> tuple[str | None, str | None]:
        return self.model, self._revision

    def libraries(self) -> dict[str, str]:
        runtime = () if runs_on_torch(self.backend) else ("onnxruntime", "onnx")
        return library_versions(
            "sentence-transformers", "transformers", "torch", faiss_dist(), *runtime
        )

    def manifest_extra(self) -> dict[str, Any]:
        return {
            "dim": self.store.dim,
            "chunks": len(self.store),
            "window_tokens": self.window,
            "backend": self.backend,
            "backend_requested": self.backend_requested,
            "vector_search": self.store.search_backend,
            "query_mode": self.query_mode,
        }

    # -- indexing ---------------------------------------------------------------------------
    def _encode(self, texts: list[str]) -> np.ndarray:
        """Vectors of whole texts (queries: tokenized with the special tokens, truncated)."""
        return self.feed.encode(self.cutter.texts(texts))

    def _index(self, documents: list[Document]) -> None:
        """Encode the pages ``FEED_PAGES`` at a time (tokenizing the next group while the
        device encodes this one, on CUDA); the store changes only once every page is encoded."""
        vectors, rows, _ = self._encode_documents(documents, self.page_count)
        self._install(vectors, rows)

    def _install(self, vectors: list[np.ndarray], rows: list[np.ndarray]) -> None:
        if vectors:
            self.store.add(np.concatenate(vectors))
        self._set_chunk_rows(np.concatenate([self._chunk_rows, *rows]))

    def _encode_documents(
        self, documents: list[Document], start: int
    ) -> tuple[list[np.ndarray], list[np.ndarray], int]:
        """Chunk vectors and their page rows (from ``start``), and the pages encoded."""
        vectors: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        texts = (text for document in documents for text in document.page_texts())
        # closed on the way out, an error included: the prefetch thread stops there and then
        with closing(prefetch(self._windows(texts), self.feed.overlaps)) as groups:
            for windows in groups:
                encoded = self.feed.encode([w for page in windows for w in page])
                counts = np.array([max(1, len(page)) for page in windows], dtype=np.int64)
                if len(encoded) == counts.sum():  # no blank page
                    vectors.append(encoded)
                else:
                    filled = np.repeat([len(page) > 0 for page in windows], counts)
                    block = np.zeros((int(counts.sum()), self.store.dim), dtype=np.float32)
                    block[filled] = encoded
                    vectors.append(block)
                rows.append(np.repeat(np.arange(start, start + len(windows)), counts))
                start += len(windows)
                self._pages_indexed(len(windows))
        return vectors, rows, start

    def _windows(self, texts: Iterator[str]) -> Iterator[list[list[np.ndarray]]]:
        """Per group of ``FEED_PAGES`` pages, each page's window ids (none for a blank page,
        which gets one all-zero vector)."""
        while group := list(islice(texts, FEED_PAGES)):
            filled = [i for i, text in enumerate(group) if text.strip()]
            pages: list[list[np.ndarray]] = [[] for _ in group]
            for i, windows in zip(
                filled, self.cutter.pages([group[i] for i in filled]), strict=True
            ):
                pages[i] = windows
            yield pages

    def _build_part(self, documents: list[Document]) -> tuple[np.ndarray, np.ndarray, int]:
        """One slice's chunk vectors, their page rows (from 0) and its page count. The
        slice is encoded on its own, so batches (and, in the last digits, vectors) can
        differ from a build in one process."""
        vectors, rows, pages = self._encode_documents(documents, 0)
        dim = self.store.dim
        stacked = np.concatenate(vectors) if vectors else np.zeros((0, dim), np.float32)
        return stacked, np.concatenate(rows) if rows else np.zeros(0, np.int64), pages

    def _index_parts(self, documents: list[Document], payloads: list[Any]) -> None:
        vectors, rows, start = [], [], self.page_count
        for part_vectors, part_rows, pages in payloads:
            vectors.append(np.asarray(part_vectors, dtype=np.float32))
            rows.append(np.asarray(part_rows, dtype=np.int64) + start)
            start += int(pages)
        self._install([v for v in vectors if len(v)], rows)

    def _set_chunk_rows(self, chunk_rows: np.ndarray) -> None:
        counts = np.bincount(chunk_rows, minlength=int(chunk_rows.max(initial=-1)) + 1)
        self._chunk_rows = chunk_rows
        self._chunk_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    # -- searching --------------------------------------------------------------------------
    def _candidates(self, queries: list[str], rows: np.ndarray | None, k: int) -> list[Candidates]:
        qv = self._query_vectors(
            [self.query_prefix + apply_query_mode(q, self.query_mode) for q in queries]
        )
        if rows is None and self.aggregation == "max":
            return self._faiss_top(qv, k)
        return self._exact(qv, rows)

    def _query_vectors(self, texts: list[str]) -> np.ndarray:
        """Vectors of prepared queries, the last ``QUERY_CACHE`` kept (a hybrid retriever and
        an agent's repeated searches ask the same question again)."""
        cache = self._queries
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, self._encode(missing), strict=True))
        for text in texts:
            cache.move_to_end(text)
        while len(cache) > QUERY_CACHE:
            cache.popitem(last=False)
        return np.stack([cache[t] for t in texts])

    def _exact(self, qv: np.ndarray, rows: np.ndarray | None) -> list[Candidates]:
        if rows is None:
            rows = np.arange(self.page_count, dtype=np.int64)
        return exact_candidates(self.store.vectors, self._chunk_start, rows, qv, self.aggregation)

    def _faiss_top(self, qv: np.ndarray, k: int) -> list[Candidates]:
        return top_pages(self.store, self._chunk_rows, qv, k, lambda q: self._exact(q, None)[0])

    # -- persistence ------------------------------------------------------------------------
    def _save_payload(self, directory: Path) -> None:
        self.store.save(directory, VECTORS_FILE, INDEX_FILE)
        np.save(directory / CHUNKS_FILE, self._chunk_rows, allow_pickle=False)

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        saved = manifest.extra.get("backend", "torch")
        if _precision(saved) != _precision(self.backend):
            log.warning(
                "%s: vectors were encoded with backend %s, queries now use %s (fp32, bf16 and "
                "int8 vectors differ slightly)",
                directory,
                saved,
                self.backend,
            )
        dim = int(manifest.extra.get("dim", -1))
        if dim != self.store.dim:
            raise CorruptIndexError(
                f"{directory}: saved vectors have dim {dim}, the encoder produces {self.store.dim}"
            )
        store = self._new_store(dim)
        store.load(directory, VECTORS_FILE, INDEX_FILE)
        chunk_rows = np.load(directory / CHUNKS_FILE, allow_pickle=False).astype(np.int64)
        counts: Any = (
            np.bincount(chunk_rows, minlength=manifest.page_count) if chunk_rows.size else []
        )
        if (
            chunk_rows.ndim != 1
            or len(chunk_rows) != len(store)
            or np.any(np.diff(chunk_rows) < 0)
            or len(counts) != manifest.page_count
            or (manifest.page_count and int(np.min(counts)) < 1)
        ):
            raise CorruptIndexError(
                f"{directory}: the chunk → page map does not match the vectors and the "
                f"{manifest.page_count} pages of the manifest"
            )
        self.store = store
        self._set_chunk_rows(chunk_rows)


def _precision(backend: str) -> str:
    """The number format a backend's vectors come from (fp32 torch and fp32 ONNX agree)."""
    return {"onnx-int8": "int8", "torch-bf16": "bf16", "torch-fp16": "fp16"}.get(backend, "fp32")
