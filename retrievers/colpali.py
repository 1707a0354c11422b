"""The ``colpali`` retriever: late-interaction search over page images (see ``indexes.colpali``).

Hits carry candidate regions (``element_type="colpali_patch"``): boxes where the query matches
the page's image patches best, so a strategy can look at a part of a page, not only the page.
"""

from __future__ import annotations

from pathlib import Path

from indexes.colpali import ColPaliIndex
from indexes.colpali_models import DEFAULT_COLPALI_MODEL
from retrievers.base import BaseRetriever
from scanrag.protocols import PageRenderer


class ColPaliRetriever(BaseRetriever):
    """Page retrieval with a ColPali-family model (ColPali, ColQwen2, ColQwen2.5, ColSmol).

    ``model`` is a colpali-engine hub name or a local model directory (``family`` overrides the
    family read from its config or name). ``batch_size`` pages are encoded per model call;
    ``dpi`` is the page rendering resolution; ``device`` defaults to CUDA when available, else
    the CPU. ``region_threshold`` (0..1, higher = tighter boxes) and ``max_regions`` (per hit, 0
    = none) shape the proposed regions. ``max_visual_tokens`` caps patches per page (Qwen-based
    models), ``score_batch_pages`` pages are scored per MaxSim batch, and ``render_dir`` keeps
    the rendered page images (a temporary folder otherwise).
    """

    name = "colpali"
    index_class = ColPaliIndex

    def __init__(
        self,
        model: str = DEFAULT_COLPALI_MODEL,
        batch_size: int = 4,
        dpi: int = 96,
        device: str | None = None,
        region_threshold: float = 0.75,
        max_regions: int = 3,
        *,
        family: str | None = None,
        max_visual_tokens: int | None = None,
        score_batch_pages: int = 256,
        render_dir: str | Path | None = None,
        renderer: PageRenderer | None = None,
    ) -> None:
        super().__init__(
            ColPaliIndex(
                model,
                family=family,
                dpi=dpi,
                max_visual_tokens=max_visual_tokens,
                device=device,
                batch_size=batch_size,
                score_batch_pages=score_batch_pages,
                region_threshold=region_threshold,
                max_regions=max_regions,
                render_dir=render_dir,
                renderer=renderer,
            )
        )
