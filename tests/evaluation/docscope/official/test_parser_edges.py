"""The official-parser mode, the edges: what the masks protect from the sentence splitter,
citations at the very start of a reply or right after a terminator, citation-only sentences,
headings, blank doc pages, strict box bounds and the reasoning before the last answer."""

from __future__ import annotations

import pytest

from scanrag.evaluation.docscope.official.parser import parse_official, split_sentences, valid_bbox

CITE = '[page=5, doc_page="3", bbox=[0.1, 0.2, 0.3, 0.4]]'


def sentences(text: str) -> list[str]:
    return [c.sentence for c in parse_official(text).citations]


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        # A period inside code or LaTeX does not end the sentence.
        ("Run `x. y` now {c}. Done.", "Run `x. y` now."),
        ("See:\n```\na. b\n```\nthen {c}.", "See: ``` a. b ``` then."),
        ("~~~\nq. r\n~~~ here {c}.", "~~~ q. r ~~~ here."),
        ("Eq $$a. b$$ holds {c}.", "Eq $$a. b$$ holds."),
        ("Eq \\[a. b\\] holds {c}.", "Eq \\[a. b\\] holds."),
        ("Eq \\(a. b\\) holds {c}.", "Eq \\(a. b\\) holds."),
    ],
)
def test_masked_spans_keep_their_periods(text: str, sentence: str) -> None:
    assert sentences(text.format(c=CITE)) == [sentence]


def test_citation_at_the_very_start_of_a_reply() -> None:
    assert sentences(f"{CITE} Revenue rose. More text.") == ["Revenue rose."]
    # A first "sentence" of citations only has no sentence before it: it keeps its own text.
    assert sentences(f"{CITE}. Revenue rose.") == ["."]
    parsed = parse_official(f"{CITE} Revenue rose.")
    assert (parsed.citations[0].span_start, parsed.citations[0].span_end) == (0, len(CITE))


def test_citation_right_after_a_terminator_opens_the_next_sentence() -> None:
    assert sentences(f"Revenue.{CITE} More.") == ["More."]


def test_citation_only_second_sentence_goes_back_to_the_first() -> None:
    assert sentences(f"Revenue rose. {CITE}. More.") == ["Revenue rose."]


def test_heading_marker_is_removed() -> None:
    assert sentences(f"## Results {CITE}") == ["Results"]
    assert sentences(f"1. Results {CITE}") == ["Results"]


def test_blank_doc_page_is_none() -> None:
    parsed = parse_official('A [page=2, doc_page="  ", bbox=[0.1, 0.1, 0.2, 0.2]].')
    assert parsed.citations[0].doc_page == "none"
    parsed = parse_official('A [page=2, doc_page="", bbox=[0.1, 0.1, 0.2, 0.2]].')
    assert parsed.citations[0].doc_page == "none"


def test_box_bounds_are_strict_on_both_axes() -> None:
    assert not valid_bbox([0.1, 0.3, 0.5, 0.3])  # y1 == y2
    assert not valid_bbox([0.1, 0.1, 0.5, 1.2])  # y2 past the page
    assert valid_bbox([0.1, 0.1, 0.5]) is False
    assert valid_bbox([]) is False
    assert valid_bbox([0.0, 0.0, 0.5, 1.0])


def test_split_sentences_has_no_empty_tail() -> None:
    assert split_sentences("One. Two.") == [(0, 4), (4, 9)]
    assert split_sentences("One. Two") == [(0, 4), (4, 8)]
    assert split_sentences("") == []


def test_reasoning_stops_at_the_last_answer() -> None:
    parsed = parse_official("A <answer>x</answer> B <answer>y</answer>")
    assert parsed.reasoning == "A <answer>x</answer> B" and parsed.answer == "y"
