"""``anchor_keys`` returns every anchor a field names, not just the first one."""

from __future__ import annotations

import pytest

from scanrag.evaluation.sinbench.metrics import anchor_keys


@pytest.mark.parametrize(
    ("field", "keys"),
    [
        ("<x 2>, Table 1", ["fig:2", "table:1"]),
        ("<x1>, <x3>", ["fig:1", "fig:3"]),
        ("Table 1, <x 2>", ["table:1", "fig:2"]),
        ("Figure 2 and Table 3", ["fig:2", "table:3"]),
        ("Tables 1 and 2", ["table:1", "table:2"]),
        ("Figs. 2, 3b & 4", ["fig:2", "fig:3", "fig:4"]),
        ("Table S1; Fig. 2", ["table:s1", "fig:2"]),
        ("Fig. 2 / Fig. 2", ["fig:2"]),
        ("x2", ["fig:2"]),
        ("<x 7>", ["fig:7"]),
        ("3", ["fig:3"]),
        ("nothing here", []),
        ("", []),
        (None, []),
    ],
)
def test_every_anchor_of_a_field(field: str | None, keys: list[str]) -> None:
    assert anchor_keys(field) == keys


def test_aliases_apply_to_each_anchor() -> None:
    assert anchor_keys("Fig. 2, Table 1", {"Figure 2": "Figure 5"}) == ["fig:5", "table:1"]
    assert anchor_keys("Table 1, <x 2>", {"<x2>": "Figure 9"}) == ["table:1", "fig:9"]
