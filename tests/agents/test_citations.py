"""The free-text citation parser: golden replies, targeted behaviors and fuzzed input.

Regenerate the golden ``.json`` files after a deliberate change with
``SCANRAG_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/agents/test_citations.py`` and review
the diff by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanrag.agents.citations import find_citations, parse_citations
from scanrag.agents.evidence import DocInfo, ParseContext, bbox_problem
from scanrag.agents.reply import apply_output
from scanrag.schemas import UNANSWERABLE, Status, Trajectory

GOLDEN = Path(__file__).parent / "golden" / "citations"
CASES: dict[str, dict[str, Any]] = json.loads((GOLDEN / "cases.json").read_text())


def _context(case: dict[str, Any]) -> ParseContext:
    primary = case.get("primary", {})
    return ParseContext(
        DocInfo(primary.get("id", ""), primary.get("name", ""), case["num_pages"]),
        tuple(DocInfo(**other) for other in case.get("others", [])),
    )


def _result(name: str) -> dict[str, Any]:
    text = (GOLDEN / f"{name}.txt").read_text()
    parsed = parse_citations(text, _context(CASES[name]))
    trajectory = apply_output(Trajectory(sample_id=name, strategy="test"), parsed, text)
    assert trajectory.raw_output == text
    return {"status": trajectory.status.value, "parsed": parsed.model_dump(mode="json")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    result = _result(name)
    expected_path = GOLDEN / f"{name}.json"
    if os.environ.get("SCANRAG_UPDATE_GOLDEN"):
        expected_path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    assert result == json.loads(expected_path.read_text())


def test_every_golden_input_has_a_case() -> None:
    assert {p.stem for p in GOLDEN.glob("*.txt")} == set(CASES)


def test_consecutive_citations_share_the_sentence() -> None:
    text = "Debt fell [page=2, bbox=[0, 0, 0.5, 0.5]] [page=3, bbox=[0, 0, 1, 1]]. Next one."
    parsed = parse_citations(text, ParseContext.with_pages(5))
    assert [c.sentence for c in parsed.citations] == ["Debt fell", "Debt fell"]
    assert [(f.page, f.text) for f in parsed.facts] == [(2, "Debt fell"), (3, "Debt fell")]


def test_mid_sentence_citations_take_their_own_clause() -> None:
    text = "Sales rose [page=1] while costs fell [page=2]."
    parsed = parse_citations(text, ParseContext.with_pages(5))
    assert [c.sentence for c in parsed.citations] == ["Sales rose", "while costs fell"]


def test_sentence_split_skips_abbreviations_and_decimals() -> None:
    text = "See Fig. 3 for details. The value is 3.5 vs. 2.1 in the baseline [page=4]."
    parsed = parse_citations(text, ParseContext.with_pages(5))
    assert parsed.citations[0].sentence == "The value is 3.5 vs. 2.1 in the baseline"


def test_prose_page_references_are_noted_not_cited() -> None:
    parsed = parse_citations("As shown on p. 5 and page 7, the answer is 4.\nAnswer: 4")
    assert parsed.citations == [] and parsed.pages == []
    assert [n["text"] for n in parsed.notes["non_citations"]] == ["p. 5", "page 7"]
    assert parsed.answer == "4"


def test_bracketed_page_without_value_is_not_a_citation() -> None:
    parsed = parse_citations("The total is 9 [page 5]. <answer>9</answer>")
    assert parsed.citations == []
    assert parsed.notes["non_citations"][0]["text"] == "page 5"


def test_citation_inside_code_or_math_is_ignored() -> None:
    text = "Use `f([page=2])` and $$a [page=3] b$$ here. Real one [page=4]. <answer>x</answer>"
    parsed = parse_citations(text, ParseContext.with_pages(5))
    assert [c.page for c in parsed.citations] == [4]


def test_inline_math_never_swallows_a_citation() -> None:
    # "$x [page=3] y$" is more likely two dollar signs around a citation than math.
    parsed = parse_citations("Costs $x [page=3] y$ rose.", ParseContext.with_pages(5))
    assert [c.page for c in parsed.citations] == [3]


def test_dollar_amounts_are_not_math() -> None:
    text = "It cost $5 [page=1] and then $6 [page=2]. <answer>$5</answer>"
    parsed = parse_citations(text, ParseContext.with_pages(5))
    assert [c.page for c in parsed.citations] == [1, 2]


def test_answer_citations_are_stripped_from_the_answer() -> None:
    parsed = parse_citations("<answer>42 [page=3, bbox=[0.1, 0.1, 0.2, 0.2]] units</answer>")
    assert parsed.answer == "42 units"
    assert parsed.pages == [3]


def test_two_different_answer_tags_are_ambiguous_and_unclosed_tag_reads_to_end() -> None:
    """Issue 20: the last tag used to win silently; neither is taken now (scanrag.agents.reply)."""
    parsed = parse_citations("<answer>draft</answer> thinking more <answer>final")
    assert parsed.answer is None and parsed.notes["ambiguous_answers"] == ["draft", "final"]
    assert parsed.notes["answer_tags"] == 2 and parsed.notes["answer_tag_unclosed"] is True
    assert parse_citations("thinking <answer>final").answer == "final"
    repeated = parse_citations("<answer>Final</answer> so: <answer>final.</answer>")
    assert repeated.answer == "Final" and "ambiguous_answers" not in repeated.notes


def test_unanswerable_is_normalized() -> None:
    assert parse_citations("<answer> UNANSWERABLE </answer>").answer == UNANSWERABLE
    assert parse_citations("Unanswerable.").answer == UNANSWERABLE


def test_bare_short_reply_counts_only_when_allowed() -> None:
    assert parse_citations("Paris").answer == "Paris"
    parsed = parse_citations("Paris", allow_bare=False)
    assert parsed.answer is None and not parsed.usable


def test_page_only_citation_is_valid_without_region() -> None:
    parsed = parse_citations(
        "Staff grew [page=2]. <answer>yes</answer>", ParseContext.with_pages(3)
    )
    assert parsed.citations[0].valid and parsed.regions == []
    assert parsed.facts[0].bbox is None and parsed.pages == [2]


def test_zero_page_is_out_of_range() -> None:
    parsed = parse_citations("Thing [page=0, bbox=[0, 0, 1, 1]].")
    assert not parsed.citations[0].valid and "1-based" in (parsed.citations[0].reason or "")
    assert parsed.pages == []


def test_element_type_key_is_kept() -> None:
    text = 'Row 3 [page=2, doc_page="2", bbox=[0, 0.1, 1, 0.2], type="table"].'
    parsed = parse_citations(text, ParseContext.with_pages(3))
    assert parsed.regions[0].element_type == "table"


def test_duplicate_boxes_make_one_region() -> None:
    text = "A [page=2, bbox=[0, 0, 1, 0.5]]. B [page=2, bbox=[0, 0, 1, 0.5]]."
    parsed = parse_citations(text, ParseContext.with_pages(3))
    assert len(parsed.regions) == 1
    assert [f.region_index for f in parsed.facts] == [0, 0]


def test_nothing_usable_is_unparsed_with_raw_kept() -> None:
    text = "Hmm.\n\nLet me think. I do not know what to say here, there is a lot to consider."
    trajectory = apply_output(
        Trajectory(sample_id="s", strategy="t"), parse_citations(text, allow_bare=False), text
    )
    assert trajectory.status == Status.UNPARSED and trajectory.raw_output == text


# --------------------------------------------------------------------------- fuzzing

_KEYS = ["page", "PAGE", "Page", " page ", "pg", "doc_page", "DOC_PAGE", "bbox", "BBOX", "box"]
_SEPS = ["=", ":", " = ", "==", ""]
_VALUES = st.one_of(
    st.integers(-5, 500).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789.,-[]()\"' abcxyz“”", max_size=12),
    st.lists(st.floats(-2, 2, allow_nan=False), max_size=6).map(
        lambda xs: "[" + ", ".join(f"{x:.3f}" for x in xs)
    ),
    st.lists(st.floats(-2, 2, allow_nan=False), max_size=6).map(
        lambda xs: "(" + ",".join(f"{x:.2f}" for x in xs) + ")"
    ),
)


@st.composite
def _malformed_citation(draw: st.DrawFn) -> str:
    parts = [
        draw(st.sampled_from(_KEYS)) + draw(st.sampled_from(_SEPS)) + draw(_VALUES)
        for _ in range(draw(st.integers(0, 4)))
    ]
    opener = draw(st.sampled_from(["[", "[ ", "[page=", "[PAGE: "]))
    closer = draw(st.sampled_from(["]", "", "]]", ")", "\n", " ]."]))
    return opener + draw(st.sampled_from([", ", ",", " ", ";"])).join(parts) + closer


_FILLER = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40
) | st.sampled_from(
    ["The value is 5. ", "p. 5 ", "`code [page=1]` ", "$x. y$ ", "<answer>", "\n- "]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_malformed_citation(), _FILLER), max_size=8), st.integers(1, 60))
def test_fuzzed_citations_never_raise_and_keep_raw(pieces: list[str], num_pages: int) -> None:
    text = "".join(pieces)
    parsed = parse_citations(text, ParseContext.with_pages(num_pages))
    trajectory = apply_output(Trajectory(sample_id="f", strategy="fuzz"), parsed, text)
    assert trajectory.raw_output == text
    for citation in parsed.citations:
        assert citation.raw and citation.raw in text
        if not citation.valid:
            assert citation.reason
        else:
            assert citation.page is not None and 1 <= citation.page <= num_pages
            assert citation.bbox is None or bbox_problem(citation.bbox) is None
    for region in parsed.regions:
        assert 1 <= region.page <= num_pages
    assert set(parsed.pages) <= set(range(1, num_pages + 1))
    # Every citation the scanner finds is kept, none silently dropped.
    assert len(parsed.citations) == len(find_citations(text))


def test_unclosed_issue_stops_at_the_answer() -> None:
    text = '<issue family="LE">Typo in the title [page=1].\n<answer>One issue.</answer>'
    parsed = parse_citations(text, ParseContext.with_pages(2))
    assert [i.description for i in parsed.issues] == ["Typo in the title"]
    assert parsed.answer == "One issue."
