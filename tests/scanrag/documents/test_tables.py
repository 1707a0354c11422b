"""The fast table finder's line and row grouping, on hand-made MuPDF word tuples."""

from __future__ import annotations

from scanrag.documents.tables import _group_rows, _Line, _lines_of, find_tables_fast


def _word(x1: float, y1: float, x2: float, y2: float, text: str, line: int, block: int = 0):
    return (x1, y1, x2, y2, text, block, line, 0)


def test_lines_collect_their_words_in_first_seen_order() -> None:
    words = [
        _word(0.10, 0.10, 0.20, 0.12, "Net", 0),
        _word(0.22, 0.09, 0.30, 0.12, "sales", 0),
        _word(0.60, 0.10, 0.70, 0.13, "1,200", 1),
        _word(0.31, 0.10, 0.40, 0.125, "total", 0),  # line 0 again, after line 1
    ]
    lines = _lines_of(words, 0, len(words))
    assert lines == [
        _Line(0.10, 0.09, 0.40, 0.125, "Net sales total"),
        _Line(0.60, 0.10, 0.70, 0.13, "1,200"),
    ]
    assert _lines_of(words, 2, 3) == [_Line(0.60, 0.10, 0.70, 0.13, "1,200")]


def test_rows_group_lines_that_overlap_the_first_one_by_half_a_height() -> None:
    a = _Line(0.5, 0.100, 0.6, 0.120, "b")
    b = _Line(0.1, 0.105, 0.2, 0.125, "a")  # overlaps a by 0.015 of 0.020: same row
    c = _Line(0.1, 0.116, 0.2, 0.136, "c")  # overlaps b, but a (the row's first) only by 0.004
    d = _Line(0.1, 0.200, 0.2, 0.220, "d")
    rows = _group_rows([a, d, c, b])
    assert [[line.text for line in row] for row in rows] == [["a", "b"], ["c"], ["d"]]
    flat = _Line(0.1, 0.3, 0.2, 0.3, "zero height")  # never side by side with anything
    assert len(_group_rows([flat, _Line(0.3, 0.3, 0.4, 0.3, "also")])) == 2


def test_a_grid_block_becomes_a_table_with_cells() -> None:
    cells = [("Year", "2023"), ("Sales", "12"), ("Costs", "7")]
    words = []
    for row, (left, right) in enumerate(cells):
        y = 0.1 + 0.02 * row
        words.append(_word(0.1, y, 0.2, y + 0.02, left, 2 * row))
        words.append(_word(0.5, y, 0.6, y + 0.02, right, 2 * row + 1))
    text = "".join(f"{left}\n{right}\n" for left, right in cells)
    block = (0.1, 0.1, 0.6, 0.16, text, 0, 0)  # 6 lines in 3 line heights: a grid
    (table,) = find_tables_fast(words, [block])
    assert table == ((0.1, 0.1, 0.6, 0.16), [0], "Year | 2023\nSales | 12\nCosts | 7")
