"""Saving and loading the sparse BM25 engine: one ``.npy`` file per array, so a large index
can be memory-mapped (searching then reads only the rows a query needs).

Files (in the index's ``payload`` folder): the postings (``indptr``, ``docs``, ``tf``: see
``scanrag.indexes.bm25_sparse``), page ``lengths``, and the vocabulary (``pair_keys``,
``pair_ids``, ``first_key``, ``unigram_ids``, ``joined_ids`` and ``terms.json.gz`` with the
unigram and other spelled terms). Indexes saved by earlier versions still load to the same
scores: with a ``weights.npy`` of precomputed contributions (ignored: scores are computed from
the counts; their counts are narrowed to the smallest type when read into memory), with
``counts.json.gz`` (each page's term counts) or ``tokens.json.gz`` (each page's terms): their
strings become the vocabulary as spelled, with the same statistics.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from scanrag.indexes.bm25_counts import count_term_dicts, smallest_uint
from scanrag.indexes.bm25_sparse import SparseBM25
from scanrag.indexes.bm25_vocab import Vocabulary
from scanrag.indexes.errors import CorruptIndexError
from scanrag.indexes.tokenize import TokenizerConfig

TERMS_FILE = "terms.json.gz"
COUNTS_FILE = "counts.json.gz"  # earlier versions: each page's term counts
TOKENS_FILE = "tokens.json.gz"  # earlier still: each page's terms, in order
POSTINGS = ("indptr", "docs", "tf", "lengths")
VOCAB_ARRAYS = ("pair_keys", "pair_ids", "first_key", "unigram_ids", "joined_ids")
MMAP_BYTES = 1 << 30  # postings larger than this are memory-mapped when loaded


def save_engine(directory: Path, engine: SparseBM25, vocab: Vocabulary) -> None:
    state = vocab.state()
    for name, array in engine.arrays().items():
        target = directory / f"{name}.npy"
        if isinstance(array, np.memmap) and _whole_file(array):
            _link_or_copy(Path(str(array.filename)), target)  # no pass through memory
        else:
            np.save(target, np.ascontiguousarray(array))
    for name in VOCAB_ARRAYS:
        np.save(directory / f"{name}.npy", np.asarray(state[name], dtype=np.int64))
    terms = {
        "size": state["size"],
        "unigram_terms": state["unigram_terms"],
        "joined_terms": state["joined_terms"],
    }
    with gzip.GzipFile(directory / TERMS_FILE, "wb", mtime=0) as fh:
        fh.write(json.dumps(terms, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _whole_file(array: np.memmap) -> bool:
    """Whether ``array`` maps all of a ``.npy`` file (so the file can stand for it)."""
    filename = getattr(array, "filename", None)
    if not filename or not str(filename).endswith(".npy") or array.ndim != 1:
        return False
    try:
        saved = np.load(filename, mmap_mode="r")
    except (OSError, ValueError):
        return False
    same = saved.shape == array.shape and saved.dtype == array.dtype
    return same and array.offset == saved.offset


def _link_or_copy(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def load_engine(
    directory: Path,
    page_count: int,
    tokenizer: TokenizerConfig,
    params: tuple[float, float, float],
    mmap: bool | None = None,
) -> tuple[SparseBM25, Vocabulary]:
    """The engine and vocabulary saved in ``directory`` (``mmap``: memory-map the postings;
    ``None``: when they are larger than ``MMAP_BYTES``)."""
    engine = SparseBM25(*params)
    if not (directory / TERMS_FILE).is_file():
        return _load_earlier(directory, page_count, tokenizer, engine)
    if mmap is None:
        size = sum((directory / f"{name}.npy").stat().st_size for name in POSTINGS)
        mmap = size > MMAP_BYTES
    arrays = {
        name: np.load(directory / f"{name}.npy", mmap_mode="r" if mmap else None)
        for name in POSTINGS
    }
    tf = arrays["tf"]
    if not mmap and tf.size and tf.dtype != (narrow := smallest_uint(int(tf.max()))):
        arrays["tf"] = tf.astype(narrow)  # saved wider by an earlier version
    with gzip.open(directory / TERMS_FILE, "rb") as fh:
        terms: dict[str, Any] = json.loads(fh.read().decode("utf-8"))
    state = {name: np.load(directory / f"{name}.npy") for name in VOCAB_ARRAYS}
    state.update(terms)
    vocab = Vocabulary.from_state(tokenizer, state)
    if arrays["lengths"].size != page_count:
        raise CorruptIndexError(
            f"{directory}: the postings hold {arrays['lengths'].size} pages, the manifest "
            f"lists {page_count}"
        )
    if arrays["indptr"].size != vocab.size + 1:
        raise CorruptIndexError(f"{directory}: the postings and the vocabulary disagree")
    engine.install(arrays, vocab.first_rank)
    return engine, vocab


def _load_earlier(
    directory: Path, page_count: int, tokenizer: TokenizerConfig, engine: SparseBM25
) -> tuple[SparseBM25, Vocabulary]:
    counted = (directory / COUNTS_FILE).is_file() or not (directory / TOKENS_FILE).is_file()
    name = COUNTS_FILE if counted else TOKENS_FILE
    with gzip.open(directory / name, "rb") as fh:
        pages = json.loads(fh.read().decode("utf-8"))
    if not isinstance(pages, list) or len(pages) != page_count:
        raise CorruptIndexError(
            f"{directory}: {name} does not hold the {page_count} pages the manifest lists"
        )
    if counted:
        dicts = [{str(t): int(n) for t, n in page.items()} for page in pages]
    else:
        dicts = [dict(Counter(str(t) for t in page)) for page in pages]
    vocab = Vocabulary(tokenizer)
    counts = count_term_dicts(vocab, dicts)
    engine.append(counts, vocab.size)
    engine.compute(vocab.first_rank)
    return engine, vocab
