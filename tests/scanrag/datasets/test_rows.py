"""Row bounds where rows enter (issue 31.1): nesting, text UTF-8 cannot store, bytes that are no
UTF-8, document names no file can have; each defect drops or fails its own row only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanrag.datasets import Dataset, DocumentPathError, LoadReport, resolve_document
from scanrag.datasets.base import drop_unstorable
from scanrag.datasets.fields import source_list
from scanrag.datasets.rows import MAX_DEPTH, literal, loads, row_problem
from scanrag.datasets.sources import maybe_json, read_records
from scanrag.schemas import Sample


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"id": "a", "question": "ok"}, None),
        (
            {"question": "x\ud800"},
            "field 'question' holds a lone surrogate (U+D800) at character 1",
        ),
        ({"m": {"k": ["a", "b\udfff"]}}, "field 'm.k[1]' holds a lone surrogate (U+DFFF)"),
        ({"m": {"k\ud800": 1}}, "a key of field 'm' holds a lone surrogate (U+D800)"),
        ({"m": [[[[1]]]]}, None),
        ({"m": json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)}, None),
        (
            {"m": json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))},
            f"field 'm' nests deeper than {MAX_DEPTH} levels",
        ),
        ({"q": "NUL \x00 and U+2028 \u2028 are text"}, None),
    ],
)
def test_row_problem(row: dict, problem: str | None) -> None:
    found = row_problem(row)
    assert (found is None) == (problem is None)
    if problem is not None:
        assert problem in str(found)


def test_the_first_defect_in_field_order_is_named() -> None:
    assert "field 'a'" in str(row_problem({"a": "\ud800", "b": "\ud801"}))


def test_field_literals_too_deep_are_value_errors() -> None:
    for text in ("[" * 100_000 + "]" * 100_000, "-" * 100_000 + "1", "1+" * 100_000 + "1"):
        with pytest.raises(ValueError):
            literal(text)
    with pytest.raises(ValueError, match="nested too deep"):
        loads("[" * 100_000 + "]" * 100_000)
    assert maybe_json("[" * 100_000) == "[" * 100_000  # left as text, as for bad JSON
    assert source_list("[" + "-" * 100_000 + "1]") == ["[" + "-" * 100_000 + "1]"]
    assert literal("['Chart', 'Table']") == ["Chart", "Table"]


def _jsonl(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_jsonl_line_that_is_no_utf8_is_dropped_alone(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", b'{"id": "a"}', b'{"id": "\xff\xfe"}', b'{"id": "c"}')
    records = read_records(path)
    assert [(i, r, why) for i, r, why in records] == [
        (0, {"id": "a"}, None),
        (1, None, "line 2 is not UTF-8 text"),
        (2, {"id": "c"}, None),
    ]


def test_jsonl_lines_end_at_newlines_only(tmp_path: Path) -> None:
    row = {"id": "a", "question": "one\u2028two\x1cthree\x85four"}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\r\n" + '{"id": "b"}\r', "utf-8")
    assert [r for _, r, _ in read_records(path)] == [row, {"id": "b"}]


def test_a_defective_row_keeps_its_id_in_the_reason(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", b'{"id": "a"}', b'{"id": 7, "question": "\\ud800"}')
    assert read_records(path)[1][2] == (
        "line 2 (id 7): field 'question' holds a lone surrogate (U+D800) at character 0, which "
        "UTF-8 cannot store"
    )


def test_a_json_array_element_too_deep_is_dropped_alone(tmp_path: Path) -> None:
    deep = '{"id": "deep", "m": "]}\\"[", "n": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = tmp_path / "samples.json"
    path.write_text(f'[{{"id": "a"}}, {deep} , {{"id": "c", "s": "[[{{"}}]')
    records = read_records(path)
    assert [(i, r) for i, r, _ in records] == [
        (0, {"id": "a"}),
        (1, None),
        (2, {"id": "c", "s": "[[{"}),
    ]
    assert records[1][2] == "item 1 nests deeper than 64 levels (too deep to read)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a\x00b.pdf", "holds a NUL character"),
        ("a\ud800.pdf", "holds a character the file system cannot encode (U+D800)"),
        ("x" * 256 + ".pdf", "has a part of 260 bytes; a file or folder name may be at most 255"),
        ("é" * 128 + ".pdf", "has a part of 260 bytes"),
        ("a/" * 2_100 + "d.pdf", "is 4,205 bytes long; a path may be at most 4,096"),
    ],
)
def test_document_names_no_file_can_have(tmp_path: Path, name: str, message: str) -> None:
    for allow_outside in (False, True):
        with pytest.raises(DocumentPathError, match="document name") as caught:
            resolve_document(tmp_path, name, allow_outside=allow_outside)
        assert message in str(caught.value)
    assert resolve_document(tmp_path, "x" * 251 + ".pdf") == tmp_path / ("x" * 251 + ".pdf")


def test_samples_a_loader_built_from_other_formats_are_checked_too(tmp_path: Path) -> None:
    """A plugin loader reading a CSV builds its samples without read_records."""
    good = Sample(id="a", doc_ids=["d.pdf"], question="fine?")
    bad = Sample(id="b", doc_ids=["d.pdf"], question="fine?", metadata={"note": "\udc80"})
    dataset = Dataset(
        name="csv", samples=[good, bad], pdf_dir=tmp_path, report=LoadReport(rows_kept=2)
    )
    drop_unstorable(dataset)
    assert [s.id for s in dataset.samples] == ["a"] and dataset.report.rows_kept == 1
    (dropped,) = dataset.report.dropped
    assert dropped.id == "b"
    assert dropped.reason.startswith("sample field 'metadata.note' holds a lone surrogate")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"q": "plain"}', (False, False)),
        ('{"q": "\\ud800"}', (True, False)),
        ('{"q": "\\uDBFF\\uDFFF"}', (True, False)),  # a pair: suspected, then found sound
        ('{"q": "\\\\ud800 is text"}', (True, False)),  # an escaped backslash: the walk decides
        ('{"q": "\\u00e9\\u2028"}', (False, False)),
        ('{"m": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}", (False, True)),
    ],
)
def test_suspects_never_miss_what_the_walk_finds(text: str, expected: tuple[bool, bool]) -> None:
    from scanrag.datasets.rows import suspects

    assert suspects(text) == expected
    value, (surrogates, deep) = json.loads(text), expected
    looked = row_problem(value, text=surrogates) if surrogates or deep else None
    assert looked == row_problem(value)
