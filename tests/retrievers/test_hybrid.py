"""The hybrid retriever: reciprocal rank and score-aware fusion, checked by hand."""

from __future__ import annotations

import pytest

from scanrag.indexes.bm25 import BM25Index
from scanrag.retrievers.fusion import fuse, merge_views, normalized_scores, rrf_fuse
from scanrag.retrievers.hybrid import HybridRetriever
from scanrag.retrievers.views import search_views
from scanrag.schemas import BBox, PageHit, Region


def _hits(*keys: tuple[str, int]) -> list[PageHit]:
    return [PageHit(doc_id=d, page=p, score=0.0, rank=r) for r, (d, p) in enumerate(keys, 1)]


class Fixed:
    """A retriever returning a fixed ranking, recording the k it was asked for."""

    exhaustive = True

    def __init__(self, name: str, keys: list[tuple[str, int]]) -> None:
        self.name, self.keys, self.asked = name, keys, []

    def add(self, documents) -> None:
        pass

    def search(self, query, k, doc_ids=None):
        self.asked.append(k)
        return [] if not query.strip() else _hits(*self.keys[:k])

    def search_batch(self, queries, k, doc_ids=None):
        return [self.search(q, k, doc_ids) for q in queries]

    def manifest(self):
        return {"retriever": self.name}


def test_weighted_fusion_by_hand():
    a = _hits(("d", 1), ("d", 2), ("d", 3))
    b = _hits(("d", 3), ("d", 1))
    fused = rrf_fuse([a, b], weights=[1.0, 2.0], k_rrf=60, k=10)
    expected = {
        ("d", 1): 1 / 61 + 2 / 62,  # 0.048651
        ("d", 2): 1 / 62,  # 0.016129
        ("d", 3): 1 / 63 + 2 / 61,  # 0.048660
    }
    assert [(h.doc_id, h.page) for h in fused] == [("d", 3), ("d", 1), ("d", 2)]
    for hit in fused:
        assert hit.score == pytest.approx(expected[(hit.doc_id, hit.page)], abs=1e-15)
    assert [h.rank for h in fused] == [1, 2, 3]


def test_fused_hits_keep_the_components_region_proposals():
    box = Region(page=1, bbox=BBox(x1=0.1, y1=0.1, x2=0.5, y2=0.3), element_type="patch")
    other = Region(page=1, bbox=BBox(x1=0.6, y1=0.6, x2=0.9, y2=0.9), element_type="patch")
    a = [PageHit(doc_id="d", page=1, score=1.0, rank=1, regions=[box])]
    b = [
        PageHit(doc_id="d", page=2, score=1.0, rank=1),
        PageHit(doc_id="d", page=1, score=0.5, rank=2, regions=[box, other]),
    ]
    fused = {(h.doc_id, h.page): h.regions for h in rrf_fuse([a, b], [1.0, 1.0], 60, 10)}
    assert fused == {("d", 1): [box, other], ("d", 2): []}


def test_equal_sums_tie_break_by_doc_then_page():
    a = _hits(("y", 2), ("x", 5))
    b = _hits(("x", 5), ("y", 2))
    fused = rrf_fuse([a, b], [1.0, 1.0], 60, 10)
    assert fused[0].score == fused[1].score == pytest.approx(1 / 61 + 1 / 62)
    assert [(h.doc_id, h.page) for h in fused] == [("x", 5), ("y", 2)]


def test_k_rrf_and_cut():
    fused = rrf_fuse([_hits(("d", 1), ("d", 2), ("d", 3))], [1.0], k_rrf=1, k=2)
    assert [h.score for h in fused] == pytest.approx([1 / 2, 1 / 3])


def test_retriever_asks_components_for_depth_and_fuses():
    a = Fixed("a", [("d", 1), ("d", 2), ("d", 3), ("d", 4)])
    b = Fixed("b", [("d", 4), ("d", 3)])
    hybrid = HybridRetriever([a, b], weights=[1, 3], k_rrf=10, depth=3, fusion="rrf")
    hits = hybrid.search("q", 2)
    assert a.asked == [3] and b.asked == [3]
    # d4: 3/11 = 0.2727 (a's depth-3 list does not reach it); d3: 1/13 + 3/12 = 0.3269
    assert [(h.page, round(h.score, 4)) for h in hits] == [(3, 0.3269), (4, 0.2727)]
    hybrid.search("q", 5)
    assert a.asked[-1] == 5  # k above depth: components asked for k


def test_blank_query_and_bad_k():
    hybrid = HybridRetriever([Fixed("a", [("d", 1)])])
    assert hybrid.search(" ", 3) == []
    with pytest.raises(ValueError):
        hybrid.search("q", 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"retrievers": []}, "at least one"),
        ({"weights": [1.0]}, "1 weights given for 2"),
        ({"weights": [0, 0]}, "not all 0"),
        ({"weights": [-1, 1]}, ">= 0"),
        ({"k_rrf": 0}, "k_rrf"),
        ({"depth": 0}, "depth"),
    ],
)
def test_invalid_settings(kwargs, message):
    settings = {"retrievers": [Fixed("a", []), Fixed("b", [])], **kwargs}
    with pytest.raises(ValueError, match=message):
        HybridRetriever(**settings)


def test_components_by_name_mapping_or_instance():
    bm25 = BM25Index()
    hybrid = HybridRetriever(["bm25", {"name": "bm25", "k1": 1.2}, bm25])
    assert [c.name for c in hybrid.components] == ["bm25", "bm25", "bm25"]
    assert hybrid.components[1].k1 == 1.2 and hybrid.components[2] is bm25
    with pytest.raises(ValueError, match="'name'"):
        HybridRetriever([{"k1": 1.0}])
    with pytest.raises(TypeError):
        HybridRetriever([42])


def test_save_load_round_trip(tmp_path, corpus):
    hybrid = HybridRetriever(["bm25", "example_tfidf"], weights=[1, 2])
    hybrid.add(corpus)
    hybrid.save(tmp_path / "h")
    again = HybridRetriever(["bm25", "example_tfidf"], weights=[1, 2]).load(tmp_path / "h", corpus)
    query = "revenue in Europe"
    assert again.search(query, 5) == hybrid.search(query, 5)
    from scanrag.indexes.errors import IndexMismatchError

    with pytest.raises(IndexMismatchError, match="hybrid index"):
        HybridRetriever(["bm25", "example_tfidf"]).load(tmp_path / "h")


def test_component_without_save_is_reported(tmp_path):
    with pytest.raises(TypeError, match="no save"):
        HybridRetriever([Fixed("a", [])]).save(tmp_path / "h")


def _scored(*entries: tuple[str, int, float]) -> list[PageHit]:
    return [PageHit(doc_id=d, page=p, score=s, rank=r) for r, (d, p, s) in enumerate(entries, 1)]


def test_minmax_fusion_by_hand():
    lexical = _scored(("d", 1, 10.0), ("d", 2, 6.0), ("d", 3, 2.0))  # → 1, 0.5, 0
    semantic = _scored(("d", 3, 0.9), ("d", 4, 0.5), ("d", 1, 0.4))  # → 1, 0.2, 0
    fused = fuse([lexical, semantic], [1.0, 1.0], "minmax", k=10)
    # d1: 1 + 0 = 1; d3: 0 + 1 = 1; d2: 0.5 + 0 (missing: the list's minimum); d4: 0 + 0.2
    assert [(h.page, round(h.score, 12)) for h in fused] == [(1, 1.0), (3, 1.0), (2, 0.5),
                                                             (4, 0.2)]  # fmt: skip
    weighted = fuse([lexical, semantic], [0.4, 0.6], "minmax", k=2)
    assert [(h.page, round(h.score, 12)) for h in weighted] == [(3, 0.6), (1, 0.4)]


def test_rrf_ignores_score_margins_minmax_keeps_them():
    """One retriever is sure (its top page far ahead), the other hesitates: rank fusion
    cannot tell, score fusion follows the confident one."""
    sure = _scored(("d", 1, 30.0), ("d", 2, 1.0), ("d", 3, 0.0))
    unsure = _scored(("d", 2, 0.51), ("d", 1, 0.50), ("d", 3, 0.0))
    assert fuse([sure, unsure], [1, 1], "rrf", k=1)[0].page == 1  # tie → page order
    assert fuse([unsure, sure], [1, 1], "minmax", k=1)[0].page == 1
    z = fuse([sure, unsure], [1, 1], "z", k=3)
    assert z[0].page == 1 and z[0].score > z[1].score


def test_z_fusion_by_hand():
    hits = _scored(("d", 1, 3.0), ("d", 2, 1.0))  # mean 2, std 1 → +1, -1
    fused = fuse([hits, _scored(("d", 3, 5.0))], [1.0, 1.0], "z", k=10)
    # the one-hit list has std 0: it adds 0; d3 is missing from the first list → its minimum
    assert [(h.page, h.score) for h in fused] == [(1, 1.0), (2, -1.0), (3, -1.0)]
    assert normalized_scores([], "z") == ({}, 0.0)


def test_flat_lists_add_nothing():
    flat = _scored(("d", 1, 0.0), ("d", 2, 0.0))
    other = _scored(("d", 2, 2.0), ("d", 1, 1.0))
    assert [h.page for h in fuse([flat, other], [5.0, 1.0], "minmax", k=2)] == [2, 1]


def test_hybrid_defaults_to_zconf_and_records_the_rule():
    a = Fixed("a", [("d", 1), ("d", 2)])
    hybrid = HybridRetriever([a, Fixed("b", [("d", 2)])])
    assert hybrid.fusion == "zconf" and hybrid.describe()["fusion"] == "zconf"
    assert hybrid.describe()["views"] == ["query", "query"]
    with pytest.raises(ValueError, match="unknown fusion 'max'; use one of zconf, minmax, z, rrf"):
        HybridRetriever([a], fusion="max")  # type: ignore[arg-type]


def test_zconf_fusion_by_hand():
    """Each list votes with its z-scores times the z-score of its own best page."""
    sure = _scored(("d", 1, 9.0), ("d", 2, 0.0), ("d", 3, 0.0))  # mean 3, std √18
    even = _scored(("d", 2, 2.0), ("d", 3, 0.0))  # z: +1, -1; its best page has z 1
    z1 = 6 / 18**0.5  # the sure list's best z (≈ 1.414); its other pages have z = -z1 / 2
    fused = {h.page: h.score for h in fuse([sure, even], [1.0, 1.0], "zconf", k=10)}
    assert fused[1] == pytest.approx(z1 * z1 + 1 * -1)  # missing from `even`: its lowest z
    assert fused[2] == pytest.approx(z1 * (-z1 / 2) + 1 * 1)
    assert fused[3] == pytest.approx(z1 * (-z1 / 2) + 1 * -1)
    assert [h.page for h in fuse([sure, even], [1.0, 1.0], "zconf", k=3)] == [1, 2, 3]
    # the same lists with plain z-scores: the even list's page 2 ties with page 1
    plain = {h.page: h.score for h in fuse([sure, even], [1.0, 1.0], "z", k=10)}
    assert plain[1] == pytest.approx(z1 - 1) and plain[2] == pytest.approx(-z1 / 2 + 1)


def test_zconf_flat_or_empty_lists_add_nothing():
    flat = _scored(("d", 1, 0.5), ("d", 2, 0.5))
    other = _scored(("d", 2, 2.0), ("d", 1, 1.0))
    assert [h.page for h in fuse([flat, other], [5.0, 1.0], "zconf", k=2)] == [2, 1]
    assert [h.page for h in fuse([[], other], [1.0, 1.0], "zconf", k=2)] == [2, 1]
    assert fuse([[], []], [1.0, 1.0], "zconf", k=2) == []


def test_merge_views_keeps_each_pages_best_score():
    first = _scored(("d", 1, 0.2), ("d", 2, 0.1))
    second = _scored(("d", 3, 0.9), ("d", 1, 0.5), ("d", 4, 0.05))
    merged = merge_views([first, second], k=3)
    assert [(h.page, h.score, h.rank) for h in merged] == [(3, 0.9, 1), (1, 0.5, 2), (2, 0.1, 3)]
    assert merge_views([first], k=1) == first[:1]
    assert merge_views([[], []], k=3) == []


class Recording(Fixed):
    """A fixed ranking whose page scores depend on the query text; records the queries."""

    def __init__(self, name: str, scores: dict[str, list[tuple[int, float]]]) -> None:
        super().__init__(name, [])
        self.scores, self.queries = scores, []

    def search(self, query, k, doc_ids=None):
        self.queries.append(query)
        ranked = sorted(self.scores.get(query, []), key=lambda e: -e[1])[:k]
        return [PageHit(doc_id="d", page=p, score=s, rank=r) for r, (p, s) in enumerate(ranked, 1)]


QUESTION = "What is the FY2019 DPO? DPO is defined as 365 * AP / COGS. Round your answer."


def test_dense_components_search_sentence_by_sentence():
    dense = Recording(
        "dense",
        {"What is the FY2019 DPO?": [(1, 0.6), (2, 0.1)], "DPO is defined as 365 * AP / COGS.":
         [(2, 0.7), (1, 0.3)]},
    )  # fmt: skip
    lexical = Recording("bm25", {QUESTION: [(1, 3.0), (2, 1.0), (3, 0.0)]})
    hybrid = HybridRetriever([lexical, dense])
    assert hybrid.views == ["query", "sentences"]
    hits = hybrid.search(QUESTION, 3)
    assert lexical.queries == [QUESTION]
    assert dense.queries == ["What is the FY2019 DPO?", "DPO is defined as 365 * AP / COGS."]
    assert {h.page for h in hits} == {1, 2, 3}
    # each page keeps its best sentence's score: page 2 0.7, page 1 0.6
    (merged,) = search_views(dense, [QUESTION], "sentences", 10, None)
    assert [(h.page, h.score, h.rank) for h in merged] == [(2, 0.7, 1), (1, 0.6, 2)]
    again = HybridRetriever([lexical, dense], views=["query", "query"])
    dense.queries.clear()
    again.search(QUESTION, 3)
    assert dense.queries == [QUESTION]


def test_sentence_views_of_a_batch_stay_with_their_question():
    dense = Recording("dense", {"A?": [(1, 0.9)], "B.": [(2, 0.8)], "C?": [(3, 0.7)]})
    hybrid = HybridRetriever([dense], views=["sentences"])
    results = hybrid.search_batch(["A? B.", "C?", " "], 5)
    assert [[h.page for h in r] for r in results] == [[1, 2], [3], []]


@pytest.mark.parametrize(
    ("views", "message"),
    [(["query"], "one entry per retriever"), ("query", "one entry per retriever"),
     (5, "one entry per retriever"),
     (["query", "words"], "unknown view 'words'")],
)  # fmt: skip
def test_invalid_views(views, message):
    with pytest.raises(ValueError, match=message):
        HybridRetriever([Fixed("a", []), Fixed("b", [])], views=views)
