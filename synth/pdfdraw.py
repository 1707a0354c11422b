"""Drawing primitives for synthetic pages, each returning the tight box of what it drew.

Text is wrapped here (base-14 fonts have no kerning, so a line's width is the sum of its
characters' widths) and placed with ``insert_text``; the box of a text block therefore matches
the word boxes PyMuPDF reports later: from ``baseline - ascender·size`` to
``baseline - descender·size``. Tables and charts are vector drawings built with one
``Shape`` each. All rectangles are ``(x0, y0, x1, y1)`` in PDF points, origin top-left.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pymupdf

PAGE_W, PAGE_H = 612.0, 792.0
LEFT, RIGHT = 72.0, 540.0
TOP, BOTTOM = 84.0, 716.0
TEXT_W = RIGHT - LEFT
BODY_SIZE = 10.0
LEADING = 1.4
REGULAR, BOLD, ITALIC = "helv", "hebo", "heit"
BLACK = (0.0, 0.0, 0.0)
GREY = (0.45, 0.45, 0.45)
RULE = (0.55, 0.55, 0.55)
HEADER_FILL = (0.9, 0.9, 0.9)
BAR_COLORS = ((0.23, 0.42, 0.65), (0.85, 0.5, 0.2), (0.3, 0.6, 0.35), (0.6, 0.35, 0.6))

Rect = tuple[float, float, float, float]


@functools.lru_cache(maxsize=8)
def _font(name: str) -> pymupdf.Font:
    return pymupdf.Font(name)


@functools.lru_cache(maxsize=8)
def _metrics(font: str) -> tuple[float, float]:
    f = _font(font)
    return float(f.ascender), float(f.descender)


@functools.lru_cache(maxsize=8)
def _advances(font: str) -> dict[str, float]:
    return {}


@functools.lru_cache(maxsize=65536)
def _unit_width(text: str, font: str) -> float:
    advances = _advances(font)
    total = 0.0
    for char in text:
        width = advances.get(char)
        if width is None:
            width = advances[char] = float(_font(font).glyph_advance(ord(char)))
        total += width
    return total


def text_width(text: str, size: float, font: str = REGULAR) -> float:
    return _unit_width(text, font) * size


def line_box_height(size: float, font: str = REGULAR) -> float:
    asc, desc = _metrics(font)
    return (asc - desc) * size


def block_height(n_lines: int, size: float, font: str = REGULAR, leading: float = LEADING) -> float:
    """Height of ``n_lines`` lines of text from the top of the first to the bottom of the last."""
    return (n_lines - 1) * size * leading + line_box_height(size, font) if n_lines else 0.0


def wrap(text: str, max_width: float, size: float, font: str = REGULAR) -> list[str]:
    """Greedy word wrap of ``text`` to ``max_width`` points."""
    space = text_width(" ", size, font)
    lines: list[str] = []
    current: list[str] = []
    used = 0.0
    for word in text.split():
        w = text_width(word, size, font)
        if current and used + space + w > max_width:
            lines.append(" ".join(current))
            current, used = [word], w
        else:
            used = used + space + w if current else w
            current.append(word)
    if current:
        lines.append(" ".join(current))
    return lines


def union(rects: Sequence[Rect]) -> Rect:
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


class Canvas:
    """One page being drawn. Text is collected per color in ``TextWriter`` objects and
    written onto the page by :meth:`flush` (after the page's vector drawings)."""

    def __init__(self, page: pymupdf.Page) -> None:
        self.page = page
        self._writers: dict[tuple[float, float, float], pymupdf.TextWriter] = {}

    def flush(self) -> None:
        for color, writer in self._writers.items():
            writer.write_text(self.page, color=color)
        self._writers.clear()

    def lines(
        self,
        x: float,
        top: float,
        lines: Sequence[str],
        size: float = BODY_SIZE,
        font: str = REGULAR,
        color: tuple[float, float, float] = BLACK,
        leading: float = LEADING,
    ) -> Rect:
        """Draw left-aligned ``lines`` whose first line's box starts at ``top``."""
        writer = self._writers.get(color)
        if writer is None:
            writer = self._writers[color] = pymupdf.TextWriter(self.page.rect)
        asc, _ = _metrics(font)
        baseline = top + asc * size
        face = _font(font)
        for i, line in enumerate(lines):
            writer.append((x, baseline + i * size * leading), line, font=face, fontsize=size)
        width = max(text_width(line, size, font) for line in lines)
        return (x, top, x + width, top + block_height(len(lines), size, font, leading))

    def text(
        self,
        x: float,
        top: float,
        text: str,
        size: float = BODY_SIZE,
        font: str = REGULAR,
        align: str = "left",
        color: tuple[float, float, float] = BLACK,
    ) -> Rect:
        """One line; ``x`` is its left edge, center or right edge depending on ``align``."""
        width = text_width(text, size, font)
        if align == "center":
            x -= width / 2
        elif align == "right":
            x -= width
        return self.lines(x, top, [text], size, font, color)

    def paragraph(
        self, x: float, top: float, width: float, text: str, size: float = BODY_SIZE
    ) -> Rect:
        return self.lines(x, top, wrap(text, width, size), size)

    def table(
        self,
        x: float,
        top: float,
        width: float,
        header: Sequence[str],
        rows: Sequence[Sequence[str]],
        first_col: float = 0.42,
        header_h: float = 18.0,
        row_h: float = 16.0,
    ) -> tuple[Rect, list[Rect]]:
        """A ruled table; returns the grid's box and the box of each body row."""
        n_cols = len(header)
        c0 = width * first_col
        col_w = (width - c0) / max(1, n_cols - 1)
        edges = [x, x + c0] + [x + c0 + col_w * (i + 1) for i in range(n_cols - 1)]
        bottom = top + header_h + row_h * len(rows)
        shape = self.page.new_shape()
        shape.draw_rect(pymupdf.Rect(x, top, x + width, top + header_h))
        shape.finish(color=None, fill=HEADER_FILL, width=0)
        for i in range(len(rows) + 2):
            y = top if i == 0 else top + header_h + row_h * (i - 1)
            shape.draw_line((x, y), (x + width, y))
        for edge in edges:
            shape.draw_line((edge, top), (edge, bottom))
        shape.finish(color=RULE, width=0.6, closePath=False)
        shape.commit()
        self._row(edges, top, header_h, header, 8.5, BOLD)
        row_rects = []
        for i, row in enumerate(rows):
            y = top + header_h + row_h * i
            self._row(edges, y, row_h, row, 9.0, REGULAR)
            row_rects.append((x, y, x + width, y + row_h))
        return (x, top, x + width, bottom), row_rects

    def _row(
        self,
        edges: Sequence[float],
        y: float,
        h: float,
        cells: Sequence[str],
        size: float,
        font: str,
    ) -> None:
        pad_y = (h - line_box_height(size, font)) / 2
        for i, cell in enumerate(cells):
            if i == 0:
                self.text(edges[0] + 5, y + pad_y, cell, size, font)
            else:
                self.text(edges[i + 1] - 5, y + pad_y, cell, size, font, align="right")

    def bar_chart(
        self,
        x: float,
        top: float,
        width: float,
        height: float,
        labels: Sequence[str],
        values: Sequence[float],
        value_texts: Sequence[str],
        color_index: int = 0,
    ) -> tuple[Rect, list[Rect]]:
        """Bars with their value printed above and their label below; returns the chart's box
        and the box of each bar together with its two labels."""
        base = top + height - 14.0  # x-axis; labels go beneath it
        plot_top = top + 14.0
        slot = (width - 12.0) / len(values)
        peak = max(values) or 1.0
        shape = self.page.new_shape()
        bars = []
        for i, value in enumerate(values):
            cx = x + 12.0 + slot * (i + 0.5)
            bar_top = base - (base - plot_top) * value / peak
            bars.append((cx - slot * 0.28, bar_top, cx + slot * 0.28, base))
            shape.draw_rect(pymupdf.Rect(*bars[-1]))
        shape.finish(color=None, fill=BAR_COLORS[color_index % len(BAR_COLORS)], width=0)
        shape.draw_line((x + 8.0, plot_top - 6.0), (x + 8.0, base))
        shape.draw_line((x + 8.0, base), (x + width, base))
        shape.finish(color=BLACK, width=0.8, closePath=False)
        shape.commit()
        item_rects = []
        for bar, label, text in zip(bars, labels, value_texts, strict=True):
            cx = (bar[0] + bar[2]) / 2
            above = self.text(cx, bar[1] - 11.0, text, 8.0, align="center")
            below = self.text(cx, base + 3.0, label, 8.0, align="center")
            item_rects.append(union([bar, above, below]))
        axes = (x + 8.0, plot_top - 6.0, x + width, base)
        return union([axes, *item_rects]), item_rects

    def line_chart(
        self,
        x: float,
        top: float,
        width: float,
        height: float,
        labels: Sequence[str],
        values: Sequence[float],
        value_texts: Sequence[str],
    ) -> tuple[Rect, list[Rect]]:
        """A polyline with a marker, value and x label per point; returns the chart's box and
        the box of each point with its labels."""
        base = top + height - 14.0
        plot_top = top + 16.0
        lo, hi = min(values), max(values)
        span = (hi - lo) or 1.0
        step = (width - 24.0) / max(1, len(values) - 1)
        points = [
            (x + 16.0 + step * i, base - 8.0 - (base - plot_top - 8.0) * (v - lo) / span)
            for i, v in enumerate(values)
        ]
        shape = self.page.new_shape()
        shape.draw_line((x + 8.0, plot_top - 6.0), (x + 8.0, base))
        shape.draw_line((x + 8.0, base), (x + width, base))
        shape.finish(color=BLACK, width=0.8, closePath=False)
        shape.draw_polyline(points)
        shape.finish(color=BAR_COLORS[0], width=1.4, closePath=False)
        for px, py in points:
            shape.draw_rect(pymupdf.Rect(px - 2.2, py - 2.2, px + 2.2, py + 2.2))
        shape.finish(color=None, fill=BAR_COLORS[1], width=0)
        shape.commit()
        item_rects = []
        for (px, py), label, text in zip(points, labels, value_texts, strict=True):
            above = self.text(px, py - 14.0, text, 8.0, align="center")
            below = self.text(px, base + 3.0, label, 8.0, align="center")
            item_rects.append(union([(px - 2.2, py - 2.2, px + 2.2, py + 2.2), above, below]))
        axes = (x + 8.0, plot_top - 6.0, x + width, base)
        return union([axes, *item_rects]), item_rects
