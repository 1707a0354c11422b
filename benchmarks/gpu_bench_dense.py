"""The dense build section of ``benchmarks/gpu_bench.py``: pages/s and host-only time per page.

Pages are generated text (``synthetic_pages``: words of one to five syllables, numbers,
punctuation, ~``chars`` characters a page, so that pages are cut into several windows and some
cuts fall inside words), encoded by the bundled all-MiniLM-L6-v2 (or ``--model``) on the
chosen device. Three ways to encode the same pages, timed in interleaved rounds (best of
``repeats``), each with ``TOKENIZERS_PARALLELISM`` unset and ``false``:

* ``project`` — ``DenseIndex``'s build path: pages tokenized once, window ids straight to the
  model (``scanrag.indexes.dense_windows`` + ``scanrag.indexes.dense_feed``);
* ``legacy`` — the path before it: windows cut as text (``token_windows``), every window
  tokenized again by ``SentenceTransformer.encode``;
* ``raw`` — ``SentenceTransformer.encode`` of the window texts alone (cut beforehand, not
  timed): what a user of the library would run.

Pages/s are wall clock; ``pages_per_cpu_s`` divides by the CPU time of this process (all its
threads), steadier than wall time on shared cores. ``host_ms_per_page`` repeats ``project``
and ``legacy`` with the model's forward replaced by a no-op that returns zeros: the time the
host spends per page (tokenizing, padding, copying), wall clock and CPU time of this process.
``max_abs_diff_vs_legacy`` compares the vectors; ``project_speed_over_raw_*`` is the
project's build speed over raw ``encode`` of the same windows (issue 29 asks >= 3 on a GPU).

Each stage reports to the section's progress (``gpu_bench_progress.Section``) and its figures
land in ``progress.figures`` as it ends, so a budget stop keeps them. Why this section once
printed nothing for minutes on an H200: its pages were generated word by word (~90 ms a page)
and the host-only stage's 4,000 pages were generated whatever ``--pages`` said; the words of a
page are now drawn at once (~2 ms a page).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from scanrag.hashing import stable_hash
from scanrag.schemas import Document, Page

SYLLABLES = (  # noqa: SIM905
    "ka lo mi re tan ex por fin an cial rev en ue ope ra ting quar ter ly net in come"
).split()
PUNCT = [",", ".", ";", ":", "(", ")", "%", "$", "-"]


def synthetic_pages(pages: int, chars: int = 3000, seed: int = 0) -> list[Document]:
    """Documents of 20 pages of generated text (deterministic for a seed). Each page's words
    are drawn at once (a draw per word took ~90 ms a page: 4,000 pages, the GPU run's
    host-only size, took minutes before the section printed anything)."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array(
        ["".join(rng.choice(SYLLABLES, size=int(rng.integers(1, 6)))) for _ in range(3000)]
    )
    capitals = np.char.capitalize(vocabulary)
    punctuation = np.array(PUNCT)
    room = chars // 2 + 1  # words a page can need: every word and its space take >= 2 chars
    texts = []
    for _ in range(pages):
        pick, which = rng.random(room), rng.integers(0, len(vocabulary), room)
        words = np.where(rng.random(room) < 0.1, capitals[which], vocabulary[which]).astype(object)
        marks = pick < 0.2
        words[marks] = punctuation[rng.integers(0, len(punctuation), int(marks.sum()))]
        numbers = np.flatnonzero(pick < 0.12)
        whole, cents = rng.integers(1, 10**6, len(numbers)), rng.integers(0, 100, len(numbers))
        for i, a, b in zip(numbers.tolist(), whole.tolist(), cents.tolist(), strict=True):
            words[i] = f"{a:,}.{b:02d}"
        ends = np.cumsum([len(w) + 1 for w in words])
        texts.append(" ".join(words[: int(np.searchsorted(ends, chars)) + 1]))
    docs = []
    for start in range(0, pages, 20):
        part = texts[start : start + 20]
        sha = stable_hash([seed, start, *part], length=64)
        rows = [Page(number=i, width=612, height=792, text=t) for i, t in enumerate(part, 1)]
        docs.append(
            Document(id=sha[:16], name=f"s{start}.pdf", sha256=sha, num_pages=len(part), pages=rows)
        )
    return docs


@contextmanager
def tokenizer_parallelism(value: str | None) -> Iterator[None]:
    """``TOKENIZERS_PARALLELISM`` set to ``value`` (``None``: unset) inside the block; the
    Rust tokenizer reads it at every batch call."""
    saved = os.environ.pop("TOKENIZERS_PARALLELISM", None)
    if value is not None:
        os.environ["TOKENIZERS_PARALLELISM"] = value
    try:
        yield
    finally:
        os.environ.pop("TOKENIZERS_PARALLELISM", None)
        if saved is not None:
            os.environ["TOKENIZERS_PARALLELISM"] = saved


@contextmanager
def no_forward(model: Any, dim: int) -> Iterator[None]:
    """``model``'s forward replaced by one returning zero vectors (host work only)."""
    import torch

    def forward(features: dict[str, Any], **_: Any) -> dict[str, Any]:
        rows = features["input_ids"].shape[0]
        device = features["input_ids"].device
        return {**features, "sentence_embedding": torch.zeros(rows, dim, device=device)}

    model.forward = forward
    try:
        yield
    finally:
        del model.forward


def clocked(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of ``fn()``."""
    sync = _synchronize()
    sync()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    sync()
    return time.perf_counter() - wall, time.process_time() - cpu


def _synchronize() -> Callable[[], None]:
    import torch

    return torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)


def dense_build(
    progress: Any,
    pages: int,
    host_pages: int,
    repeats: int,
    model: str | None = None,
    chars: int = 3000,
) -> None:
    """The section's figures, written into ``progress.figures`` as each stage ends (a budget
    stop keeps them); ``progress`` is a ``gpu_bench_progress.Section``."""
    from scanrag.indexes.dense import DenseIndex
    from scanrag.indexes.encoders import DEFAULT_MODEL, token_windows

    figures = progress.figures
    progress.stage("load the encoder", 1)
    index = DenseIndex(model or DEFAULT_MODEL)
    encoder, dim = index.encoder, index.store.dim
    legacy_ok = hasattr(encoder, "encode") and hasattr(encoder, "forward")

    def contenders(docs: list[Document], raw: bool) -> dict[str, Callable[[], Any]]:
        texts = [t for d in docs for t in d.page_texts() if t.strip()]

        def legacy() -> Any:
            cut = token_windows(texts, encoder.tokenizer, index.window, index.chunk_overlap)
            return encode([index.passage_prefix + p for ps in cut for p in ps])

        def encode(flat: list[str]) -> Any:
            return encoder.encode(
                flat, batch_size=index.batch_size, normalize_embeddings=index.normalize,
                convert_to_numpy=True, show_progress_bar=False,
            )  # fmt: skip

        out = {"project": lambda: index._encode_documents(docs, 0)}
        if legacy_ok:
            out["legacy"] = legacy
        if legacy_ok and raw:  # the windows are cut beforehand: raw times the encoder alone
            pieces = token_windows(texts, encoder.tokenizer, index.window, index.chunk_overlap)
            chunks = [index.passage_prefix + p for ps in pieces for p in ps]
            out["raw"] = lambda: encode(chunks)
        return out

    progress.stage("generate pages", 2)
    full_docs = synthetic_pages(pages, chars)
    progress.advance()
    host_docs = synthetic_pages(host_pages, chars, seed=1) if legacy_ok else []
    progress.advance()
    full = contenders(full_docs, raw=True)
    figures |= {
        "device": index.devices.encoder,
        "backend": index.backend,
        "batch_size": index.batch_size,
        "pages": pages,
        "chunks": sum(
            len(ws) for ws in index.cutter.pages([t for d in full_docs for t in d.page_texts()])
        ),
        "single_tokenization": index.cutter.exact,
    }
    for setting in (None, "false"):
        label = "parallel" if setting is None else "tokenizers_parallelism_false"
        progress.stage(f"build, TOKENIZERS_PARALLELISM={setting or 'unset'}", repeats * len(full))
        with tokenizer_parallelism(setting):
            best = interleaved(full, repeats, progress)
        for name, (wall, cpu) in best.items():
            figures[f"{name}_pages_per_s_{label}"] = pages / wall
            figures[f"{name}_pages_per_cpu_s_{label}"] = pages / cpu
        if "raw" in best:
            figures[f"project_speed_over_raw_{label}"] = best["raw"][0] / best["project"][0]
    if not legacy_ok:
        return
    progress.stage("vectors against the legacy path", 1)
    figures["max_abs_diff_vs_legacy"] = _vector_diff(full["project"], full["legacy"])
    host = contenders(host_docs, raw=False)
    progress.stage(f"host-only, {host_pages} pages, forward a no-op", repeats * 2)
    with no_forward(encoder, dim):
        best = interleaved(host, repeats, progress)
    for name, (wall, cpu) in best.items():
        figures[f"{name}_host_ms_per_page_wall"] = 1000 * wall / host_pages
        figures[f"{name}_host_ms_per_page_cpu"] = 1000 * cpu / host_pages
    figures["host_ratio_legacy_over_project_cpu"] = (
        figures["legacy_host_ms_per_page_cpu"] / figures["project_host_ms_per_page_cpu"]
    )


def interleaved(
    fns: dict[str, Callable[[], Any]], repeats: int, progress: Any = None
) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) seconds of each function over ``repeats`` interleaved rounds (each run
    counted on ``progress``, which stops the rounds when its budget is spent)."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            spent = clocked(fn)
            if name not in best or spent[0] < best[name][0]:
                best[name] = spent
            if progress is not None:
                progress.advance()
    return best


def _vector_diff(project: Callable[[], Any], legacy: Callable[[], Any]) -> float:
    ours = np.concatenate(project()[0])
    theirs = np.asarray(legacy(), dtype=np.float32)
    if ours.shape != theirs.shape:
        return float("inf")
    return float(np.abs(ours - theirs).max())
