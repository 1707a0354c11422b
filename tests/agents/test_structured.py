"""The JSON output path, and its agreement with the free-text citation path."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanrag.agents.citations import parse_citations
from scanrag.agents.evidence import ParseContext, ParsedOutput, format_citation
from scanrag.agents.reply import apply_output
from scanrag.agents.structured import (
    parse_structured,
    schema_for,
    schema_sketch,
)
from scanrag.parsing import first_object
from scanrag.schemas import Status, Trajectory
from scanrag.tasks import task_names, task_spec

COMPARED = ("pages", "regions", "facts", "answer", "citations")

# (sentence, page, doc_page, bbox, element_type)
Content = list[tuple[str, int, str | None, list[float] | None]]


def _as_text(content: Content, answer: str) -> str:
    lines = [f"{s} {format_citation(p, d, b)}." for s, p, d, b in content]
    return "\n".join(lines) + f"\n<answer>{answer}</answer>"


def _as_json(content: Content, answer: str) -> str:
    facts = []
    for s, p, d, b in content:
        fact: dict[str, Any] = {"page": p, "text": s}
        if d is not None:
            fact["doc_page"] = d
        if b is not None:
            fact["bbox"] = b
        facts.append(fact)
    regions = [{"page": p, "bbox": b} for _, p, _, b in content if b is not None]
    return json.dumps({"pages": [], "regions": regions, "facts": facts, "answer": answer})


def _fields(parsed: ParsedOutput) -> dict[str, Any]:
    dumped = parsed.model_dump(mode="json")
    return {key: dumped[key] for key in COMPARED}


def test_both_paths_agree_on_a_fixed_reply() -> None:
    content: Content = [
        ("Revenue reached 4 million in 2021", 3, "1", [0.1, 0.2, 0.9, 0.3]),
        ("Costs fell by 8 percent", 4, "2", [0.1, 0.5, 0.9, 0.55]),
        ("The note has no box", 5, None, None),
        ("This box is off the page", 5, "3", [0.1, 0.2, 1.3, 0.3]),
        ("This page does not exist", 40, "38", [0.1, 0.1, 0.2, 0.2]),
    ]
    context = ParseContext.with_pages(10)
    free = parse_citations(_as_text(content, "4 million"), context)
    structured = parse_structured(_as_json(content, "4 million"), context)
    assert _fields(free) == _fields(structured)
    assert free.pages == [3, 4, 5]
    assert [c.valid for c in free.citations] == [True, True, True, False, False]
    assert len(free.regions) == 2 and free.answer == "4 million"


def _trajectory(parsed: ParsedOutput, raw: str) -> dict[str, Any]:
    trajectory = apply_output(Trajectory(sample_id="q", strategy="s"), parsed, raw)
    dumped = trajectory.model_dump(mode="json", exclude={"raw_output", "metadata"})
    return dumped | {"status": str(trajectory.status)}


ISSUE_TEXT = """<issue family="CF">
The total does not add up [page=3, doc_page="1", bbox=[0.1, 0.2, 0.9, 0.3]].
Reasoning:
1. Rows sum to 40
2. The table says 45
</issue>
<issue family="le">Two terms name one thing [page=7, doc_page="5", bbox=[0.2, 0.1, 0.8, 0.15]].
Reasoning: first use on page 7; second on page 9</issue>
<answer>Two errors found</answer>"""
ISSUE_JSON = {
    "issues": [
        {
            "description": "The total does not add up.",
            "family": "CF",
            "locations": [{"page": 3, "bbox": [0.1, 0.2, 0.9, 0.3], "doc_page": "1"}],
            "reasoning_steps": ["Rows sum to 40", "The table says 45"],
        },
        {
            "description": "Two terms name one thing",
            "family": "le",
            "locations": [{"page": 7, "bbox": [0.2, 0.1, 0.8, 0.15], "doc_page": "5"}],
            "reasoning_steps": ["first use on page 7", "second on page 9"],
        },
    ],
    "answer": "Two errors found",
}


@pytest.mark.parametrize("task", ["qa", "error_detection"])
def test_both_paths_give_identical_trajectories(task: str) -> None:
    context = ParseContext.with_pages(10)
    if task == "qa":
        content: Content = [
            ("Revenue reached 4 million in 2021", 3, "1", [0.1, 0.2, 0.9, 0.3]),
            ("Costs fell by 8 percent", 4, "2", [0.1, 0.5, 0.9, 0.55]),
            ("This box is off the page", 5, "3", [0.1, 0.2, 1.3, 0.3]),
        ]
        text, data = _as_text(content, "4 million"), _as_json(content, "4 million")
    else:
        text, data = ISSUE_TEXT, json.dumps(ISSUE_JSON)
    free = _trajectory(parse_citations(text, context), text)
    structured = _trajectory(parse_structured(data, context), data)
    assert free == structured
    if task == "error_detection":
        assert [i["description"] for i in free["issues"]] == [
            "The total does not add up",
            "Two terms name one thing",
        ]
        assert [c["doc_page"] for c in free["citations"]] == ["1", "5"]
        assert free["issues"][1]["family"] == "LE" and free["pages"] == [3, 7]


def test_json_issue_pages_out_of_range_are_noted() -> None:
    data = {"issues": [{"description": "x", "pages": [2, 0, 99]}], "answer": "one error"}
    parsed = parse_structured(json.dumps(data), ParseContext.with_pages(10))
    assert parsed.issues[0].pages == [2]
    assert parsed.notes["invalid_issue_pages"] == [0, 99]


_WORDS = st.sampled_from(["revenue", "grew", "the", "board", "costs", "fell", "in", "2021", "42"])
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=6).map(lambda ws: " ".join(ws).capitalize())
_COORD = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.5, -0.2])
_BBOX = st.none() | st.lists(_COORD, min_size=4, max_size=4)
_ITEM = st.tuples(_SENTENCE, st.integers(1, 15), st.none() | st.sampled_from(["1", "iv"]), _BBOX)


@settings(max_examples=150, deadline=None)
@given(st.lists(_ITEM, min_size=0, max_size=6), _SENTENCE, st.integers(1, 12))
def test_both_paths_agree_on_generated_content(
    content: Content, answer: str, num_pages: int
) -> None:
    context = ParseContext.with_pages(num_pages)
    free = parse_citations(_as_text(content, answer), context)
    structured = parse_structured(_as_json(content, answer), context)
    assert _fields(free) == _fields(structured)


def test_fenced_json_with_extra_prose_is_read() -> None:
    text = 'Here you go:\n```json\n{"answer": "7", "pages": [2]}\n```\nThanks.'
    parsed = parse_structured(text, ParseContext.with_pages(3))
    assert parsed.answer == "7" and parsed.pages == [2] and parsed.parser == "json"


def test_truncated_json_is_closed_and_noted() -> None:
    # the fact cut mid-number ("5" of "5.2 million"?) is dropped, complete ones are kept
    text = (
        '{"pages": [2, 3], "facts": [{"page": 3, "text": "Costs fell"}, '
        '{"page": 2, "text": "Revenue was 5'
    )
    parsed = parse_structured(text, ParseContext.with_pages(5))
    assert parsed.notes["json_repaired"] is True
    assert parsed.pages == [2, 3] and [f.text for f in parsed.facts] == ["Costs fell"]


def test_a_truncated_reply_keeps_its_outer_object_not_a_nested_one() -> None:
    # A reply cut by max_tokens after two complete facts: the answer that came first must
    # survive (the nested fact objects parse on their own and used to be taken instead).
    text = (
        '{"answer":"50.9" ,"facts":[{"page":6,"text":"[box: 0.1, 0.1, 0.4, 0.2] Survey 2022",'
        '"bbox":[0.1, 0.1, 0.4, 0.2]},{"page":6,"text":"3. Housing","bbox":[0.1, 0.3, 0.2, 0.4]},'
        '{"page":6,"text":"[box: 0.30, 0.26,'
    )
    parsed = parse_structured(text, ParseContext.with_pages(10))
    assert parsed.answer == "50.9" and parsed.pages == [6]
    assert [f.text for f in parsed.facts] == ["Survey 2022", "3. Housing"]  # box marker gone
    assert parsed.notes == {"json_repaired": True}


@pytest.mark.parametrize(
    ("cut", "closed"),
    [
        ('{"answer": "The pop', {"answer": "The pop"}),
        ('{"a": [1, 2, {"b": "x', {"a": [1, 2]}),
        ('{"a": {"b": ["x", "y', {"a": {"b": ["x"]}}),
        ('{"facts": [', {"facts": []}),
        ('{"p": [7], "f": [{"page": 7, "bbox": [0.12, 0.36, 0.', {"p": [7], "f": []}),
        ('{"a": "x", "f": [{"t": 1}, {"b": [0.1, 0.', {"a": "x", "f": [{"t": 1}]}),
        ('{"a": "x", "p": [1, 2, 3', {"a": "x", "p": [1, 2, 3]}),
        ('{"a": "x", "p": [1, 2, -', {"a": "x", "p": [1, 2]}),
        ('{"a": "x", "s": 0.', {"a": "x"}),
        ('{"a": "x", "ok": tr', {"a": "x"}),
        ('{"s": "a\\"b', {"s": 'a"b'}),
    ],
)
def test_cut_json_is_closed_keeping_complete_parts(cut: str, closed: dict) -> None:
    assert first_object(cut) == (closed, True)


def test_first_object_drops_a_dangling_key() -> None:
    data, repaired = first_object('{"answer": "x", "pag')
    assert data == {"answer": "x"} and repaired


def test_bad_items_become_invalid_citations_in_order() -> None:
    text = json.dumps(
        {
            "facts": [
                {"page": 2, "text": "Fine"},
                {"page": "two", "text": "Bad page"},
                {"text": "No page at all"},
            ],
            "regions": [{"page": 2, "bbox": "0.1 0.2"}],
            "answer": "ok",
        }
    )
    parsed = parse_structured(text, ParseContext.with_pages(3))
    assert [(c.sentence, c.valid) for c in parsed.citations] == [
        ("Fine", True),
        ("Bad page", False),
        ("No page at all", False),
        ("", False),
    ]
    assert all(c.reason for c in parsed.citations[1:])
    assert len(parsed.notes["invalid_items"]) == 3


def test_explicit_pages_out_of_range_are_noted() -> None:
    parsed = parse_structured(
        '{"pages": [1, 9, "x", 0], "answer": "a"}', ParseContext.with_pages(4)
    )
    assert parsed.pages == [1]
    assert parsed.notes["invalid_pages"] == ["x", 0, 9]


def test_region_without_fact_is_a_textless_citation() -> None:
    text = '{"regions": [{"page": 2, "bbox": [0, 0, 1, 0.5], "element_type": "table"}]}'
    parsed = parse_structured(text, ParseContext.with_pages(3))
    assert parsed.regions[0].element_type == "table"
    assert parsed.citations[0].sentence == "" and parsed.facts == []
    assert parsed.pages == [2]


@pytest.mark.parametrize("text", ["", "  ", "{not: json", "[1, 2, 3]", "{{{{", "```json\n{"])
def test_garbage_is_unparsed_with_raw_kept(text: str) -> None:
    parsed = parse_structured(text, ParseContext.with_pages(3))
    trajectory = apply_output(Trajectory(sample_id="s", strategy="t"), parsed, text)
    assert trajectory.status == Status.UNPARSED
    assert trajectory.raw_output == text


def test_free_text_reply_on_the_json_path_still_parses() -> None:
    parsed = parse_structured("It grew [page=2]. <answer>yes</answer>", ParseContext.with_pages(3))
    assert parsed.parser == "json->citations" and parsed.answer == "yes" and parsed.pages == [2]


def test_task_fields_issues_chain_verdict() -> None:
    text = json.dumps(
        {
            "issues": [
                {
                    "description": "Total is wrong",
                    "family": "cf",
                    "locations": [{"page": 4, "bbox": [0.1, 0.1, 0.9, 0.3]}],
                    "reasoning_steps": ["rows sum to 10", " ", "total says 12"],
                }
            ],
            "evidence_chain": [{"anchor": "Fig. 2", "text": "curve", "page": 3}],
            "verdict": "yes",
            "answer": ["a", "b"],
        }
    )
    parsed = parse_structured(text, ParseContext.with_pages(5))
    issue = parsed.issues[0]
    assert issue.family == "CF" and issue.pages == [4] and len(issue.locations) == 1
    assert issue.reasoning_steps == ["rows sum to 10", "total says 12"]
    assert parsed.pages == [4] and parsed.facts[0].text == "Total is wrong"
    assert parsed.evidence_chain[0].anchor == "Fig. 2" and parsed.verdict is True
    assert parsed.answer == "a, b"


@pytest.mark.parametrize("task", task_names())
def test_schema_per_task_lists_its_fields(task: str) -> None:
    schema = schema_for(task_spec(task))
    listed, required = task_spec(task).fields, task_spec(task).required
    assert list(schema["properties"]) == list(listed)
    assert schema["required"] == list(required)
    # every reference resolves (IssueOut's locations point at RegionOut) and no def is unused
    text = json.dumps(schema)
    referenced = set(re.findall(r"#/\$defs/(\w+)", text))
    assert referenced == set(schema.get("$defs", {}))


@pytest.mark.parametrize("task", task_names())
def test_schema_per_task_converts_to_a_grammar_in_its_own_order(task: str) -> None:
    gbnf = pytest.importorskip("llama_cpp.llama_grammar").json_schema_to_gbnf
    schema = schema_for(task_spec(task))
    root = next(line for line in gbnf(json.dumps(schema)).splitlines() if line.startswith("root"))
    positions = [root.index(f"{name.replace('_', '-')}-kv") for name in schema["required"]]
    assert positions == sorted(positions)  # required fields in the listed order


def test_schema_sketch_is_compact_and_marks_optional_keys() -> None:
    sketch = schema_sketch(schema_for(task_spec("qa")))
    assert sketch.startswith('{"answer": str, "pages": [int] (max 10), "facts": [{"page": int')
    assert '"regions"?: [{"page": int, "bbox": [float]' in sketch
    assert len(sketch) < len(json.dumps(schema_for(task_spec("qa")))) / 3


_KEYS = ["pages", "facts", "regions", "answer", "issues", "page", "bbox", "text"]
_KEYS += ["evidence_chain", "verdict", "locations", "anchor"]
_SCALARS = st.none() | st.booleans() | st.integers(-3, 50) | st.floats() | st.text(max_size=8)
_JSONISH = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5)
    ),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(_JSONISH, st.booleans())
def test_fuzzed_json_never_raises(value: Any, truncate: bool) -> None:
    text = json.dumps(value)
    if truncate:
        text = text[: len(text) // 2]
    parsed = parse_structured(text, ParseContext.with_pages(10))
    trajectory = apply_output(Trajectory(sample_id="f", strategy="fuzz"), parsed, text)
    assert trajectory.raw_output == text
    assert set(parsed.pages) <= set(range(1, 11))
    assert all(c.reason for c in parsed.citations if not c.valid)
