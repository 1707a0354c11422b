"""The official-parser mode: DocScope's released citation grammar and tolerance rules,
case by case (expected values worked out by hand from the released rules)."""

from __future__ import annotations

import pytest

from scanrag.evaluation.docscope.official.parser import (
    is_normalized,
    last_answer,
    parse_official,
    split_sentences,
    valid_bbox,
)

CITE = '[page=5, doc_page="3", bbox=[0.412, 0.215, 0.687, 0.248]]'


def pages(text: str) -> list[int]:
    return parse_official(text).predicted_pages


def boxes(text: str) -> list[list[float]]:
    return [c.bbox for c in parse_official(text).citations]


def test_the_grammar_and_its_doc_page_spellings() -> None:
    text = (
        f"Revenue was $5.2B {CITE}. "
        "Costs were 3 [page=6, doc_page=iv, bbox=[0.1, 0.2, 0.3, 0.4]]. "
        "Staff: 40 [page=7, doc_page='A-3', bbox=[0,0,1,1]]. "
        'Debt: 2 [PAGE = 8 , DOC_PAGE = "none" , BBOX = [ .5 , .5 , +.9 , 1 ] ].'
    )
    parsed = parse_official(text)
    assert parsed.predicted_pages == [5, 6, 7, 8]
    assert [c.doc_page for c in parsed.citations] == ["3", "iv", "A-3", "none"]
    assert parsed.citations[3].bbox == [0.5, 0.5, 0.9, 1.0]
    assert parsed.has_answer_tag is False and parsed.answer is None


def test_citation_broken_across_lines_counts() -> None:
    text = 'Revenue was 5 [page=3,\n  doc_page="2",\n  bbox=[0.1, 0.2,\n 0.3, 0.4]\n]. Done.'
    parsed = parse_official(text)
    assert parsed.predicted_pages == [3]
    assert parsed.citations[0].bbox == [0.1, 0.2, 0.3, 0.4]
    assert parsed.citations[0].sentence == "Revenue was 5."


def test_citations_inside_backticks_and_code_blocks_count() -> None:
    text = (
        'Revenue was 5 `[page=4, doc_page="none", bbox=[0.1, 0.1, 0.2, 0.2]]`. '
        'Then:\n```\nCosts [page=6, doc_page="1", bbox=[0.1, 0.1, 0.2, 0.2]]\n```\n'
        "A `[page=9]` span is no citation."
    )
    assert pages(text) == [4, 6]


def test_loose_runs_missing_doc_page_and_single_brackets() -> None:
    text = (
        'Rows [page=9, doc_page="1", bbox=[77, 553, 159, 568],\n'
        " [page=9, bbox=[77, 601, 159, 617],\n"
        ' [page=12, doc_page="4", bbox=[186, 121, 452, 137]]]'
    )
    parsed = parse_official(text)
    assert [c.page for c in parsed.citations] == [9, 9, 12]
    assert parsed.predicted_pages == [9, 12]
    assert [c.doc_page for c in parsed.citations] == ["1", "none", "4"]
    assert not any(c.is_normalized for c in parsed.citations)
    assert len(parsed.invalid_citations) == 3


@pytest.mark.parametrize(
    "bad",
    [
        '[page=2, doc_page="1", bbox=[0.1, 0.2, 1., 0.5]]',  # "1." is not a number
        '[page=2, doc_page="1", bbox=[1e-1, 0.2, 0.3, 0.5]]',  # no exponents
        '[page=2, doc_page="1", bbox=[0.1, 0.2, 0.3]]',  # three numbers
        '[page=two, doc_page="1", bbox=[0.1, 0.2, 0.3, 0.4]]',
        '[page=-2, doc_page="1", bbox=[0.1, 0.2, 0.3, 0.4]]',
        '(page=2, doc_page="1", bbox=[0.1, 0.2, 0.3, 0.4])',
        '[doc_page="1", page=2, bbox=[0.1, 0.2, 0.3, 0.4]]',
        "p. 2 and page 3",
    ],
)
def test_what_is_not_a_citation(bad: str) -> None:
    assert parse_official(f"Revenue was 5 {bad}.").citations == []


def test_box_flags() -> None:
    assert is_normalized([-0.01, 0, 1.5, 1.5])
    assert not is_normalized([-0.02, 0, 1, 1])
    assert not is_normalized([0, 0, 1.51, 1])
    assert not is_normalized([0, 0, 1])
    assert valid_bbox([0.0, 0.0, 1.0, 1.0])
    assert not valid_bbox([0.2, 0.1, 0.2, 0.5])  # x1 == x2: strict order
    assert not valid_bbox([0.1, 0.1, 1.2, 0.5])
    assert not valid_bbox([0.5, 0.1, 0.2, 0.5])
    text = (
        "A [page=0, doc_page=none, bbox=[0.1, 0.1, 1.2, 0.5]]. "
        "B [page=2, doc_page=none, bbox=[0.1, 0.1, 0.1, 0.5]]. "
        "C [page=2, doc_page=none, bbox=[0.1, 0.1, 0.3, 0.5]]."
    )
    parsed = parse_official(text)
    assert parsed.predicted_pages == [0, 2]  # every cited page, whatever its box or range
    assert [c.is_normalized for c in parsed.citations] == [True, True, True]
    assert [c.sentence for c in parsed.invalid_citations] == ["A.", "B."]


@pytest.mark.parametrize(
    ("text", "answer", "tag"),
    [
        ("Reasoning. <answer> 11 - 30 mmbf </answer>", "11 - 30 mmbf", True),
        ("<answer>first</answer> more <ANSWER>\n second \n</Answer>", "second", True),
        ("<answer>first</answer> then <answer>unclosed", "first", True),
        ("<answer></answer>", "", True),
        ("<answer> a <answer> b </answer>", "a <answer> b", True),
        ("Answer: 12", None, False),
        ("<answer>12", None, False),
    ],
)
def test_last_complete_answer_tag(text: str, answer: str | None, tag: bool) -> None:
    parsed = parse_official(text)
    assert (parsed.answer, parsed.has_answer_tag) == (answer, tag)
    assert last_answer(text) == answer


def test_reasoning_is_the_text_before_the_last_answer() -> None:
    assert parse_official("Step one.\n<answer>x</answer>\n").reasoning == "Step one."
    assert parse_official("No tag.").reasoning == "No tag."


def test_sentences_of_citations() -> None:
    text = (
        f"Intro line. The U.S. revenue was $5.2 billion in Jan. 2023 {CITE}. "
        f"Costs were 3.5 {CITE} {CITE}. "
        f"Growth was 13%. {CITE}. \n"
        f"- Item one {CITE}\n"
        f"## Heading two {CITE}\n\n"
        "<answer>5.2</answer>"
    )
    sentences = [c.sentence for c in parse_official(text).citations]
    assert sentences == [
        "The U.S. revenue was $5.2 billion in Jan. 2023.",
        "Costs were 3.5.",
        "Costs were 3.5.",
        "Growth was 13%.",  # a citation alone after a period goes to the sentence before
        "Item one ## Heading two",  # no terminator between the lines: one sentence
        "Item one ## Heading two",
    ]


def test_split_sentences_protects_abbreviations_and_decimals() -> None:
    text = "Dr. Smith, Ph.D., paid 3.5 on Sept. 3! Next? Yes.\n\nEnd"
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == [
        "Dr. Smith, Ph.D., paid 3.5 on Sept. 3! Next?",  # no terminator right after a digit
        " Yes.",
        "\n\n",
        "End",
    ]


def test_odd_input_never_raises() -> None:
    for text in ["", "[[[[", "<answer>", "[page=1, doc_page=", "```[page=1", "\ue000" * 3]:
        parsed = parse_official(text)
        assert parsed.citations == [] and parsed.sentence_splitter == "regex_fallback"
