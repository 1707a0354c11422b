"""Building the sparse BM25 engine on disk, for corpora whose postings do not fit in memory.

While pages are counted, each chunk's (term, page, count) entries are appended to ``BUCKETS``
files by ``term % BUCKETS`` (a term's entries all land in one file, in page order). Assembly
then reads one bucket at a time, sorts it by term (stably, so pages stay ascending) and appends
its postings to ``docs.npy`` / ``tf.npy``; term ids are renumbered so that bucket after bucket
is one contiguous run of rows (the vocabulary is renumbered with them). Files are written with
plain writes and read back with plain reads, never through a mapping, so the build's memory is
one bucket plus the vocabulary, whatever the corpus; the finished arrays are memory-mapped (a
query reads only its terms' rows). The scores are the in-memory engine's
(``scanrag.indexes.bm25_sparse``), float for float.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from scanrag.indexes.bm25_counts import Counts, release_free_memory, smallest_uint
from scanrag.indexes.bm25_sparse import SparseBM25
from scanrag.indexes.bm25_vocab import Vocabulary

BUCKETS = 64
SLICE = 1 << 20  # postings of an existing engine spilled at once
_TERM, _PAGE, _TF = np.int32, np.int32, np.uint32


@dataclass
class Spill:
    """Counted pages written to bucket files (see the module docstring)."""

    folder: Path
    pages: int = 0  # pages spilled so far (their rows are 0..pages-1)
    entries: int = 0
    largest_tf: int = 0
    lengths: list[np.ndarray] = field(default_factory=list)
    _files: dict[tuple[int, str], BinaryIO] = field(default_factory=dict)

    @classmethod
    def create(cls, parent: str | Path | None) -> Spill:
        folder = Path(tempfile.mkdtemp(prefix="scanrag-bm25-", dir=parent))
        spill = cls(folder)
        weakref.finalize(spill, shutil.rmtree, str(folder), True)
        return spill

    def add(self, counts: Counts) -> None:
        """Append ``counts``'s pages (after those already spilled); empties ``counts``."""
        for terms, rows, tf, lengths in counts.take():
            self._append(terms, rows.astype(_PAGE) + _PAGE(self.pages), tf)
            self.pages += int(lengths.size)
            self.lengths.append(lengths)

    def add_postings(self, engine: SparseBM25) -> None:
        """Spill an existing engine's postings (its pages become rows 0.., as they were)."""
        if self.pages:
            raise ValueError("existing postings go first")
        step = SLICE
        for start in range(0, engine.docs.size, step):
            stop = min(start + step, engine.docs.size)
            positions = np.arange(start, stop, dtype=np.int64)
            terms = np.searchsorted(engine.indptr, positions, side="right") - 1
            self._append(terms, np.asarray(engine.docs[start:stop]), engine.tf[start:stop])
        self.pages = engine.page_count
        self.lengths.append(np.asarray(engine.lengths, dtype=np.int64))

    def _append(self, terms: np.ndarray, pages: np.ndarray, tf: np.ndarray) -> None:
        buckets = terms % BUCKETS
        order = np.argsort(buckets, kind="stable")
        bounds = np.searchsorted(buckets[order], np.arange(BUCKETS + 1))
        for b in np.flatnonzero(np.diff(bounds)).tolist():
            sel = order[bounds[b] : bounds[b + 1]]
            self._file(b, "terms").write(terms[sel].astype(_TERM).tobytes())
            self._file(b, "pages").write(pages[sel].astype(_PAGE).tobytes())
            self._file(b, "tf").write(tf[sel].astype(_TF).tobytes())
        self.entries += int(terms.size)
        if tf.size:
            self.largest_tf = max(self.largest_tf, int(tf.max()))

    def _file(self, bucket: int, kind: str) -> BinaryIO:
        handle = self._files.get((bucket, kind))
        if handle is None:
            handle = open(self.folder / f"{bucket}.{kind}", "ab")  # noqa: SIM115  (kept open)
            self._files[(bucket, kind)] = handle
        return handle

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def _read(self, bucket: int, kind: str, dtype: Any) -> np.ndarray:
        path = self.folder / f"{bucket}.{kind}"
        return np.fromfile(path, dtype=dtype) if path.is_file() else np.zeros(0, dtype=dtype)

    # -- assembly --------------------------------------------------------------------------
    def assemble(self, engine: SparseBM25, vocab: Vocabulary) -> None:
        """Install the spilled postings in ``engine`` as memory-mapped arrays and renumber
        ``vocab`` to match; the files stay in this spill's folder."""
        self.close()
        n_terms = vocab.size
        # new id order: bucket 0's terms ascending, then bucket 1's...
        old_of_new = np.concatenate([np.arange(b, n_terms, BUCKETS) for b in range(BUCKETS)])
        df_new = np.zeros(n_terms, dtype=np.int64)
        out = self.folder / "engine"
        out.mkdir(exist_ok=True)
        docs = _NpyAppender(out / "docs.npy", _PAGE, self.entries)
        tf = _NpyAppender(out / "tf.npy", smallest_uint(self.largest_tf), self.entries)
        at = 0
        for b in range(BUCKETS):
            terms = self._read(b, "terms", _TERM)
            order = np.argsort(terms, kind="stable")
            docs.write(self._read(b, "pages", _PAGE)[order])
            tf.write(self._read(b, "tf", _TF)[order])
            count = (n_terms - b + BUCKETS - 1) // BUCKETS if b < n_terms else 0
            df_new[at : at + count] = np.bincount(terms // BUCKETS, minlength=count)[:count]
            at += count
            for kind in ("terms", "pages", "tf"):
                (self.folder / f"{b}.{kind}").unlink(missing_ok=True)
            del terms, order
            release_free_memory()
        docs.close()
        tf.close()
        new_of_old = np.empty(n_terms, dtype=np.int64)
        new_of_old[old_of_new] = np.arange(n_terms, dtype=np.int64)
        vocab.renumber(new_of_old)
        engine.indptr = np.concatenate([[0], np.cumsum(df_new)]).astype(np.int64)
        engine.lengths = np.concatenate(self.lengths).astype(np.int64)
        for name in ("docs", "tf"):
            setattr(engine, name, np.load(out / f"{name}.npy", mmap_mode="r"))
        engine.compute(vocab.first_rank)


class _NpyAppender:
    """A ``.npy`` file of known length written front to back with plain writes."""

    def __init__(self, path: Path, dtype: Any, length: int) -> None:
        self.handle = open(path, "wb")  # noqa: SIM115  (closed by close())
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False}
        np.lib.format.write_array_header_1_0(self.handle, {**header, "shape": (length,)})
        self.dtype, self.left = np.dtype(dtype), length

    def write(self, values: np.ndarray) -> None:
        self.handle.write(np.ascontiguousarray(values, dtype=self.dtype).tobytes())
        self.left -= int(values.size)

    def close(self) -> None:
        self.handle.close()
        if self.left:
            raise RuntimeError(f"{self.left} values missing from a spilled array")
