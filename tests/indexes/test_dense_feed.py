"""Feeding token ids to the encoder: batches, padding, threads, prefetching, device choices."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from scanrag.indexes import dense_feed, encoders
from scanrag.indexes.dense_feed import (
    OnnxFeed,
    TorchFeed,
    default_batch_size,
    feed_for,
    length_batches,
    one_cpu_thread,
    pad_batch,
    prefetch,
)
from scanrag.indexes.dense_tiny import tiny_encoder_dir
from scanrag.indexes.dense_windows import WindowCutter
from scanrag.indexes.encoders import load_encoder

TEXTS = [
    "Quarterly revenue grew by twelve percent in Europe and Asia.",
    "cell",
    "The telescope observed a galaxy cluster behind a black hole " * 3,
    "",
    "Plants turn sun light into energy.",
]


def test_pad_batch_right_and_left():
    chunks = [np.array([5, 6, 7]), np.array([8])]
    ids, mask = pad_batch(chunks, pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    ids, mask = pad_batch(chunks, pad_id=9, left=True)
    assert ids.tolist() == [[5, 6, 7], [9, 9, 8]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_length_batches_longest_first_ties_in_order():
    batches = length_batches(np.array([2, 5, 5, 1, 3]), 2)
    assert [b.tolist() for b in batches] == [[1, 2], [4, 0], [3]]
    with pytest.raises(ValueError, match="batch_size"):
        length_batches(np.array([1]), 0)


def test_one_cpu_thread_nests_and_restores(monkeypatch):
    calls = []
    state = {"n": 4}
    monkeypatch.setattr(torch, "get_num_threads", lambda: state["n"])

    def set_threads(n: int) -> None:
        calls.append(n)
        state["n"] = n

    monkeypatch.setattr(torch, "set_num_threads", set_threads)
    with one_cpu_thread():
        with one_cpu_thread():
            assert state["n"] == 1
        assert state["n"] == 1
    assert state["n"] == 4 and calls == [1, 4]


def test_one_cpu_thread_across_threads_restores_once(monkeypatch):
    state = {"n": 2}
    monkeypatch.setattr(torch, "get_num_threads", lambda: state["n"])
    monkeypatch.setattr(torch, "set_num_threads", lambda n: state.update(n=n))
    inside, release = threading.Barrier(2), threading.Event()

    def work() -> None:
        with one_cpu_thread():
            inside.wait()
            release.wait()

    workers = [threading.Thread(target=work) for _ in range(2)]
    for w in workers:
        w.start()
    release.set()
    for w in workers:
        w.join()
    assert state["n"] == 2


def test_prefetch_keeps_order_and_raises_where_it_stopped():
    assert list(prefetch(iter(range(10)), enabled=True, depth=1)) == list(range(10))
    assert list(prefetch(iter(range(3)), enabled=False)) == [0, 1, 2]

    def broken():
        yield 1
        raise RuntimeError("tokenizer failed")

    got = []
    with pytest.raises(RuntimeError, match="tokenizer failed"):
        for item in prefetch(broken(), enabled=True):
            got.append(item)
    assert got == [1]


def test_prefetch_stops_its_thread_when_the_consumer_leaves():
    produced = []

    def endless():
        n = 0
        while True:
            produced.append(n)
            yield n
            n += 1

    for item in prefetch(endless(), enabled=True, depth=1):
        if item == 2:
            break
    assert not any(t.name == "dense-prefetch" for t in threading.enumerate())
    assert len(produced) <= 6


def test_a_stalled_prefetch_thread_raises_with_its_stack_instead_of_hanging():
    release = threading.Event()

    def stuck():
        yield 1
        release.wait(30)  # a tokenizer call that never returns
        yield 2

    got = []
    with pytest.raises(TimeoutError, match=r"nothing in 0.3 s(.|\n)*release.wait"):
        for item in prefetch(stuck(), enabled=True, stall_s=0.3):
            got.append(item)
    release.set()
    assert got == [1]


def test_the_caller_waits_a_bounded_time_for_a_busy_thread(monkeypatch, caplog):
    monkeypatch.setattr(dense_feed, "JOIN_S", 0.2)
    release = threading.Event()

    def slow():
        yield 1
        release.wait(30)
        yield 2

    with caplog.at_level("WARNING"):
        for _ in prefetch(slow(), enabled=True):
            break  # the thread is inside its next item
    assert "still busy" in caplog.text
    release.set()


def test_a_failed_build_stops_the_prefetch_thread_at_once():
    """An error while encoding ends the prefetch thread before the error reaches the caller
    (``_encode_documents`` closes the generator on its way out), while the traceback still
    holds the build's frames."""
    from types import SimpleNamespace

    from scanrag.indexes.dense import DenseIndex

    def endless(_texts):
        while True:
            yield [[np.ones(3, np.int64)]]

    def encode(chunks):
        raise RuntimeError("CUDA out of memory")

    fake = SimpleNamespace(
        feed=SimpleNamespace(overlaps=True, encode=encode),
        _windows=endless,
        store=SimpleNamespace(dim=4),
    )
    with pytest.raises(RuntimeError, match="out of memory") as failure:
        DenseIndex._encode_documents(fake, [], 0)  # type: ignore[arg-type]
    assert failure.traceback  # the frames are still referenced here
    assert not any(t.name == "dense-prefetch" for t in threading.enumerate())


@pytest.mark.model
def test_torch_feed_gives_sentence_transformers_vectors():
    encoder = load_encoder(str(tiny_encoder_dir()), "cpu")
    cutter = WindowCutter(encoder.tokenizer, 62, 8, "", encoder.max_seq_length)
    feed = feed_for(encoder, "torch", "cpu", normalize=True, batch_size=2)
    assert isinstance(feed, TorchFeed) and feed.token_types and not feed.overlaps
    ours = feed.encode(cutter.texts(TEXTS))
    theirs = encoder.encode(TEXTS, batch_size=2, normalize_embeddings=True)
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() < 1e-5
    assert feed.encode([]).shape == (0, ours.shape[1])


@pytest.mark.model
def test_small_work_runs_on_one_thread(monkeypatch):
    encoder = load_encoder(str(tiny_encoder_dir()), "cpu")
    feed = feed_for(encoder, "torch", "cpu", normalize=True, batch_size=32)
    cutter = WindowCutter(encoder.tokenizer, 62, 8, "", encoder.max_seq_length)
    seen = []
    real = encoder.forward
    monkeypatch.setattr(
        encoder, "forward", lambda f, **kw: seen.append(torch.get_num_threads()) or real(f)
    )
    before = torch.get_num_threads()
    feed.encode(cutter.texts(["a question"]))
    assert seen == [1] and torch.get_num_threads() == before
    monkeypatch.setattr(dense_feed, "SMALL_WORK_TOKENS", 0)
    feed.encode(cutter.texts(["a question"]))
    assert seen[-1] == before


@pytest.mark.model
def test_fp16_weights_give_float32_unit_vectors_close_to_fp32():
    tiny = str(tiny_encoder_dir())
    fp32 = feed_for(load_encoder(tiny, "cpu"), "torch", "cpu", True, 8)
    fp16 = feed_for(load_encoder(tiny, "cpu", backend="torch-fp16"), "torch-fp16", "cpu", True, 8)
    cutter = WindowCutter(load_encoder(tiny, "cpu").tokenizer, 62, 8, "", 64)
    ids = cutter.texts(TEXTS)
    a, b = fp32.encode(ids), fp16.encode(ids)
    assert b.dtype == np.float32
    assert np.linalg.norm(b, axis=1) == pytest.approx(1.0, abs=1e-6)
    assert np.min(np.sum(a * b, axis=1)) > 0.999


def test_device_choices_for_cuda_without_a_gpu(monkeypatch):
    """What CUDA selects, checked with stand-ins: the fp16 backend, large batches, overlap,
    pinned copies (the model is a stub; no GPU is touched)."""
    assert encoders.resolve_backend("auto", "cuda", encoders.DEFAULT_MODEL) == "torch-fp16"
    assert encoders.resolve_backend("auto", "cuda:1", encoders.DEFAULT_MODEL) == "torch-fp16"
    assert default_batch_size("cuda") == 256 and default_batch_size("cpu") == 32

    class Tokenizer:
        pad_token_id, padding_side, model_input_names = 0, "right", ["input_ids"]

    class Encoder:
        tokenizer = Tokenizer()

    feed = feed_for(Encoder(), "torch-fp16", "cuda", normalize=True, batch_size=256)
    assert isinstance(feed, TorchFeed) and feed.cuda and feed.overlaps
    assert not feed.token_types
    pinned = []
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: pinned.append(1) or self)
    monkeypatch.setattr(torch.Tensor, "to", lambda self, *a, **k: self)
    feed._tensor(np.zeros((2, 3), np.int64))
    assert pinned == [1]


@pytest.fixture
def cuda_stand_ins(monkeypatch) -> dict[str, int]:
    """The CUDA calls of ``TorchFeed`` replaced by stand-ins that count them (CPU tensors)."""
    calls = {"pinned": 0, "non_blocking": 0, "pinned_buffers": 0, "synchronize": 0}
    real_to, real_empty = torch.Tensor.to, torch.empty

    def count(name):
        calls[name] += 1

    def to(self, *args, **kwargs):
        if kwargs.get("non_blocking"):
            count("non_blocking")
        return real_to(self, *args, **kwargs)

    def empty(*args, pin_memory=False, **kwargs):
        if pin_memory:
            count("pinned_buffers")
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: count("pinned") or self)
    monkeypatch.setattr(torch.Tensor, "to", to)
    monkeypatch.setattr(torch, "empty", empty)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: count("synchronize"))
    return calls


@pytest.mark.model
def test_the_cuda_path_runs_on_the_cpu_with_stand_ins(cuda_stand_ins):
    """The CUDA branches of ``TorchFeed`` (pinned, non-blocking copies in; pinned buffers out;
    one synchronize per call) run on CPU tensors: the same vectors as the CPU path."""
    encoder = load_encoder(str(tiny_encoder_dir()), "cpu")
    ids = WindowCutter(encoder.tokenizer, 62, 8, "", encoder.max_seq_length).texts(TEXTS)
    feed = feed_for(encoder, "torch", "cpu", normalize=True, batch_size=2)
    want = feed.encode(ids)
    for name in cuda_stand_ins:
        cuda_stand_ins[name] = 0
    feed.cuda = True
    got = feed.encode(ids)
    batches = -(-len(ids) // 2)
    assert cuda_stand_ins == {
        "pinned": 2 * batches,  # input ids and mask of every batch
        "non_blocking": 2 * batches,
        "pinned_buffers": batches,  # one host buffer per batch's vectors
        "synchronize": 1,
    }
    assert got.dtype == np.float32 and np.abs(got - want).max() < 1e-6


@pytest.mark.model
@pytest.mark.parametrize("parallelism", [None, "false", "true"])
def test_a_cuda_shaped_build_finishes_and_gives_the_cpu_vectors(
    cuda_stand_ins, monkeypatch, parallelism
):
    """The whole CUDA build on the CPU: the prefetch thread tokenizing groups of pages on
    its thread pool while the feed runs its CUDA branches (stand-ins), with
    ``TOKENIZERS_PARALLELISM`` unset, false and true: the CPU build's vectors, in time."""
    from scanrag.indexes import dense
    from scanrag.indexes.dense import DenseIndex
    from scanrag.schemas import Document, Page

    monkeypatch.setattr(dense, "FEED_PAGES", 2)
    monkeypatch.setattr(dense_feed, "PREFETCH_STALL_S", 60.0)
    if parallelism is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", parallelism)
    pages = [Page(number=i, width=1, height=1, text=t * 4) for i, t in enumerate(TEXTS, 1)]
    docs = [Document(id="d", name="d.pdf", sha256="0" * 64, num_pages=5, pages=pages)]
    index = DenseIndex(str(tiny_encoder_dir()), chunk_tokens=24, chunk_overlap=4, device="cpu")
    want = index._encode_documents(docs, 0)
    index.feed.cuda = index.feed.overlaps = True
    got = index._encode_documents(docs, 0)
    assert cuda_stand_ins["synchronize"] == 3  # one per group of two pages
    assert [len(v) for v in got[0]] == [len(v) for v in want[0]]
    assert np.abs(np.concatenate(got[0]) - np.concatenate(want[0])).max() < 1e-6
    assert not any(t.name == "dense-prefetch" for t in threading.enumerate())


def test_onnx_feed_normalises_when_the_model_does():
    class Layout:
        normalize = True

    class Tokenizer:
        pad_token_id, padding_side, model_input_names = 1, "left", ["input_ids"]

    class Session:
        tokenizer, layout = Tokenizer(), Layout()

        def run_ids(self, ids, mask):
            return np.tile(mask.sum(axis=1, keepdims=True).astype(np.float32), (1, 2))

    feed = feed_for(Session(), "onnx", "cpu", normalize=False, batch_size=2)
    assert isinstance(feed, OnnxFeed) and feed.normalize and feed.left_pad and feed.pad_id == 1
    out = feed.encode([np.array([3, 4, 5]), np.array([6])])
    assert out == pytest.approx(np.full((2, 2), 2**-0.5))
