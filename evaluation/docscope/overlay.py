"""The region judge's page image: gold boxes in green tagged ``GOLD[i]``, predictions in red.

Outlines are drawn inside each box's edge. Gold outlines are twice as thick as predicted ones
and drawn first, so a red box lying exactly on a gold box still shows a green band just
inside the red line. Tags sit above
the gold box (inside it when the box touches the top edge), white on green. Overlays are
cached under a name derived from the page image and the boxes, written atomically.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanrag.hashing import stable_hash
from scanrag.schemas import BBox

GREEN = (0, 170, 0)
RED = (230, 0, 0)
WHITE = (255, 255, 255)


def gold_tag(index: int) -> str:
    """Tag of the ``index``-th (0-based) gold box on a page: ``GOLD[1]`` for index 0."""
    return f"GOLD[{index + 1}]"


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizing
        return ImageFont.load_default()


def _pixels(box: BBox, width: int, height: int) -> tuple[int, int, int, int]:
    x1 = round(box.x1 * (width - 1))
    y1 = round(box.y1 * (height - 1))
    x2 = round(box.x2 * (width - 1))
    y2 = round(box.y2 * (height - 1))
    return x1, y1, max(x1, x2), max(y1, y2)


def line_width(width: int, height: int) -> int:
    """Predicted-box outline width in pixels for an image of this size."""
    return max(2, round(0.003 * max(width, height)))


def draw_overlay(
    page_png: Path, gold: Sequence[BBox], predicted: Sequence[BBox], target: Path
) -> Path:
    """Draw the boxes on a copy of ``page_png`` and save it atomically as ``target``."""
    from PIL import Image, ImageDraw

    with Image.open(page_png) as source:
        image = source.convert("RGB")
    width, height = image.size
    draw = ImageDraw.Draw(image)
    thin = line_width(width, height)
    for box in gold:
        draw.rectangle(_pixels(box, width, height), outline=GREEN, width=2 * thin)
    for box in predicted:
        draw.rectangle(_pixels(box, width, height), outline=RED, width=thin)
    font = _font(max(12, round(0.016 * height)))
    for index, box in enumerate(gold):
        x1, y1, _, _ = _pixels(box, width, height)
        text = gold_tag(index)
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        tw, th = right - left + 6, bottom - top + 4
        ty = y1 - th - 2 * thin if y1 - th - 2 * thin >= 0 else y1 + 2 * thin
        tx = min(max(0, x1), max(0, width - tw))
        draw.rectangle((tx, ty, tx + tw, ty + th), fill=GREEN)
        draw.text((tx + 3 - left, ty + 2 - top), text, fill=WHITE, font=font)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        image.save(tmp, format="PNG")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def overlay_path(
    overlay_dir: Path, page_png: Path, gold: Sequence[BBox], predicted: Sequence[BBox]
) -> Path:
    """Cache location of an overlay: keyed by the page image and every box drawn."""
    key = stable_hash(
        {
            "page": str(page_png),
            "gold": [b.as_list() for b in gold],
            "pred": [b.as_list() for b in predicted],
        }
    )
    return overlay_dir / f"{page_png.stem}_{key}.png"


def cached_overlay(
    overlay_dir: Path, page_png: Path, gold: Sequence[BBox], predicted: Sequence[BBox]
) -> Path:
    target = overlay_path(overlay_dir, page_png, gold, predicted)
    if target.is_file():
        return target
    return draw_overlay(page_png, gold, predicted, target)
