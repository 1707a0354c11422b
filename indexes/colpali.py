"""A ColPali-style multi-vector page index: page images in, late-interaction search out.

Every page is rendered to an image (``scanrag.documents.render.PageRenderer``) and encoded by a
colpali-engine model (ColPali, ColQwen2, ColQwen2.5, ColSmol/ColIdefics3; see
``scanrag.indexes.colpali_models``) into one 128-d vector per input token. Vectors are stored packed
in float16 (``scanrag.indexes.colpali_packed.PackedVectors``) together with each page's patch grid
(``scanrag.indexes.colpali_layouts``). Queries are encoded one at a time and scored by MaxSim
against every page in scope (``scanrag.indexes.colpali_scoring``), on CUDA when available.

Beyond page hits, each hit carries candidate **regions**: boxes in normalized page coordinates
where the query's tokens match the page's patches best (``scanrag.indexes.colpali_regions``), tagged
``element_type="colpali_patch"``. ``region_threshold`` and ``max_regions`` tune them;
``max_regions=0`` turns them off.

Payload files: ``vectors.npy`` (float16 tokens × dim), ``offsets.npy`` (page → token range),
``grids.npy`` (rows, cols per page), ``patch_tokens.npy`` and ``patch_offsets.npy`` (per page,
the stored token behind each grid cell, row-major). A page image that cannot be rendered makes
``add`` fail with the renderer's error and leaves the index unchanged.

Memory: the stored vectors take ``2 × dim`` bytes per token (about 200 KB per ColQwen2 page of
~780 tokens). On CUDA a fused path keeps one packed float16 copy on the GPU; the matrix-product
path keeps padded copies in blocks that never straddle two documents
(``scanrag.indexes.colpali_blocks``): float16 on a GPU, built by the first search; float32 on
the CPU (twice as much again), built by the first whole-store search. Which path scored is in
the manifest (``extra.maxsim``).
"""

from __future__ import annotations

import logging
import tempfile
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scanrag.indexes.base import Candidates, PageIndex
from scanrag.indexes.colpali_layouts import PatchGrid
from scanrag.indexes.colpali_models import (
    DEFAULT_COLPALI_MODEL,
    EncodedPage,
    EncodedQuery,
    check_model,
    load_colpali,
    resolve_family,
)
from scanrag.indexes.colpali_packed import PackedVectors
from scanrag.indexes.colpali_regions import propose_regions, similarity_grid
from scanrag.indexes.colpali_scoring import MaxSimScorer, check_method
from scanrag.indexes.errors import CorruptIndexError
from scanrag.indexes.manifest import IndexManifest, library_versions
from scanrag.protocols import PageRenderer
from scanrag.schemas import BBox, Document, Region

log = logging.getLogger(__name__)
FILES = ("vectors.npy", "offsets.npy", "grids.npy", "patch_tokens.npy", "patch_offsets.npy")
REGION_TYPE = "colpali_patch"
_QUERY_CACHE = 1024


class ColPaliIndex(PageIndex):
    """The ``colpali`` retriever: a multi-vector page index over page images.

    ``model``: a colpali-engine hub name or local directory (ColPali, ColQwen2, ColQwen2.5,
    ColSmol); ``family`` overrides the detected model family; ``dpi`` is the rendering
    resolution (the processor resizes pages to its own input size afterwards);
    ``max_visual_tokens`` caps the patches per page for Qwen-based models. ``device`` (CUDA by
    default when available), ``batch_size`` (pages per encoder call), ``score_batch_pages``
    (pages per block of the matrix-product path), ``maxsim`` (the MaxSim path: ``auto`` times
    them on CUDA and keeps the fastest; ``kernel``, ``lik``, ``flash`` or ``matmul`` forces one;
    see ``scanrag.indexes.colpali_scoring``), ``region_threshold`` (0..1, higher = tighter boxes),
    ``max_regions`` (per hit, 0 = none), ``render_dir`` (page image cache; by default a
    temporary folder whose images are deleted once encoded) and ``renderer`` do not change
    what is stored. Hits carry candidate regions (``element_type="colpali_patch"``).
    """

    kind = "colpali"

    def __init__(
        self,
        model: str = DEFAULT_COLPALI_MODEL,
        *,
        family: str | None = None,
        dpi: int = 96,
        max_visual_tokens: int | None = None,
        device: str | None = None,
        batch_size: int = 4,
        score_batch_pages: int = 256,
        maxsim: str = "auto",
        region_threshold: float = 0.75,
        max_regions: int = 3,
        render_dir: str | Path | None = None,
        renderer: PageRenderer | None = None,
    ) -> None:
        super().__init__()
        self.check_params(
            {
                "dpi": dpi,
                "batch_size": batch_size,
                "score_batch_pages": score_batch_pages,
                "region_threshold": region_threshold,
                "max_regions": max_regions,
                "maxsim": maxsim,
            }
        )
        self.model = model
        self.family = resolve_family(model, family).name
        self.dpi, self.max_visual_tokens = dpi, max_visual_tokens
        self.batch_size = batch_size
        self.region_threshold, self.max_regions = region_threshold, max_regions
        self.encoder = load_colpali(model, self.family, device, max_visual_tokens)
        self.scorer = MaxSimScorer(self.encoder.device, score_batch_pages, maxsim)
        self.store = PackedVectors(self.encoder.dim)
        self._set_grids(np.zeros((0, 2), np.int32), np.zeros(0, np.int32), np.zeros(1, np.int64))
        self._queries: OrderedDict[str, EncodedQuery] = OrderedDict()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._render_dir = render_dir
        self._renderer = renderer

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        """Rules that need no model: sizes, the region settings, the model family."""
        if arguments.get("dpi", 1) <= 0:
            raise ValueError(f"dpi must be positive, got {arguments['dpi']}")
        for name in ("batch_size", "score_batch_pages"):
            if arguments.get(name, 1) < 1:
                raise ValueError(f"{name} must be >= 1, got {arguments[name]}")
        if not 0.0 <= arguments.get("region_threshold", 0.0) <= 1.0:
            raise ValueError(
                f"region_threshold must lie in [0, 1], got {arguments['region_threshold']}"
            )
        check_method(arguments.get("maxsim", "auto"))
        if arguments.get("max_regions", 0) < 0:
            raise ValueError(f"max_regions must be >= 0, got {arguments['max_regions']}")
        if "model" in arguments:
            check_model(
                arguments["model"], arguments.get("family"), arguments.get("max_visual_tokens")
            )

    @property
    def device(self) -> str:
        return self.encoder.device

    # -- configuration ----------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "family": self.family,
            "dpi": self.dpi,
            "max_visual_tokens": self.max_visual_tokens,
        }

    def model_info(self) -> tuple[str | None, str | None]:
        return self.model, self.encoder.revision

    def libraries(self) -> dict[str, str]:
        return library_versions("colpali-engine", "transformers", "torch", "torchvision", "peft")

    def manifest_extra(self) -> dict[str, Any]:
        return {
            "dim": self.store.dim,
            "tokens": int(self.store.offsets[-1]),
            "patches": int(self._patch_offsets[-1]),
            "maxsim": self.scorer.record(),
        }

    def renderer(self) -> PageRenderer:
        if self._renderer is None:
            from scanrag.documents.render import PageRenderer as DiskRenderer

            folder = self._render_dir
            if folder is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="scanrag-colpali-")
                folder = self._tmp.name
            self._renderer = DiskRenderer(folder, dpi=self.dpi)
        return self._renderer

    # -- indexing ---------------------------------------------------------------------------
    def _images(self, documents: list[Document]) -> Iterator[list[Any]]:
        from PIL import Image

        renderer, batch = self.renderer(), []
        for document in documents:
            for number in range(1, len(document.pages) + 1):
                path = renderer.render(document, number, self.dpi)
                with Image.open(path) as image:
                    batch.append(image.convert("RGB"))
                if self._tmp is not None:  # a private render folder: keep it empty
                    path.unlink(missing_ok=True)
                if len(batch) == self.batch_size:
                    yield batch
                    batch = []
        if batch:
            yield batch

    def _index(self, documents: list[Document]) -> None:
        encoded: list[EncodedPage] = []
        for images in self._images(documents):
            encoded.extend(self.encoder.encode_images(images))
            log.debug("colpali: encoded %d pages", len(encoded))
            self._pages_indexed(len(images))
        self.store.extend([page.vectors for page in encoded])
        self._append_grids([page.grid for page in encoded])

    def _set_grids(self, grids: np.ndarray, tokens: np.ndarray, offsets: np.ndarray) -> None:
        self._grids, self._patch_tokens, self._patch_offsets = grids, tokens, offsets

    def _append_grids(self, grids: list[PatchGrid]) -> None:
        if not grids:
            return
        shapes = np.array([[g.rows, g.cols] for g in grids], dtype=np.int32)
        sizes = np.array([g.tokens.size for g in grids], dtype=np.int64)
        self._set_grids(
            np.concatenate([self._grids, shapes]),
            np.concatenate([self._patch_tokens, *(g.tokens for g in grids)]).astype(np.int32),
            np.concatenate([self._patch_offsets, self._patch_offsets[-1] + np.cumsum(sizes)]),
        )

    # -- searching --------------------------------------------------------------------------
    def encode_query(self, query: str) -> EncodedQuery:
        """The query's token vectors (cached per query text)."""
        if query in self._queries:
            self._queries.move_to_end(query)
            return self._queries[query]
        encoded = self.encoder.encode_query(query)
        self._queries[query] = encoded
        while len(self._queries) > _QUERY_CACHE:
            self._queries.popitem(last=False)
        return encoded

    def _candidates(self, queries: list[str], rows: np.ndarray | None, k: int) -> list[Candidates]:
        encoded = [self.encode_query(q).vectors for q in queries]
        breaks = np.fromiter(self._doc_start.values(), dtype=np.int64, count=len(self._doc_start))
        scores = self.scorer.scores(encoded, self.store, rows, breaks)
        scope = np.arange(self.page_count, dtype=np.int64) if rows is None else rows
        return [(scope, scores[j]) for j in range(len(queries))]

    def page_grid(self, row: int) -> tuple[np.ndarray, int, int]:
        """The patch vectors (row-major over the grid) and grid shape of page row ``row``."""
        rows, cols = (int(v) for v in self._grids[row])
        tokens = self._patch_tokens[self._patch_offsets[row] : self._patch_offsets[row + 1]]
        return self.store.page(row)[tokens], rows, cols

    def similarity_map(self, query: str, row: int) -> np.ndarray:
        """The (rows, cols) query-to-patch similarity map of page row ``row``."""
        encoded = self.encode_query(query)
        vectors = encoded.vectors[encoded.text_tokens]
        if len(vectors) == 0:  # a query of special tokens only: use them all
            vectors = encoded.vectors
        patches, rows, cols = self.page_grid(row)
        return similarity_grid(vectors, patches, rows, cols)

    def _regions(self, query: str, rows: np.ndarray) -> list[list[Region]]:
        if self.max_regions == 0:
            return [[] for _ in rows]
        out = []
        for row in rows.tolist():
            doc_id, page = self._doc_order[self._row_doc[row]], int(self._row_page[row])
            grid = self.similarity_map(query, row)
            out.append(
                [
                    Region(
                        page=page,
                        bbox=BBox.from_list(box.bbox),
                        element_type=REGION_TYPE,
                        doc_id=doc_id,
                    )
                    for box in propose_regions(grid, self.region_threshold, self.max_regions)
                ]
            )
        return out

    # -- persistence ------------------------------------------------------------------------
    def _save_payload(self, directory: Path) -> None:
        arrays: tuple[np.ndarray, ...] = (
            self.store.vectors,
            self.store.offsets,
            self._grids,
            self._patch_tokens,
            self._patch_offsets,
        )
        for name, array in zip(FILES, arrays, strict=True):
            np.save(directory / name, array, allow_pickle=False)

    def _load_payload(self, directory: Path, manifest: IndexManifest) -> None:
        dim = int(manifest.extra.get("dim", -1))
        if dim != self.store.dim:
            raise CorruptIndexError(
                f"{directory}: saved vectors have dim {dim}, the model produces {self.store.dim}"
            )
        vectors, offsets, grids, tokens, patch_offsets = (
            np.load(directory / name, allow_pickle=False) for name in FILES
        )
        store = PackedVectors(dim)
        store.replace(vectors, offsets)
        self._check_grids(store, grids, tokens, patch_offsets, manifest.page_count, directory)
        self.store = store
        self._set_grids(grids.astype(np.int32), tokens.astype(np.int32), patch_offsets)
        self.scorer.invalidate()
        self._queries.clear()

    @staticmethod
    def _check_grids(
        store: PackedVectors,
        grids: np.ndarray,
        tokens: np.ndarray,
        offsets: np.ndarray,
        pages: int,
        directory: Path,
    ) -> None:
        problem = None
        if len(store) != pages:
            problem = f"{len(store)} pages of vectors for {pages} pages in the manifest"
        elif grids.shape != (pages, 2) or offsets.shape != (pages + 1,) or tokens.ndim != 1:
            problem = "patch grid arrays have the wrong shape"
        elif offsets[0] != 0 or offsets[-1] != tokens.size or np.any(np.diff(offsets) < 0):
            problem = "patch offsets do not partition the patch tokens"
        elif np.any(np.diff(offsets) != grids[:, 0].astype(np.int64) * grids[:, 1]):
            problem = "patch counts disagree with the grid shapes"
        elif tokens.size and np.any(
            (tokens < 0) | (tokens >= np.repeat(store.lengths, np.diff(offsets)))
        ):
            problem = "patch tokens point outside their page"
        if problem:
            raise CorruptIndexError(f"{directory}: {problem}")
