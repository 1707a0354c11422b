"""Query handling: instruction stripping and financial statement expansion."""

from __future__ import annotations

import pytest

from scanrag.indexes.queries import (
    apply_query_mode,
    check_query_mode,
    expand_statements,
    question_sentences,
    statements_named,
    strip_instructions,
)

FINANCEBENCH_STYLE = (
    "You are an investment banker and your only resource(s) to answer the following question "
    "is (are): the statement of financial position and the cash flow statement. Here's the "
    "question: what is the FY2015 operating cash flow ratio for Adobe? Operating cash flow "
    "ratio is defined as: cash from operations / total current liabilities. Round your answer "
    "to two decimal places."
)


def test_strip_drops_lead_ins_and_answer_format():
    stripped = strip_instructions(FINANCEBENCH_STYLE)
    assert stripped == (
        "the statement of financial position and the cash flow statement. what is the FY2015 "
        "operating cash flow ratio for Adobe? Operating cash flow ratio is defined as: cash "
        "from operations / total current liabilities."
    )


def test_statements_named_only_in_dropped_sentences_are_kept():
    question = "What is the inventory turnover? Please base your answers on the balance sheet."
    assert strip_instructions(question) == "What is the inventory turnover? (balance sheet)"


def test_plain_questions_pass_unchanged():
    question = "Where was Gestalt psychology concieved?"
    for mode in ("raw", "strip", "strip+stmt"):
        assert apply_query_mode(question, mode) == question


def test_a_question_sentence_is_never_dropped():
    question = "Please state the answer in USD millions?"
    assert strip_instructions(question) == question


def test_everything_instructions_keeps_the_text():
    text = "Round your answer to two decimal places."
    assert strip_instructions(text) == text


def test_statement_expansion_appends_printed_titles():
    assert statements_named("Using the P&L and the cash flow statement") == [
        "income statement",
        "cash flow statement",
    ]
    expanded = expand_statements("What is the total in the balance sheet?")
    assert expanded == (
        "What is the total in the balance sheet?\n"
        "consolidated balance sheets statement of financial position"
    )
    assert expand_statements("No statement here.") == "No statement here."


def test_modes_compose_left_to_right():
    both = apply_query_mode(FINANCEBENCH_STYLE, "strip+stmt")
    assert both.startswith("the statement of financial position") and "Round" not in both
    assert both.endswith(
        "consolidated balance sheets statement of financial position; "
        "consolidated statements of cash flows"
    )


@pytest.mark.parametrize("mode", ["", "stmt+strip", "STRIP", None])
def test_unknown_modes_rejected(mode):
    with pytest.raises(ValueError, match="query_mode"):
        check_query_mode(mode)


def test_question_sentences_split_the_stripped_question():
    assert question_sentences(FINANCEBENCH_STYLE) == [
        "the statement of financial position and the cash flow statement.",
        "what is the FY2015 operating cash flow ratio for Adobe?",
        "Operating cash flow ratio is defined as: cash from operations / total current "
        "liabilities.",
    ]
    assert question_sentences("How many slides? How many slides?") == ["How many slides?"]
    assert question_sentences("Where was it conceived?") == ["Where was it conceived?"]
    assert question_sentences("?! ...") == ["?! ..."]  # no words: the text as given
