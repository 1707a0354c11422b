"""The ColPali multi-vector index end to end with tiny random ColQwen2/ColPali models.

The models are built offline (``scanrag.indexes.colpali_tiny``): real processors, real forward
passes, random weights. Rankings are meaningless, so the tests check the plumbing against
independent computations: stored vectors vs. a fresh encoding, MaxSim vs. brute force, regions vs. a
patch whose similarity is boosted by hand, patch layout vs. the processor's pixel order.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from scanrag.documents.errors import RenderError
from scanrag.indexes.colpali import REGION_TYPE, ColPaliIndex
from scanrag.indexes.colpali_tiny import tiny_model_dir
from scanrag.indexes.errors import CorruptIndexError, IndexMismatchError
from scanrag.schemas import Document

pytestmark = pytest.mark.model
DPI = 36
TEXTS = {
    "alpha.pdf": ["Photosynthesis turns sunlight into energy.", "", "Revenue grew in Europe."],
    "beta.pdf": ["The telescope saw a galaxy.", "Black holes bend light."],
}
QUERY = "sunlight energy"


def write_pdf(path: Path, texts: list[str]) -> Path:
    import pymupdf

    pdf = pymupdf.open()
    for text in texts:
        page = pdf.new_page(width=595, height=842)
        if text:
            page.insert_textbox(pymupdf.Rect(56, 72, 540, 300), text, fontsize=20)
    pdf.save(path)
    pdf.close()
    return path


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> list[Document]:
    from scanrag.documents import ingest_pdf

    folder = tmp_path_factory.mktemp("colpali-pdfs")
    return [ingest_pdf(write_pdf(folder / n, t), ocr="never") for n, t in TEXTS.items()]


@pytest.fixture(scope="module")
def qwen_dir() -> Path:
    return tiny_model_dir("colqwen2")


@pytest.fixture(scope="module")
def index(qwen_dir, docs) -> ColPaliIndex:
    built = ColPaliIndex(str(qwen_dir), dpi=DPI, batch_size=2, device="cpu")
    built.add(docs)
    return built


def brute_force(index: ColPaliIndex, query: str, row: int) -> float:
    q = index.encode_query(query).vectors
    page = index.store.page(row).astype(np.float32)
    return float((q @ page.T).max(axis=1).sum())


def test_pages_are_stored_as_fp16_with_their_patch_grids(index, docs):
    assert index.page_count == 5 and len(index.store) == 5
    assert index.device == index.scorer.device == "cpu"
    assert index.store.vectors.dtype == np.float16 and index.store.dim == 128
    for row in range(5):
        patches, rows, cols = index.page_grid(row)
        assert rows * cols == len(patches) > 0
        assert rows > cols  # portrait page: more patch rows than columns
    assert not list(Path(index._tmp.name).rglob("*.png"))  # private renders are deleted
    # the stored vectors are the model's output for the rendered page
    image_path = index.renderer().render(docs[0], 1, DPI)
    from PIL import Image

    with Image.open(image_path) as image:
        (fresh,) = index.encoder.encode_images([image.convert("RGB")])
    assert np.allclose(fresh.vectors.astype(np.float32), index.store.page(0), atol=2e-3)
    stored_tokens = index._patch_tokens[index._patch_offsets[0] : index._patch_offsets[1]]
    assert np.array_equal(fresh.grid.tokens, stored_tokens)


def test_search_scores_are_maxsim(index, docs):
    hits = index.search(QUERY, 5)
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    for hit in hits:
        row = index._doc_start[hit.doc_id] + hit.page - 1
        assert hit.score == pytest.approx(brute_force(index, QUERY, row), rel=1e-4)
    assert index.search("   ", 3) == []


def test_scoping_and_batch_consistency(index, docs):
    whole = {(h.doc_id, h.page): h.score for h in index.search(QUERY, 10)}
    scoped = index.search(QUERY, 10, doc_ids=[docs[1].id])
    assert {h.doc_id for h in scoped} == {docs[1].id} and len(scoped) == 2
    for hit in scoped:
        assert hit.score == pytest.approx(whole[(hit.doc_id, hit.page)], rel=1e-5)
    queries = [QUERY, "galaxy", "revenue in Europe"]
    assert index.search_batch(queries, 3) == [index.search(q, 3) for q in queries]


def test_incremental_add_equals_one_shot(qwen_dir, docs, index, tmp_path):
    step = ColPaliIndex(
        str(qwen_dir), dpi=DPI, device="cpu", batch_size=3, render_dir=tmp_path / "pages"
    )
    step.add([docs[0]])
    step.add([docs[1]])
    step.add(docs)  # already indexed: skipped
    assert step.page_count == 5
    assert len(list((tmp_path / "pages").rglob("*.png"))) == 5  # a given render_dir is a cache
    got = [(h.doc_id, h.page, h.score) for h in step.search(QUERY, 5)]
    want = [(h.doc_id, h.page, h.score) for h in index.search(QUERY, 5)]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert [g[2] for g in got] == pytest.approx([w[2] for w in want], rel=1e-5)


def test_regions_land_on_the_boosted_patch(index, docs):
    row, cell = 3, (5, 2)  # beta.pdf page 1
    _, rows, cols = index.page_grid(row)
    query = index.encode_query(QUERY)
    target = query.vectors[query.text_tokens].mean(axis=0)
    target /= np.linalg.norm(target)
    tokens = index._patch_tokens[index._patch_offsets[row] : index._patch_offsets[row + 1]]
    position = index.store.offsets[row] + tokens[cell[0] * cols + cell[1]]
    saved = index.store.vectors[position].copy()
    index.store.vectors[position] = target.astype(np.float16)
    index.scorer.invalidate()
    try:
        (hit,) = index.search(QUERY, 1, doc_ids=docs[1].id)
        assert hit.page == 1
        top = hit.regions[0]
        assert top.element_type == REGION_TYPE and top.doc_id == docs[1].id and top.page == 1
        cx, cy = (cell[1] + 0.5) / cols, (cell[0] + 0.5) / rows
        assert top.bbox.x1 <= cx <= top.bbox.x2 and top.bbox.y1 <= cy <= top.bbox.y2
        assert index.similarity_map(QUERY, row).argmax() == cell[0] * cols + cell[1]
    finally:
        index.store.vectors[position] = saved
        index.scorer.invalidate()


def test_regions_are_bounded_and_configurable(qwen_dir, docs, index):
    for hit in index.search(QUERY, 5):
        assert 1 <= len(hit.regions) <= 3
        for region in hit.regions:
            box = region.bbox
            assert 0 <= box.x1 < box.x2 <= 1 and 0 <= box.y1 < box.y2 <= 1
    quiet = ColPaliIndex(str(qwen_dir), dpi=DPI, device="cpu", max_regions=0)
    quiet.add([docs[1]])
    assert all(h.regions == [] for h in quiet.search(QUERY, 2))


def test_qwen_layout_matches_the_processor_pixel_order(index):
    from PIL import Image

    from scanrag.indexes.colpali_layouts import page_grid

    image = Image.new("RGB", (168, 224), "white")  # exactly 6 x 8 merged 28 px patches
    image.paste((0, 0, 0), (56, 140, 84, 168))  # merged cell (row 5, col 2)
    processor = index.encoder.processor
    batch = processor.process_images([image])
    assert batch["image_grid_thw"][0].tolist() == [1, 16, 12]
    pixels = batch["pixel_values"][0].float().mean(dim=1).numpy()
    dark = np.flatnonzero(pixels < pixels.mean() - 1.0)
    assert len(dark) == 4 and set(dark // 4) == {5 * 6 + 2}  # one merged token
    kept = batch["attention_mask"][0].numpy().astype(bool)
    grid = page_grid(index.encoder.family.layout, batch, 0, processor, kept)
    assert (grid.rows, grid.cols) == (8, 6)
    image_tokens = np.flatnonzero(processor.get_image_mask(batch)[0].numpy()[kept])
    assert grid.tokens[5 * 6 + 2] == image_tokens[32]


def test_save_load_round_trip(index, qwen_dir, docs, tmp_path):
    before = index.search_batch([QUERY, "galaxy"], 4)
    index.save(tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["kind"] == "colpali" and manifest["model"] == str(qwen_dir)
    assert manifest["model_revision"] and manifest["params"]["family"] == "colqwen2"
    assert manifest["extra"]["dim"] == 128 and manifest["page_count"] == 5
    reopened = ColPaliIndex.open(tmp_path / "idx", device="cpu")
    assert reopened.search_batch([QUERY, "galaxy"], 4) == before
    fresh = ColPaliIndex(str(qwen_dir), dpi=DPI, device="cpu").load(tmp_path / "idx", docs)
    assert fresh.search(QUERY, 4) == before[0]
    with pytest.raises(IndexMismatchError, match="dpi"):
        ColPaliIndex(str(qwen_dir), dpi=DPI + 1, device="cpu").load(tmp_path / "idx")


def test_a_fast_path_that_fails_falls_back_to_the_same_hits_and_says_so(
    index, tmp_path, monkeypatch, caplog
):
    """A compile or launch failure of the fused kernel: the reference scores the search, one
    warning names the cause, and the manifest (in memory and saved) records the fallback."""
    from scanrag.indexes import colpali_kernel
    from scanrag.indexes.colpali_contenders import ProjectKernel
    from scanrag.indexes.colpali_scoring import MaxSimScorer

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("CompilationError: at 2:11: NameError('Any')")

    want = index.search_batch([QUERY, "galaxy"], 5)
    monkeypatch.setattr(ProjectKernel, "unavailable", lambda self, device, store: None)
    monkeypatch.setattr(colpali_kernel, "page_scores", broken)
    monkeypatch.setattr(index, "scorer", MaxSimScorer("cpu", method="kernel"))
    with caplog.at_level("WARNING"):
        assert index.search_batch([QUERY, "galaxy"], 5) == want
        assert index.search(QUERY, 5) == want[0]
    assert [r.levelname for r in caplog.records].count("WARNING") == 1
    assert "NameError('Any')" in caplog.text
    record = index.manifest()["extra"]["maxsim"]
    assert record["method"] == "kernel" and record["chosen"] == "matmul"
    assert record["fallbacks"][0]["method"] == "kernel"
    index.save(tmp_path / "idx")
    saved = json.loads((tmp_path / "idx" / "manifest.json").read_text())["extra"]["maxsim"]
    assert saved["fallbacks"] == record["fallbacks"]


def test_load_rejects_another_model_and_damage(index, docs, tmp_path):
    index.save(tmp_path / "idx")
    other = ColPaliIndex(str(tiny_model_dir("colpali")), dpi=DPI, device="cpu")
    with pytest.raises(IndexMismatchError, match="model"):
        other.load(tmp_path / "idx")
    vectors = tmp_path / "idx" / "payload" / "vectors.npy"
    vectors.write_bytes(vectors.read_bytes()[:-64])
    with pytest.raises(CorruptIndexError, match="vectors.npy"):
        ColPaliIndex.open(tmp_path / "idx", device="cpu")


def test_inconsistent_grids_are_detected(index, tmp_path):
    grids, tokens, offsets = index._grids, index._patch_tokens, index._patch_offsets
    check = ColPaliIndex._check_grids
    check(index.store, grids, tokens, offsets, 5, tmp_path)
    with pytest.raises(CorruptIndexError, match="grid shapes"):
        check(index.store, grids[:, ::-1] + [[1, 0]], tokens, offsets, 5, tmp_path)
    with pytest.raises(CorruptIndexError, match="outside their page"):
        check(index.store, grids, tokens + 10_000, offsets, 5, tmp_path)
    with pytest.raises(CorruptIndexError, match="6 pages"):
        check(index.store, grids, tokens, offsets, 6, tmp_path)


@pytest.mark.parametrize(
    ("family", "grid"), [("colpali", (4, 4)), ("colqwen2_5", (11, 8)), ("colidefics3", (4, 4))]
)
def test_other_tiny_families_run_end_to_end(docs, tmp_path, family, grid):
    other = ColPaliIndex(str(tiny_model_dir(family)), dpi=DPI, device="cpu")
    assert other.family == family
    other.add(docs)
    hits = other.search(QUERY, 3)
    assert len(hits) == 3 and all(h.regions for h in hits)
    assert other.page_grid(0)[1:] == grid
    for hit in hits:
        row = other._doc_start[hit.doc_id] + hit.page - 1
        assert hit.score == pytest.approx(brute_force(other, QUERY, row), rel=1e-4)
    other.save(tmp_path / family)
    assert ColPaliIndex.open(tmp_path / family, device="cpu").search(QUERY, 3) == hits


def test_pages_without_a_patch_grid_are_indexed_without_regions(
    qwen_dir, docs, monkeypatch, caplog, tmp_path
):
    plain = ColPaliIndex(str(qwen_dir), dpi=DPI, device="cpu")

    def unknown_layout(batch, i, processor):
        raise ValueError("unrecognised image token layout")

    family = dataclasses.replace(plain.encoder.family, layout=unknown_layout)
    monkeypatch.setattr(plain.encoder, "family", family)
    plain.add([docs[1]])
    hits = plain.search(QUERY, 2)
    assert len(hits) == 2 and all(h.regions == [] for h in hits)
    assert "no patch grid" in caplog.text
    plain.save(tmp_path / "plain")
    assert ColPaliIndex.open(tmp_path / "plain", device="cpu").search(QUERY, 2) == hits


def test_documents_without_a_file_fail_cleanly(index):
    from scanrag.schemas import Page

    ghost = Document(
        id="ghost",
        name="ghost.pdf",
        sha256="0" * 64,
        num_pages=1,
        pages=[Page(number=1, width=595, height=842)],
    )
    with pytest.raises(RenderError, match="no file path"):
        index.add([ghost])
    assert "ghost" not in index.document_ids and index.page_count == 5
