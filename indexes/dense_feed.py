"""Running a dense encoder on token ids: length-sorted batches, devices, precision, overlap.

``scanrag.indexes.dense_windows`` turns texts into model input ids once; a *feed* turns lists of ids
into float32 vectors, one row per list, in the order given:

* ids are sorted by length and cut into batches of ``batch_size``, so a batch pads little;
  each batch is padded on the host (numpy) into ``input_ids`` / ``attention_mask`` (and
  ``token_type_ids`` when the model takes them), exactly what sentence-transformers' own
  preprocessing would build for the same ids;
* ``TorchFeed`` runs the ``SentenceTransformer`` modules on those tensors. On CUDA the host
  arrays are pinned and copied without blocking, the vectors come back into pinned buffers the
  same way, and the stream is synchronised once per call, so padding the next batch overlaps
  the device's work on this one; ``prefetch`` runs the tokenization of the next group of pages
  in a background thread meanwhile (errors there reach the caller; a stalled thread raises
  ``TimeoutError`` with its stack instead of hanging the build). Vectors are cast to float32
  and L2-normalised there (weights in fp16 or bf16 normalise in float32 all the same);
* on the CPU a call with little work (a query: at most ``SMALL_WORK_TOKENS`` tokens) runs on
  one intra-op thread. On a few busy cores every OpenMP region otherwise waits for its slowest
  thread to be scheduled: one question took ~600 ms on 2 loaded cores with 2 threads and
  ~50 ms with one (measured; see docs/retrievers.md);
* ``OnnxFeed`` does the same with an ONNX Runtime session (``scanrag.indexes.onnx_encoder``).
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
import traceback
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
log = logging.getLogger(__name__)
# The prefetch thread tokenizes a group of pages (``FEED_PAGES``: ~1 s on a few cores); this
# long without one is a stall, not work. The caller waits this long for it to stop.
PREFETCH_STALL_S = 600.0
JOIN_S = 10.0
POLL_S = 0.05

# A call with at most this many tokens (sum over its texts) runs on one CPU thread.
SMALL_WORK_TOKENS = 2048
_threads_lock = threading.Lock()
_narrowed = {"depth": 0, "saved": 0}


@contextmanager
def one_cpu_thread() -> Iterator[None]:
    """torch on one intra-op thread inside the block; calls may nest and overlap across
    threads (the setting is process-wide: the first to enter narrows it, the last to leave
    restores it)."""
    import torch

    with _threads_lock:
        if _narrowed["depth"] == 0:
            _narrowed["saved"] = torch.get_num_threads()
            if _narrowed["saved"] != 1:
                torch.set_num_threads(1)
        _narrowed["depth"] += 1
    try:
        yield
    finally:
        with _threads_lock:
            _narrowed["depth"] -= 1
            if _narrowed["depth"] == 0 and _narrowed["saved"] != 1:
                torch.set_num_threads(_narrowed["saved"])


def length_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Row numbers, longest first (ties in input order), in batches of ``batch_size``."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def pad_batch(
    chunks: Sequence[np.ndarray], pad_id: int, left: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(input ids, attention mask), int64 arrays of shape (len(chunks), longest)."""
    width = max((len(c) for c in chunks), default=0)
    ids = np.full((len(chunks), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(chunks), width), dtype=np.int64)
    for row, chunk in enumerate(chunks):
        n = len(chunk)
        span = slice(width - n, width) if left else slice(0, n)
        ids[row, span] = chunk
        mask[row, span] = 1
    return ids, mask


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float32 (all-zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def prefetch(
    items: Iterable[T], enabled: bool, depth: int = 2, stall_s: float | None = None
) -> Generator[T, None, None]:
    """``items``, produced in a background thread up to ``depth`` ahead when ``enabled``.

    The thread can neither hang the caller nor outlive it: an error there is raised here, at
    the item it stopped at; a thread that ends without a result raises ``RuntimeError``; no
    item for ``stall_s`` seconds (default ``PREFETCH_STALL_S``) raises ``TimeoutError`` with
    the thread's stack; the thread stops at its next item once the caller leaves (close the
    generator, e.g. with ``contextlib.closing``), and the caller waits ``JOIN_S`` for it at
    most."""
    if not enabled:
        yield from items
        return
    box: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(entry: tuple[str, Any]) -> bool:
        while not stop.is_set():
            with suppress(queue.Full):
                box.put(entry, timeout=POLL_S)
                return True
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(("item", item)):
                    return
        except BaseException as exc:  # handed to the consumer
            offer(("error", exc))
            return
        offer(("done", None))

    worker = threading.Thread(target=produce, name="dense-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = _take(box, worker, PREFETCH_STALL_S if stall_s is None else stall_s)
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        worker.join(timeout=JOIN_S)
        if worker.is_alive():
            log.warning("the prefetch thread is still busy %.0f s after its caller left", JOIN_S)


def _take(box: queue.Queue[tuple[str, Any]], worker: threading.Thread, stall_s: float) -> Any:
    """The next entry from ``worker``, or an error when it ended without one or stalled."""
    deadline = time.monotonic() + stall_s
    while True:
        with suppress(queue.Empty):
            return box.get(timeout=POLL_S)
        if not worker.is_alive():
            with suppress(queue.Empty):  # its last entry may have come in meanwhile
                return box.get_nowait()
            raise RuntimeError("the prefetch thread ended without handing over its result")
        if time.monotonic() > deadline:
            frame = sys._current_frames().get(worker.ident or -1)
            where = "".join(traceback.format_stack(frame)) if frame is not None else "unknown"
            raise TimeoutError(
                f"the prefetch thread produced nothing in {stall_s:g} s; it is at:\n{where}"
            )


class Feed:
    """Length-sorted batches of ids in, float32 vectors out (subclasses run the model)."""

    overlaps = False  # whether ``prefetch`` should run the host work in a thread

    def __init__(
        self, *, pad_id: int, left_pad: bool, batch_size: int, normalize: bool, dim: int = 0
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.pad_id, self.left_pad = pad_id, left_pad
        self.batch_size, self.normalize, self.dim = batch_size, normalize, dim

    def encode(self, chunks: Sequence[np.ndarray]) -> np.ndarray:
        """One vector per id list, in order (float32, unit length when ``normalize``)."""
        if not chunks:
            return np.zeros((0, self.dim), dtype=np.float32)
        lengths = np.fromiter((len(c) for c in chunks), dtype=np.int64, count=len(chunks))
        with self._context(int(lengths.sum())):
            done = [
                (rows, self._run(*pad_batch([chunks[i] for i in rows], self.pad_id, self.left_pad)))
                for rows in length_batches(lengths, self.batch_size)
            ]
            parts = self._collect([vectors for _, vectors in done])
        self.dim = parts[0].shape[1]
        out = np.empty((len(chunks), self.dim), dtype=np.float32)
        for (rows, _), vectors in zip(done, parts, strict=True):
            out[rows] = vectors
        return out

    def _context(self, tokens: int) -> AbstractContextManager[Any]:
        return nullcontext()

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> Any:
        raise NotImplementedError

    def _collect(self, pending: list[Any]) -> list[np.ndarray]:
        return [np.asarray(p, dtype=np.float32) for p in pending]


class TorchFeed(Feed):
    """A ``SentenceTransformer`` (or any module mapping features to ``sentence_embedding``)
    on ``device``; ``token_types`` adds all-zero ``token_type_ids`` (BERT-style inputs)."""

    def __init__(self, model: Any, device: str, *, token_types: bool, **options: Any) -> None:
        super().__init__(**options)
        self.model, self.device, self.token_types = model, device, token_types
        self.cuda = device.startswith("cuda")
        self.overlaps = self.cuda

    def _context(self, tokens: int) -> AbstractContextManager[Any]:
        import torch

        stack = ExitStack()
        if not self.cuda and tokens <= SMALL_WORK_TOKENS:
            stack.enter_context(one_cpu_thread())
        stack.enter_context(torch.inference_mode())
        return stack

    def _tensor(self, array: np.ndarray) -> Any:
        import torch

        tensor = torch.from_numpy(array)
        if not self.cuda:
            return tensor
        return tensor.pin_memory().to(self.device, non_blocking=True)

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> Any:
        import torch

        features = {"input_ids": self._tensor(ids), "attention_mask": self._tensor(mask)}
        if self.token_types:
            features["token_type_ids"] = torch.zeros_like(features["input_ids"])
        vectors = self.model(features)["sentence_embedding"].float()
        if self.normalize:
            vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
        if not self.cuda:
            return vectors
        host = torch.empty(vectors.shape, dtype=torch.float32, pin_memory=True)
        host.copy_(vectors, non_blocking=True)
        return host

    def _collect(self, pending: list[Any]) -> list[np.ndarray]:
        if self.cuda and pending:
            import torch

            torch.cuda.synchronize(self.device)
        return [p.numpy() for p in pending]


class OnnxFeed(Feed):
    """A ``scanrag.indexes.onnx_encoder.OnnxEncoder`` session on the CPU."""

    def __init__(self, encoder: Any, **options: Any) -> None:
        super().__init__(**options)
        self.encoder = encoder

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> Any:
        vectors = self.encoder.run_ids(ids, mask)
        return normalize_rows(vectors) if self.normalize else vectors


# Chunks per forward pass when ``batch_size`` is not given: length-sorted batches pad little,
# so a GPU takes large ones; on a CPU larger batches measured no faster.
CPU_BATCH, CUDA_BATCH = 32, 256


def default_batch_size(device: str) -> int:
    return CUDA_BATCH if device.startswith("cuda") else CPU_BATCH


def feed_for(encoder: Any, backend: str, device: str, normalize: bool, batch_size: int) -> Feed:
    """The feed of a loaded encoder: ``TorchFeed`` for the torch backends (a
    ``SentenceTransformer`` on ``device``), ``OnnxFeed`` for an ONNX session."""
    tokenizer = encoder.tokenizer
    options: dict[str, Any] = {
        "pad_id": int(tokenizer.pad_token_id or 0),
        "left_pad": getattr(tokenizer, "padding_side", "right") == "left",
        "batch_size": batch_size,
        "normalize": normalize,
    }
    if backend.startswith("torch"):
        token_types = "token_type_ids" in getattr(tokenizer, "model_input_names", ())
        return TorchFeed(encoder, device, token_types=token_types, **options)
    options["normalize"] = normalize or bool(encoder.layout.normalize)
    return OnnxFeed(encoder, **options)
