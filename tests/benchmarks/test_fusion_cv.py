"""The cross-set protocol of ``benchmarks/fusion_cv.py`` on hand-made component lists.

Two tiny "dev sets" are built so that one fusion rule wins on each; the protocol must report
on each set the candidate chosen on the other, pool the two halves for the union, and break
full ties by the declared candidate order.
"""

from __future__ import annotations

import pytest

from benchmarks.fusion_cv import Candidate, Protocol, bootstrap, candidates, mean
from benchmarks.retrieval import DevSet
from scanrag.schemas import PageHit, Sample


def _hits(*entries: tuple[int, float]) -> list[PageHit]:
    return [PageHit(doc_id="d", page=p, score=s, rank=r) for r, (p, s) in enumerate(entries, 1)]


def _set(name: str, gold: list[int]) -> DevSet:
    samples = [
        Sample(id=f"{name}{i}", doc_ids=["x.pdf"], question="q?", gold_pages=[g])
        for i, g in enumerate(gold)
    ]
    return DevSet(name, samples, {}, [])


# bm25 sure of page 1 (far ahead), dense mildly prefers page 2 with its sentences, page 3 by
# the whole question. Gold page 1 on set "a" (zconf follows bm25's confidence), gold page 2
# on set "b".
BM25 = _hits((1, 30.0), (2, 1.0), (3, 0.0), (4, 0.0))
DENSE_Q = _hits((3, 0.60), (2, 0.58), (1, 0.10), (4, 0.0))
DENSE_S = _hits((2, 0.90), (3, 0.50), (1, 0.45), (4, 0.0))


def _protocol() -> Protocol:
    sets = [_set("a", [1, 1]), _set("b", [2, 2])]
    parts = {
        ds.name: {
            "bm25": {s.id: BM25 for s in ds.samples},
            "dense": {s.id: DENSE_Q for s in ds.samples},
            "dense:sentences": {s.id: DENSE_S for s in ds.samples},
        }
        for ds in sets
    }
    return Protocol(sets, parts, "bm25")


def test_each_set_reports_the_candidate_chosen_on_the_other():
    proto = _protocol()
    cands = candidates(weighted=False)
    result = proto.cross(cands)
    scored = result["scored"]
    for name, other in (("a", "b"), ("b", "a")):
        chosen = result["chosen"][name]
        best_other = max(mean(scored[c][other])["recall@1"] for c in cands)
        assert mean(scored[chosen][other])["recall@1"] == best_other
        assert result["rows"][name] == scored[chosen][name]
    assert result["rows"]["union"] == result["rows"]["a"] + result["rows"]["b"]
    # only rrf over the sentence view puts page 2 first (set b's gold): chosen on b, it is
    # reported on a, where it is wrong; set a ties everywhere else and the first one is taken
    assert result["chosen"]["a"] == Candidate("rrf", "sentences")
    assert result["chosen"]["b"] == Candidate("zconf", "question")
    assert mean(result["rows"]["a"])["recall@1"] == 0.0


def test_full_ties_go_to_the_first_declared_candidate():
    proto = _protocol()
    same = [Candidate("minmax", "question"), Candidate("minmax", "question", 0.5)]
    result = proto.cross(same)
    assert result["chosen"]["a"] is same[0] and result["chosen"]["b"] is same[0]


def test_candidate_families():
    equal = candidates(weighted=False)
    assert len(equal) == 8 and {c.dense_weight for c in equal} == {0.5}
    assert equal[0] == Candidate("zconf", "question")
    assert len(candidates(weighted=True)) == 40
    assert Candidate("rrf", "sentences", 0.3).label == "rrf, dense by sentences, dense weight 0.3"


def test_bootstrap_interval():
    low, high = bootstrap([0.0, 1.0, 0.0, 1.0], rounds=500)
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    assert bootstrap([0.2] * 5, rounds=100) == pytest.approx((0.2, 0.2))
    assert bootstrap([0.0, 1.0], rounds=200) == bootstrap([0.0, 1.0], rounds=200)  # seeded
    nan_low, _ = bootstrap([], rounds=10)
    assert nan_low != nan_low
