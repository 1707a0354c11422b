"""The free-text citation parser at its edges: citations at the very start of a reply or cut
inside a box, every tolerated variant of the grammar (spec §1 and the module docstring), the
notes it records, and where the answer comes from."""

from __future__ import annotations

import pytest

from scanrag.agents.citations import find_citations, parse_citations
from scanrag.agents.evidence import ParseContext

CTX = ParseContext.with_pages(9)
BOX = [0.1, 0.1, 0.2, 0.2]


def one(text: str) -> tuple[dict, dict]:
    parsed = parse_citations(text, CTX)
    assert len(parsed.citations) == 1, parsed.citations
    return parsed.citations[0].model_dump(exclude_none=True), parsed.notes


def test_citation_at_the_very_start_of_a_reply() -> None:
    parsed = parse_citations(
        "[page=2, bbox=[0.1, 0.1, 0.2, 0.2]] Revenue rose. <answer>9</answer>", CTX
    )
    (citation,) = parsed.citations
    assert citation.sentence == "" and citation.page == 2 and citation.bbox == BOX
    assert parsed.answer == "9" and parsed.notes == {"answer_source": "answer_tag"}
    found = find_citations("[page=2] x")
    assert (found[0].start, found[0].end) == (0, 8)


@pytest.mark.parametrize(
    "text",
    [
        "Revenue rose to 9 [page=2, bbox=[0.1, 0.2",
        "Revenue rose to 9 [page=2, bbox=[0.1, 0.2\nNext line.",
    ],
)
def test_citation_cut_inside_a_box(text: str) -> None:
    citation, notes = one(text)
    assert citation["page"] == 2 and citation["bbox"] == [0.1, 0.2]
    assert citation["raw"] == "[page=2, bbox=[0.1, 0.2"
    assert citation["valid"] is False and citation["reason"] == "bbox needs 4 numbers, got 2"
    assert citation["sentence"] == "Revenue rose to 9"
    assert notes["citation_notes"] == [
        {"index": 0, "notes": ["bbox list not closed", "citation not closed"]}
    ]


def test_citation_missing_only_its_closing_bracket() -> None:
    citation, notes = one("Rev [page=2, bbox=[0.1, 0.1, 0.2, 0.2] x")
    assert citation["bbox"] == BOX and citation["valid"] is True
    assert notes["citation_notes"] == [{"index": 0, "notes": ["citation not closed"]}]


def test_an_overlong_citation_is_cut_at_400_characters() -> None:
    text = "Rev [page=2" + " " * 420 + ", bbox=[0.1, 0.1, 0.2, 0.2]] x"
    citation, notes = one(text)
    assert "bbox" not in citation and len(citation["raw"]) == 400
    assert notes["citation_notes"][0]["notes"] == ["citation not closed"]


@pytest.mark.parametrize(
    ("text", "doc_page"),
    [
        ('[page=2, doc_page="iv", bbox=[0.1,0.1,0.2,0.2]]', "iv"),
        ("[page=2, doc_page='iv', bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, doc_page=“iv”, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, doc_page=‘iv’, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, doc_page=«iv», bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, doc_page=iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2 doc_page=iv bbox=[0.1,0.1,0.2,0.2]]", "iv"),  # spaces only between keys
        ("[page=2; doc_page = iv; bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[Page: 2, Doc Page: iv, BBox: [0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, printed_page=iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, page_label=iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, docpage=iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, doc-page=iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ('[page=2, doc_page="i v", bbox=[0.1,0.1,0.2,0.2]]', "i v"),
        ('[page=2, doc_page=" iv ", bbox=[0.1,0.1,0.2,0.2]]', "iv"),
        ("[page=2, doc_page=”iv”, bbox=[0.1,0.1,0.2,0.2]]", "iv"),  # closing marks opening
        ("[page=2, doc_page=’iv’, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ('[page=2, doc_page=“iv", bbox=[0.1,0.1,0.2,0.2]]', "iv"),  # a straight quote closes
        ("[page=2, Page Label: iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, printed page=iv, bbox=[0.1,0.1,0.2,0.2]]", "iv"),
        ("[page=2, doc_page=iv x, bbox=[0.1,0.1,0.2,0.2]]", "iv x"),  # no key after the space
        ("[doc_page=iv page=2 bbox=[0.1,0.1,0.2,0.2]]", "iv"),
    ],
)
def test_doc_page_spellings(text: str, doc_page: str) -> None:
    citation, _ = one(f"Revenue {text} x")
    assert (citation["page"], citation["doc_page"], citation["bbox"]) == (2, doc_page, BOX)


def test_an_unterminated_quote_stops_at_the_line_end() -> None:
    citation, notes = one('Rev [page=2, doc_page="iv\nbbox=[0.1,0.1,0.2,0.2]] x')
    assert citation["doc_page"] == "iv" and "bbox" not in citation
    assert notes["citation_notes"][0]["notes"] == ["citation not closed"]


@pytest.mark.parametrize(
    "text",
    [
        "[page=2, bbox=0.1, 0.1, 0.2, 0.2]",  # no brackets around the numbers
        "(page=2, bbox=(0.1, 0.1, 0.2, 0.2))",  # round brackets
        "[pg=2, box=[0.1 0.1 0.2 0.2]]",  # aliases, spaces between numbers
        "[bounding_box=[0.1, 0.1, 0.2, 0.2], page=2]",  # bbox first
        "[page=2, bbox=[1e-1, 1E-1, .2, 2e-1]]",  # exponents and a bare decimal point
        "[page=2, bbox=[+0.1, 0.1, 0.2, 0.2]]",
        "[page=2, bounding box=[0.1, 0.1, 0.2, 0.2]]",
    ],
)
def test_bbox_spellings(text: str) -> None:
    citation, _ = one(f"Revenue {text} x")
    assert citation["page"] == 2 and citation["bbox"] == pytest.approx(BOX)


def test_malformed_values_are_reported() -> None:
    citation, _ = one("Rev [page=2, bbox=[0.1, abc, 0.2]] and more")
    assert citation["bbox"] == [0.1] and citation["reason"] == "malformed bbox: non-numeric value"
    assert citation["raw"] == "[page=2, bbox=[0.1, abc, 0.2]]"
    citation, _ = one("Rev [page=2, bbox=]")
    assert "bbox" not in citation and citation["reason"] == "malformed bbox: no numbers"
    citation, _ = one("Rev [page=2, bbox=[abc]]")
    assert "bbox" not in citation and citation["reason"] == "malformed bbox: non-numeric value"
    citation, _ = one("Rev [page=five, bbox=[0.1,0.1,0.2,0.2]]")
    assert "page" not in citation and citation["reason"] == "malformed page value 'five'"
    citation, _ = one('Rev [page="3", bbox=[0.1,0.1,0.2,0.2]]')
    assert citation["page"] == 3 and citation["valid"] is True


def test_first_value_of_a_repeated_key_wins_and_unknown_keys_are_noted() -> None:
    citation, notes = one("Rev [page=2, pg=3, bbox=[0.1,0.1,0.2,0.2]]")
    assert citation["page"] == 2 and "citation_notes" not in notes
    citation, notes = one("Rev [page=2, foo=bar, bbox=[0.1,0.1,0.2,0.2]]")
    assert citation["page"] == 2 and citation["bbox"] == BOX
    assert notes["citation_notes"] == [{"index": 0, "notes": ["unknown key 'foo'"]}]


def test_element_type_and_document_keys() -> None:
    parsed = parse_citations("Rev [page=3, type=table, bbox=[0.1,0.1,0.2,0.2]] x", CTX)
    assert parsed.regions[0].element_type == "table"
    plain = parse_citations("Rev [page=3, bbox=[0.1,0.1,0.2,0.2]] x", CTX)
    assert plain.regions[0].element_type == "text"
    other = parse_citations("Rev [page=3, doc=annual.pdf, bbox=[0.1,0.1,0.2,0.2]] x", CTX)
    assert other.citations[0].reason == "unknown document 'annual.pdf'"


def test_consecutive_citations_and_a_later_sentence() -> None:
    text = "Rev [page=2, bbox=[0.1,0.1,0.2,0.2]], [page=3, bbox=[0.1,0.1,0.2,0.2]]; also x [page=4]"
    parsed = parse_citations(text, CTX)
    assert [(c.sentence, c.page) for c in parsed.citations] == [
        ("Rev", 2),
        ("Rev", 3),
        ("also x", 4),
    ]


def test_prose_page_references_with_offsets() -> None:
    parsed = parse_citations("See p. 5 and pages 3-4 and page 7, 8 [page=2]", CTX)
    assert parsed.notes["non_citations"] == [
        {"text": "p. 5", "offset": 4},
        {"text": "pages 3-4", "offset": 13},
        {"text": "page 7, 8", "offset": 27},
    ]
    assert [c.page for c in parsed.citations] == [2]


def test_answer_tag_notes() -> None:
    parsed = parse_citations("<answer>a</answer> and <answer>b</answer>", CTX)
    assert parsed.answer is None  # two different answers: ambiguous, neither is taken
    assert parsed.notes == {
        "answer_tags": 2,
        "answer_source": "answer_tag",
        "ambiguous_answers": ["a", "b"],
    }
    same = parse_citations("<answer>a</answer> and <answer>a</answer>", CTX)
    assert same.answer == "a" and same.notes == {"answer_tags": 2, "answer_source": "answer_tag"}
    empty = parse_citations("<answer>  </answer>", CTX)
    assert empty.answer is None
    assert empty.notes == {"answer_source": "answer_tag", "answer_tag_empty": True}
    unclosed = parse_citations("<answer> 12 units", CTX)
    assert unclosed.answer == "12 units" and unclosed.notes["answer_tag_unclosed"] is True
    assert "answer_tags" not in unclosed.notes
    spaced = parse_citations("< Answer >7</ answer >", CTX)
    assert spaced.answer == "7"


def test_answer_line_and_bare_replies() -> None:
    line = parse_citations("Thinking\n**Final Answer:** 42\nmore", CTX)
    assert line.answer == "42"
    assert line.notes == {"no_answer_tag": True, "answer_source": "answer_line"}
    last = parse_citations("Answer: 1\nAnswer：2", CTX)
    assert last.answer == "2"
    assert parse_citations("x" * 300, CTX).answer == "x" * 300
    assert parse_citations("x" * 301, CTX).answer is None
    assert parse_citations("a\n\nb", CTX).answer is None
    assert parse_citations("   ", CTX).answer is None
    cited = parse_citations("Paris [page=2]", CTX)
    assert cited.answer is None and cited.notes == {"no_answer_tag": True}
    bare = parse_citations("  Paris  ", CTX)
    assert bare.answer == "Paris" and bare.notes["answer_source"] == "bare_text"


def test_non_text_input_is_read_as_text() -> None:
    parsed = parse_citations(42, CTX)  # type: ignore[arg-type]
    assert parsed.answer == "42"


def test_unbracketed_box_keeps_its_first_digit() -> None:
    citation, _ = one("Rev [page=2, bbox=12, 10, 20, 20] x")
    assert (
        citation["bbox"] == [12.0, 10.0, 20.0, 20.0] and citation["reason"] == "bbox outside [0, 1]"
    )


def test_replies_that_end_inside_a_citation() -> None:
    citation, notes = one('Rev [page=2, doc_page="iv')
    assert citation["doc_page"] == "iv" and citation["raw"] == '[page=2, doc_page="iv'
    citation, notes = one("Rev [page=2, bbox=")
    assert citation["reason"] == "malformed bbox: no numbers"
    assert notes["citation_notes"][0]["notes"] == ["citation not closed"]
    citation, notes = one("Rev [page=2, bbox=[0.1, abc")
    assert citation["bbox"] == [0.1] and citation["reason"] == "malformed bbox: non-numeric value"
    citation, notes = one("Rev [page=2, bbox=[0.1, abc\nmore")
    assert citation["raw"] == "[page=2, bbox=[0.1, abc"  # the line end is not swallowed


def test_box_lists_that_stop_early() -> None:
    citation, notes = one("Rev [page=2, bbox=[ ]] x")
    assert citation["bbox"] == [] and citation["raw"] == "[page=2, bbox=[ ]]"
    assert "citation_notes" not in notes
    citation, notes = one("Rev [page=2, bbox=[, 0.1]] x")
    assert "bbox" not in citation
    assert notes["citation_notes"][0]["notes"] == ["bbox list not closed", "citation not closed"]
    for text in ("Rev [page=2, bbox=[0.1; page=3] x", "Rev [page=2, bbox=[0.1 page=3] x"):
        citation, notes = one(text)
        assert citation["bbox"] == [0.1] and citation["raw"].endswith("page=3]")
        assert notes["citation_notes"][0]["notes"] == ["bbox list not closed"]


def test_space_separated_keys() -> None:
    parsed = parse_citations("Rev [page=2 type=table doc=d bbox=[0.1,0.1,0.2,0.2]]", CTX)
    (citation,) = parsed.citations
    assert citation.page == 2 and citation.bbox == BOX
    assert citation.reason == "unknown document 'd'"


@pytest.mark.parametrize("key", ["doc", "document", "doc_id"])
def test_document_key_spellings(key: str) -> None:
    citation, _ = one(f"Rev [page=2, {key}=d, bbox=[0.1,0.1,0.2,0.2]]")
    assert citation["reason"] == "unknown document 'd'"


@pytest.mark.parametrize("key", ["type", "element_type", "element type"])
def test_element_type_key_spellings(key: str) -> None:
    parsed = parse_citations(f"Rev [page=3, {key}=table, bbox=[0.1,0.1,0.2,0.2]] x", CTX)
    assert parsed.regions[0].element_type == "table" and "citation_notes" not in parsed.notes


def test_page_value_with_a_stray_quote_and_every_problem_in_order() -> None:
    citation, _ = one('Rev [page=3", bbox=[0.1,0.1,0.2,0.2]]')
    assert citation["page"] == 3 and citation["valid"] is True
    citation, _ = one("Rev [page=five, bbox=]")
    assert citation["reason"] == "malformed page value 'five'; malformed bbox: no numbers"


def test_back_to_back_citations() -> None:
    parsed = parse_citations("x [page=2][page=3]", CTX)
    assert [c.page for c in parsed.citations] == [2, 3]


def test_citations_are_stripped_from_an_answer_line() -> None:
    parsed = parse_citations("Answer: 42 [page=2]", CTX)
    assert parsed.answer == "42" and [c.page for c in parsed.citations] == [2]


def test_empty_quoted_doc_page() -> None:
    citation, notes = one('Rev [page=2, doc_page="", bbox=[0.1,0.1,0.2,0.2]] x')
    assert citation["bbox"] == BOX and citation["page"] == 2 and "citation_notes" not in notes
