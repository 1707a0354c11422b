"""Table detection for layout blocks.

``fast`` (default) reads the layout MuPDF already produced: a table shows up as text blocks
whose short lines sit side by side (a row of cells), as a block whose lines form a grid, or as
a run of narrow blocks standing next to each other (one block per column). It costs a few
microseconds per page. ``full`` runs PyMuPDF's ruling-and-alignment table finder, which is
more thorough and about a hundred times slower. ``off`` skips tables.

A detected table is ``(bbox, member block indices, text)``: ``bbox`` is normalized, members
index the raw block list, ``text`` has one row a line and cells separated by `` | ``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any, Literal

TableMode = Literal["fast", "full", "off"]
Table = tuple[tuple[float, float, float, float], list[int], str]

_CELL_CHARS = 31  # mean characters per line (newline included) above which a block is prose
_ROW_GAP = 2.5  # largest gap between table rows, in row heights
_BNO = itemgetter(5)
_TOP_LEFT = attrgetter("y1", "x1")
_LEFT = attrgetter("x1")


@dataclass(slots=True)
class _Line:
    x1: float
    y1: float
    x2: float
    y2: float
    text: str


@dataclass(slots=True)
class _Shape:
    """A text block that may be part of a table. Its cells are only worked out (``rows``)
    once the block ends up in a table."""

    index: int  # position in the raw block list
    kind: str  # "grid", "row" or "column"
    box: tuple[float, float, float, float]
    line_height: float
    words: tuple[int, int]  # slice of the page's word list holding this block's words
    text: str
    rows: list[list[str]] | None = None  # cell texts, one list per visual row


def _lines_of(raw_words: Sequence[tuple[Any, ...]], start: int, stop: int) -> list[_Line]:
    """The text lines of words ``start..stop-1`` (one block's): box and words joined by
    spaces, in the order the lines first appear."""
    boxes: dict[int, list[float]] = {}
    texts: dict[int, list[str]] = {}
    for w in raw_words[start:stop]:
        number = w[6]
        box = boxes.get(number)
        if box is None:
            boxes[number] = [w[0], w[1], w[2], w[3]]
            texts[number] = [w[4]]
            continue
        if w[0] < box[0]:
            box[0] = w[0]
        if w[1] < box[1]:
            box[1] = w[1]
        if w[2] > box[2]:
            box[2] = w[2]
        if w[3] > box[3]:
            box[3] = w[3]
        texts[number].append(w[4])
    return [_Line(b[0], b[1], b[2], b[3], " ".join(texts[n])) for n, b in boxes.items()]


def _group_rows(lines: list[_Line]) -> list[list[_Line]]:
    """Lines grouped into visual rows, each ordered left to right: top to bottom, a line joins
    the current row when it overlaps the row's first line vertically by at least half the
    smaller of the two heights."""
    rows: list[list[_Line]] = []
    head: _Line | None = None
    for line in sorted(lines, key=_TOP_LEFT):
        if head is not None:
            overlap = min(head.y2, line.y2) - max(head.y1, line.y1)
            if overlap >= 0.5 * min(head.y2 - head.y1, line.y2 - line.y1) > 0:
                rows[-1].append(line)
                continue
        head = line
        rows.append([line])
    for row in rows:
        if len(row) > 1:
            row.sort(key=_LEFT)
    return rows


def _cells(shape: _Shape, raw_words: Sequence[tuple[Any, ...]]) -> list[list[str]]:
    """Cell texts of ``shape`` by visual row (computed once, on demand)."""
    if shape.rows is None:
        if shape.kind == "column":
            shape.rows = [[t] for t in shape.text.split("\n") if t.strip()]
        elif shape.kind == "row":
            shape.rows = [[t for t in shape.text.split("\n") if t.strip()]]
        else:
            rows = _group_rows(_lines_of(raw_words, *shape.words))
            shape.rows = [[line.text for line in row] for row in rows]
    return shape.rows


def _is_grid(shape: _Shape, raw_words: Sequence[tuple[Any, ...]]) -> bool:
    rows = _cells(shape, raw_words)
    return len(rows) >= 2 and sum(1 for row in rows if len(row) > 1) >= 2


def _shapes(
    raw_words: Sequence[tuple[Any, ...]], raw_blocks: Sequence[tuple[Any, ...]]
) -> list[_Shape | None]:
    """One entry per text block, in order: its tabular shape or ``None``.

    A candidate has at least two short lines (cells rather than prose). Its height then tells
    the shapes apart without looking at the lines: stacked lines fill about one line height
    each (a column), lines side by side fill one line height (a row), several lines per line
    height over several heights form a grid.
    """
    shapes: list[_Shape | None] = []
    append = shapes.append
    ordinal = -1
    low = 0  # words are ordered by block: each search starts where the last one ended
    for index, block in enumerate(raw_blocks):
        if block[6] != 0:
            continue
        ordinal += 1  # words number text blocks only
        text = block[4]
        lines = text.count("\n") + (not text.endswith("\n"))
        if lines < 2 or len(text) > _CELL_CHARS * lines:
            append(None)
            continue
        start = bisect_left(raw_words, ordinal, lo=low, key=_BNO)
        low = bisect_right(raw_words, ordinal, lo=start, key=_BNO)
        if low - start < 2:
            append(None)
            continue
        first = raw_words[start]
        line_height = max(first[3] - first[1], 1e-6)
        height = block[3] - block[1]
        per_height = lines * line_height / max(height, 1e-6)  # lines per line height
        if per_height <= 1.1:
            kind = "column"
        elif height <= 1.5 * line_height:
            kind = "row"
        elif per_height >= 1.8:
            kind = "grid"
        else:
            append(None)
            continue
        box = (block[0], block[1], block[2], block[3])
        append(_Shape(index, kind, box, line_height, (start, low), text))
    return shapes


def _union(shapes: Sequence[_Shape]) -> tuple[float, float, float, float]:
    return (
        min(s.box[0] for s in shapes),
        min(s.box[1] for s in shapes),
        max(s.box[2] for s in shapes),
        max(s.box[3] for s in shapes),
    )


def _continues_rows(prev: _Shape, nxt: _Shape) -> bool:
    height = prev.line_height
    gap = nxt.box[1] - prev.box[3]
    overlap = min(prev.box[2], nxt.box[2]) - max(prev.box[0], nxt.box[0])
    return -0.5 * height <= gap <= _ROW_GAP * height and overlap > 0


def _continues_columns(prev: _Shape, nxt: _Shape) -> bool:
    overlap = min(prev.box[3], nxt.box[3]) - max(prev.box[1], nxt.box[1])
    smaller = min(prev.box[3] - prev.box[1], nxt.box[3] - nxt.box[1])
    return nxt.box[0] >= prev.box[2] - 1e-3 and overlap >= 0.5 * smaller > 0


def _table_from_rows(run: Sequence[_Shape], raw_words: Sequence[tuple[Any, ...]]) -> Table:
    text = "\n".join(" | ".join(row) for shape in run for row in _cells(shape, raw_words))
    return _union(run), [s.index for s in run], text


def _table_from_columns(run: Sequence[_Shape], raw_words: Sequence[tuple[Any, ...]]) -> Table:
    columns = [[" ".join(row) for row in _cells(shape, raw_words)] for shape in run]
    height = max(len(column) for column in columns)
    rows = [" | ".join(col[i] if i < len(col) else "" for col in columns) for i in range(height)]
    return _union(run), [s.index for s in run], "\n".join(rows)


def _column_run_is_table(run: Sequence[_Shape]) -> bool:
    return len(run) >= 3 or (len(run) == 2 and min(s.text.count("\n") for s in run) >= 3)


def _row_run(
    shapes: Sequence[_Shape | None], first: _Shape, i: int, raw_words: Sequence[tuple[Any, ...]]
) -> list[_Shape]:
    """The longest run of row/grid blocks starting with ``first`` (at ``i``) that stack like
    table rows."""
    run = [first]
    while i + len(run) < len(shapes):
        nxt = shapes[i + len(run)]
        if nxt is None or nxt.kind == "column" or not _continues_rows(run[-1], nxt):
            break
        if nxt.kind == "grid" and not _is_grid(nxt, raw_words):
            break
        run.append(nxt)
    return run


def _column_run(shapes: Sequence[_Shape | None], first: _Shape, i: int) -> list[_Shape]:
    """The longest run of column blocks starting with ``first`` (at ``i``) standing side by
    side."""
    run = [first]
    while i + len(run) < len(shapes):
        nxt = shapes[i + len(run)]
        if nxt is None or nxt.kind != "column" or not _continues_columns(run[-1], nxt):
            break
        run.append(nxt)
    return run


def find_tables_fast(
    raw_words: Sequence[tuple[Any, ...]], raw_blocks: Sequence[tuple[Any, ...]]
) -> list[Table]:
    """Tables read off MuPDF's block layout (see the module docstring)."""
    shapes = _shapes(raw_words, raw_blocks)
    tables: list[Table] = []
    i = 0
    while i < len(shapes):
        shape = shapes[i]
        if shape is None or (shape.kind == "grid" and not _is_grid(shape, raw_words)):
            i += 1
            continue
        if shape.kind == "column":
            run = _column_run(shapes, shape, i)
            if not _column_run_is_table(run):
                i += 1
                continue
            tables.append(_table_from_columns(run, raw_words))
        else:
            run = _row_run(shapes, shape, i, raw_words)
            if len(run) < 2 and shape.kind != "grid":
                i += 1
                continue
            tables.append(_table_from_rows(run, raw_words))
        i += len(run)
    return tables


def find_tables_full(
    fz_page: Any, width: float, height: float, raw_blocks: Sequence[tuple[Any, ...]]
) -> list[Table]:
    """Tables from PyMuPDF's ``Page.find_tables`` (slow). Text blocks whose center lies in a
    table become its members."""
    tables: list[Table] = []
    claimed: set[int] = set()
    for found in fz_page.find_tables().tables:
        x1, y1, x2, y2 = found.bbox
        box = (x1 / width, y1 / height, x2 / width, y2 / height)
        members = []
        for index, block in enumerate(raw_blocks):
            cx, cy = (block[0] + block[2]) / 2, (block[1] + block[3]) / 2
            inside = box[0] <= cx <= box[2] and box[1] <= cy <= box[3]
            if inside and block[6] == 0 and index not in claimed:
                members.append(index)
        claimed.update(members)
        rows = found.extract()
        text = "\n".join(" | ".join(cell or "" for cell in row) for row in rows)
        tables.append((box, members, text))
    return tables
