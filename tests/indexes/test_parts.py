"""Indexes built in parts (slices of a corpus indexed apart, then merged) equal whole builds."""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from scanrag.indexes.bm25 import BM25Index
from scanrag.schemas import Document


def _parts(make: Callable[[], BM25Index], docs: Sequence[Document], cuts: Sequence[int]) -> list:
    """``build_part`` on each slice, each by a fresh index, sent through pickle as a worker
    would send it."""
    bounds = [0, *cuts, len(docs)]
    return [
        pickle.loads(pickle.dumps(make().build_part(docs[a:b])))
        for a, b in itertools.pairwise(bounds)
    ]


@pytest.mark.parametrize("cuts", [[], [1], [1, 2]])
def test_bm25_from_parts_is_bit_identical(corpus: list[Document], cuts: list[int]) -> None:
    whole = BM25Index(k1=1.2, b=0.7)
    whole.add(corpus)
    merged = BM25Index(k1=1.2, b=0.7)
    merged.add_parts(corpus, _parts(lambda: BM25Index(k1=1.2, b=0.7), corpus, cuts))
    assert merged.postings_by_term() == whole.postings_by_term()  # counts, contributions
    assert merged.engine.average_idf == whole.engine.average_idf  # idf summed in one order
    assert merged.engine.lengths.tolist() == whole.engine.lengths.tolist()
    assert merged.manifest()["documents"] == whole.manifest()["documents"]
    for query in ("revenue plants", "light", "nothing-matches"):
        assert merged.search(query, 5) == whole.search(query, 5)
        scope = [corpus[1].id]
        assert merged.search(query, 2, scope) == whole.search(query, 2, scope)


def test_bm25_parts_of_an_all_empty_corpus(make_document: Callable[..., Document]) -> None:
    docs = [make_document("e.pdf", ["", "  "])]
    merged = BM25Index()
    merged.add_parts(docs, [BM25Index().build_part(docs)])
    assert not merged.engine.scored and merged.search("anything", 3)[0].score == 0.0


def test_parts_must_cover_the_documents_in_order(corpus: list[Document]) -> None:
    parts = _parts(BM25Index, corpus, [1])
    with pytest.raises(ValueError, match="cover the documents"):
        BM25Index().add_parts(list(reversed(corpus)), parts)
    full = BM25Index()
    full.add(corpus[:1])
    with pytest.raises(ValueError, match="empty index"):
        full.add_parts(corpus, parts)


def test_a_kind_without_the_hooks_says_so(corpus: list[Document]) -> None:
    from scanrag.indexes.base import PageIndex

    class Plain(BM25Index):
        kind = "plain"
        _build_part = PageIndex._build_part  # type: ignore[assignment]

    assert BM25Index().builds_in_parts and not Plain().builds_in_parts
    with pytest.raises(NotImplementedError, match="cannot be built in parts"):
        Plain().build_part(corpus)


@pytest.mark.model
def test_dense_from_parts_matches_a_whole_build(corpus: list[Document]) -> None:
    from scanrag.indexes.dense import DenseIndex

    whole = DenseIndex()
    whole.add(corpus)
    merged = DenseIndex()
    merged.add_parts(corpus, _parts(DenseIndex, corpus, [2]))  # type: ignore[arg-type]
    assert np.array_equal(merged._chunk_rows, whole._chunk_rows)
    assert np.allclose(merged.store.vectors, whole.store.vectors, atol=1e-5)
    for query in ("revenue of the company", "energy in plants"):
        ours = [(h.doc_id, h.page) for h in merged.search(query, 4)]
        assert ours == [(h.doc_id, h.page) for h in whole.search(query, 4)]
