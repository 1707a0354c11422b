"""Evidence units are not cut at the period of an abbreviation (U.S., Ph.D., Jan., e.g.)."""

from __future__ import annotations

import pytest

from scanrag.agents.citations import parse_citations
from scanrag.agents.evidence import ParseContext
from scanrag.agents.textmask import mask, unit_start

CITE = '[page=1, doc_page="1", bbox=[0, 0, 1, 1]]'


def units(text: str) -> list[str]:
    return [c.sentence for c in parse_citations(text, ParseContext.with_pages(3)).citations]


@pytest.mark.parametrize(
    "sentence",
    [
        "Revenue in the U.S. grew to 5 million",
        "Dr. Smith, Ph.D. in economics, joined the board",
        "The plant opened on Jan. 5 and closed on Sept. 30",
        "Costs rose, e.g. for freight, by 3%",
        "Fig. 3 shows No. 4 of the series",
        "The U.S.A. and the U.K. signed it",
        "Acme Corp. and Smith Bros. merged",
        "Shipments fell in Feb. and Mar. only",
        "See p. 4 and Vol. 2 etc. for details",
        "i.e. the total is 12",
    ],
)
def test_abbreviation_does_not_end_the_unit(sentence: str) -> None:
    text = f"Intro sentence. {sentence} {CITE}. After."
    assert units(text) == [sentence]


def test_real_sentence_ends_still_split() -> None:
    text = f"Sales were flat. Costs rose to 12 {CITE}. Margins fell."
    assert units(text) == ["Costs rose to 12"]
    text = f"It ended in the U.S. Then costs rose to 12 {CITE}."
    # After an initialism the period is taken as part of it (never a sentence end).
    assert units(text) == ["It ended in the U.S. Then costs rose to 12"]


def test_single_letter_word_and_initials() -> None:
    text = f"This is plan b. Costs rose {CITE}."
    assert units(text) == ["Costs rose"]  # a lower-case single letter ends a sentence
    text = f"Written by J. Smith in 2020 {CITE}."
    assert units(text) == ["Written by J. Smith in 2020"]


def test_unit_start_on_masked_text() -> None:
    text = "First one. The U.S. economy grew"
    assert text[unit_start(mask(text), 0, len(text)) :] == "The U.S. economy grew"
