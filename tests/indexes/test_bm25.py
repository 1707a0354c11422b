"""BM25 index: golden scores, empty pages, incremental rebuild, scoping, persistence."""

from __future__ import annotations

import pytest

from scanrag.indexes.bm25 import BM25Index
from scanrag.indexes.tokenize import TokenizerConfig


@pytest.fixture
def golden_index(bm25_golden, make_document):
    index = BM25Index(**bm25_golden["params"])
    index.add([make_document("tiny.pdf", bm25_golden["pages"])])
    return index


@pytest.mark.parametrize("query", ["apple banana", "the", "Cherry DATE", "zebra", "banana"])
def test_scores_match_hand_computed_golden(golden_index, bm25_golden, query):
    expected = bm25_golden["scores"][query]
    hits = golden_index.search(query, k=10)
    assert len(hits) == 5
    by_page = {hit.page: hit.score for hit in hits}
    assert [by_page[p] for p in range(1, 6)] == pytest.approx(expected, abs=1e-12)
    # ranking: score descending, ties by page
    want = sorted(range(1, 6), key=lambda p: (-round(expected[p - 1], 12), p))
    assert [hit.page for hit in hits] == want
    assert [hit.rank for hit in hits] == [1, 2, 3, 4, 5]


def test_empty_page_scores_zero_and_is_kept(golden_index):
    hits = golden_index.search("apple", k=5)
    assert {hit.page: hit.score for hit in hits}[4] == 0.0


def test_all_empty_store_does_not_crash(make_document):
    index = BM25Index()
    index.add([make_document("blank.pdf", ["", "  ", "!!!"])])
    hits = index.search("anything", k=5)
    assert [(h.page, h.score) for h in hits] == [(1, 0.0), (2, 0.0), (3, 0.0)]


def test_incremental_add_equals_one_shot_build(corpus):
    one_shot, step = BM25Index(), BM25Index()
    one_shot.add(corpus)
    for document in corpus:
        step.add([document])
    for query in ("revenue", "light plants", "cell"):
        assert step.search(query, 10) == one_shot.search(query, 10)


def test_incremental_add_changes_existing_scores(corpus):
    """Statistics are store-wide, so adding a document re-weights pages already indexed."""
    index = BM25Index()
    index.add(corpus[:1])
    before = index.search("revenue", 1, doc_ids=[corpus[0].id])[0].score
    index.add(corpus[2:])  # more pages mention revenue: its idf drops
    after = index.search("revenue", 1, doc_ids=[corpus[0].id])[0].score
    assert after < before


def test_scoped_scores_use_store_statistics(corpus):
    index = BM25Index()
    index.add(corpus)
    everything = {(h.doc_id, h.page): h.score for h in index.search("revenue", 20)}
    scoped = index.search("revenue", 20, doc_ids=[corpus[2].id])
    assert {h.doc_id for h in scoped} == {corpus[2].id}
    for hit in scoped:
        assert hit.score == pytest.approx(everything[(hit.doc_id, hit.page)])


def test_tokenizer_options_change_terms(make_document):
    document = make_document("t.pdf", ["The THE the cat", "dog", "bird"])
    plain = BM25Index(tokenizer=TokenizerConfig.plain())
    plain.add([document])
    stop = BM25Index(tokenizer={"stopwords": "english"})
    stop.add([document])
    assert plain.search("the", 2)[0].score > 0
    assert all(h.score == 0 for h in stop.search("the", 2))
    assert stop.params()["tokenizer"]["stopwords"] == "english"


def test_invalid_parameters_rejected():
    with pytest.raises(ValueError, match="k1"):
        BM25Index(k1=0)
    with pytest.raises(ValueError, match="b must"):
        BM25Index(b=1.5)
    with pytest.raises(ValueError, match="pattern"):
        BM25Index(tokenizer={"pattern": "("})


def test_save_load_round_trip(tmp_path, corpus):
    index = BM25Index(k1=1.2, tokenizer=TokenizerConfig(min_length=2))
    index.add(corpus)
    index.save(tmp_path / "bm25")
    loaded = BM25Index.open(tmp_path / "bm25")
    assert loaded.params() == index.params()
    assert loaded.document_ids == index.document_ids
    for query in ("revenue", "light"):
        assert loaded.search(query, 10) == index.search(query, 10)


def test_query_mode_strips_answer_instructions(make_document):
    filler = ["Cats sleep.", "Dogs bark.", "Birds sing.", "Fish swim."]
    document = make_document(
        "q.pdf", ["Round answers to two decimal places.", "Revenue grew.", *filler]
    )
    question = "What was the revenue? Round your answer to two decimal places."
    raw = BM25Index(query_mode="raw")
    raw.add([document])
    assert raw.search(question, 1)[0].page == 1  # the instruction words win
    stripped = BM25Index()  # default: strip+stmt
    stripped.add([document])
    assert stripped.search(question, 1)[0].page == 2
    assert stripped.manifest()["extra"]["query_mode"] == "strip+stmt"


def test_page_heading_is_indexed_as_a_field():
    from scanrag.schemas import BBox, Block, Document, Page

    def page(number: int, title: str, body: str) -> Page:
        block = Block(kind="text", bbox=BBox(x1=0.1, y1=0.05, x2=0.9, y2=0.1), text=title)
        return Page(number=number, width=612, height=792, text=f"{title}\n{body}", blocks=[block])

    document = Document(
        id="f",
        name="f.pdf",
        sha256="1" * 64,
        num_pages=6,
        pages=[
            page(1, "Balance sheets", "cash 10 debt 4 balance sheet items"),
            page(2, "Notes", "the balance sheet lists cash; see the balance sheet"),
            *(page(n, f"Other {n}", "unrelated words here") for n in range(3, 7)),
        ],
    )
    plain = BM25Index(page_text="text")
    plain.add([document])
    heading = BM25Index(page_text="heading+text")
    heading.add([document])
    assert plain.search("balance sheet", 1)[0].page == 2
    assert heading.search("balance sheet", 1)[0].page == 1
    assert heading.params()["page_text"] == "heading+text"


def test_saved_index_checks_page_text(tmp_path, corpus):
    from scanrag.indexes.errors import IndexMismatchError

    index = BM25Index(page_text="text")
    index.add(corpus)
    index.save(tmp_path / "b")
    again = BM25Index(page_text="text", query_mode="raw").load(tmp_path / "b", corpus)
    assert again.search("revenue", 3) == BM25Index(page_text="text", query_mode="raw").load(
        tmp_path / "b"
    ).search("revenue", 3)
    with pytest.raises(IndexMismatchError, match="page_text"):
        BM25Index().load(tmp_path / "b")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"page_text": "tables"}, "unknown page_text"),
        ({"query_mode": "expand"}, "unknown query_mode"),
        ({"tokenizer": {"stemming": True}}, "tokenizer"),
    ],
)
def test_bad_parameters_rejected(params, message):
    with pytest.raises(ValueError, match=message):
        BM25Index(**params)
    with pytest.raises(ValueError, match=message):
        BM25Index.check_params(params)


def test_statistics_are_rank_bm25s_own(corpus):
    """The engine's statistics are those ``BM25Okapi`` computes from the token lists: the same
    idf per term (the mean summed in first-seen order), after an incremental add too."""
    from scanrag.indexes.bm25_reference import reference_okapi

    index = BM25Index()
    index.add(corpus[:1])
    index.add(corpus[1:])  # incremental: pages appended, statistics rebuilt
    reference = reference_okapi(index, corpus)
    terms = index._vocab.term_strings()
    assert dict(zip(terms, index.engine.idf.tolist(), strict=True)) == reference.idf
    assert index.engine.average_idf == reference.average_idf
    assert index.engine.lengths.tolist() == reference.doc_len


def test_indexes_saved_by_earlier_versions_still_load(tmp_path, corpus):
    """Earlier versions saved each page's term counts (``counts.json.gz``), and before that its
    terms (``tokens.json.gz``); such folders load to the same scores as a fresh build."""
    import gzip
    import hashlib
    import json
    from collections import Counter

    from scanrag.indexes.bm25 import tokenize_pages
    from scanrag.indexes.bm25_store import COUNTS_FILE, TOKENS_FILE

    index = BM25Index()
    index.add(corpus)
    tokens = list(tokenize_pages(index.tokenizer, corpus, index.page_text))
    for name, pages in ((COUNTS_FILE, [dict(Counter(t)) for t in tokens]), (TOKENS_FILE, tokens)):
        folder = index.save(tmp_path / name)
        payload = folder / "payload"
        for old in payload.iterdir():
            old.unlink()
        with gzip.GzipFile(payload / name, "wb", mtime=0) as fh:
            fh.write(json.dumps(pages).encode("utf-8"))
        manifest = json.loads((folder / "manifest.json").read_text())
        digest = hashlib.sha256((payload / name).read_bytes()).hexdigest()
        manifest["files"] = {f"payload/{name}": digest}
        (folder / "manifest.json").write_text(json.dumps(manifest))
        loaded = BM25Index.open(folder)
        for query in ("revenue", "light plants", "annual revenue report"):
            assert loaded.search(query, 8) == index.search(query, 8)
        loaded.add([corpus[0]])  # present already: nothing changes
        assert loaded.engine.average_idf == index.engine.average_idf


def test_an_index_saved_by_the_engine_with_stored_contributions_loads(corpus):
    """Saved by the engine before issue 33 (``weights.npy`` of float64 contributions, counts
    as uint16, first-seen keys as page << 24 | position: tests/indexes/golden/
    bm25_saved_0bad45f, written by commit 0bad45f): it loads and scores what a fresh build
    scores, and an add on top of it equals the same add on a fresh build."""
    from .conftest import GOLDEN, build_document

    fresh = BM25Index()
    fresh.add(corpus)
    loaded = BM25Index.open(GOLDEN / "bm25_saved_0bad45f")
    for query in ("revenue", "light plants", "annual revenue report", "the cell", "2023"):
        assert loaded.search(query, 8) == fresh.search(query, 8)
    assert loaded.engine.average_idf == fresh.engine.average_idf
    assert loaded.postings_by_term() == fresh.postings_by_term()
    extra = build_document("d.pdf", ["Light revenue grew.", "Plants and cells."])
    loaded.add([extra])
    fresh.add([extra])
    assert loaded.postings_by_term() == fresh.postings_by_term()
    assert loaded.search("light revenue", 8) == fresh.search("light revenue", 8)
