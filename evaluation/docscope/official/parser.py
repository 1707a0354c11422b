"""The citation parser of DocScope's released inference code, rebuilt for scoring.

DocScope's ``run_infer.py`` parses every reply into ``parsed`` (answer, citations, predicted
pages, answer-tag flag) and its scorers read only that. This module turns a reply into the
same fields by the same rules, so the ``official`` scoring profile can score our own
trajectories (from their raw reply, ``Trajectory.raw_output``) exactly as the released code
would have parsed them. The rules, as read from ``code/infer/reasoning_prompts.py``:

* **Citation grammar.** ``[page=INT, doc_page=VALUE, bbox=[N, N, N, N]]``, any case, with
  optional whitespace (newlines included) around every token, so a citation broken across a
  line still counts. ``VALUE`` is double-quoted, single-quoted or bare (no space, comma or
  ``]``). A number is an optional sign, digits and at most one decimal point, with a digit
  last (``1.`` and ``1e3`` are not numbers). A second, loose pass over the text the strict one
  left alone accepts a missing ``doc_page`` and a single closing bracket (runs of malformed
  citations).
* **Masking order.** Citations are found first and only then fenced code, display LaTeX,
  inline code and inline LaTeX are masked; a citation inside backticks therefore counts,
  while a code span that contains a citation is not masked at all.
* **Boxes.** Every citation is kept with its four numbers. ``is_normalized`` means every number
  lies in [-0.01, 1.5] (the region judge draws only those). A box is valid when
  0 ≤ x1 < x2 ≤ 1 and 0 ≤ y1 < y2 ≤ 1 (strict), else it is listed in ``invalid_citations``.
* **Pages.** ``predicted_pages`` is the sorted set of the pages of every citation, whatever
  its box or page range.
* **Answer.** The last complete ``<answer> ... </answer>`` pair (any case; an opening tag
  without a closing one does not count), trimmed; ``has_answer_tag`` is whether there is one,
  even an empty one. The reasoning is the text before that last pair.
* **Sentences.** Each citation gets the sentence it sits in, cleaned of citations, a leading
  list or heading marker and spaces before punctuation; a "sentence" holding only citations
  and punctuation passes its citations to the sentence before it. The released code splits
  sentences with ICU when PyICU is installed and with a regular expression otherwise; ICU is
  not a dependency here, so this module reproduces the regular-expression splitter (recorded
  as ``sentence_splitter: "regex_fallback"``), with the same abbreviation protection. No
  official score reads the sentence: pages, boxes and the answer do not depend on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

SPLITTER = "regex_fallback"
NORMALIZED_RANGE = (-0.01, 1.5)

_NUM = r"([-+]?\d*\.?\d+)"
_DOC_PAGE = r"(?:\"([^\"]*)\"|'([^']*)'|([^\s,\]]+))"
_BOX = rf"bbox\s*=\s*\[\s*{_NUM}\s*,\s*{_NUM}\s*,\s*{_NUM}\s*,\s*{_NUM}\s*\]"
STRICT = re.compile(
    rf"\[\s*page\s*=\s*(\d+)\s*,\s*doc_page\s*=\s*{_DOC_PAGE}\s*,\s*{_BOX}\s*\]", re.IGNORECASE
)
LOOSE = re.compile(
    rf"\[\s*page\s*=\s*(\d+)\s*(?:,\s*doc_page\s*=\s*{_DOC_PAGE}\s*)?,\s*{_BOX}", re.IGNORECASE
)
ANSWER = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)

# Spans masked after the citations, in this order.
_PROTECTED = (
    ("code_block", re.compile(r"```[\s\S]*?```|~~~[\s\S]*?~~~")),
    ("block_latex", re.compile(r"\$\$[\s\S]*?\$\$|\\\[[\s\S]*?\\\]")),
    ("inline_code", re.compile(r"`[^`\n]+`")),
    ("inline_latex", re.compile(r"\\\([\s\S]*?\\\)")),
)
# Placeholders (one per masked character), in the Unicode private use area.
_CITE = "\ue000"
_PLACEHOLDERS = {
    "citation": _CITE,
    "code_block": "\ue001",
    "block_latex": "\ue002",
    "inline_code": "\ue003",
    "inline_latex": "\ue004",
}
_ANY_PLACEHOLDER = frozenset(_PLACEHOLDERS.values())

# Words whose trailing period never ends a sentence (the released list), plus any run of
# two or more "letter." pairs (U.S., Ph.D., e.g.).
# fmt: off
ABBREVIATIONS = frozenset({
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Rev", "Hon", "Jr", "Sr", "St",
    "e.g", "i.e", "etc", "vs", "cf", "al", "approx", "est", "ca",
    "Inc", "Ltd", "Co", "Corp", "LLC", "Bros",
    "Ph.D", "M.D", "B.A", "M.A", "B.S", "M.S",
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    "Fig", "Figs", "Vol", "No", "Nos", "Ch", "Sec", "App", "Eq", "Tab", "pp", "p", "ed",
    "Eds", "eds", "n.d",
})
# fmt: on
_DOTTED = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_SINGLE = re.compile(
    r"\b(?:"
    + "|".join(re.escape(w) for w in sorted(ABBREVIATIONS, key=len, reverse=True))
    + r")\.",
    re.IGNORECASE,
)
_SAFE_DOT = "\u00b7"
_TERMINATOR = re.compile(r"(?<!\d)[.!?。！？](?!\d)|\n{2,}")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•>]|\d+[.)]|[a-zA-Z][.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.!?。！？,，;；:：)\]\}])")
_WORD_CHAR = re.compile(r"[^\W_]")


class OfficialCitation(BaseModel):
    """One citation as the released parser reports it."""

    page: int
    doc_page: str = "none"
    bbox: list[float] = Field(default_factory=list)
    sentence: str = ""
    span_start: int = 0
    span_end: int = 0
    is_normalized: bool = True


class OfficialParse(BaseModel):
    """The ``parsed`` block of an ``infer.jsonl`` record."""

    answer: str | None = None
    reasoning: str = ""
    citations: list[OfficialCitation] = Field(default_factory=list)
    invalid_citations: list[OfficialCitation] = Field(default_factory=list)
    predicted_pages: list[int] = Field(default_factory=list)
    has_answer_tag: bool = False
    sentence_splitter: str = SPLITTER


@dataclass
class _Span:
    start: int
    end: int
    kind: str
    meta: dict[str, Any] = field(default_factory=dict)


def is_normalized(bbox: list[float]) -> bool:
    """Four numbers, each within [-0.01, 1.5]: the boxes the region judge draws."""
    low, high = NORMALIZED_RANGE
    return len(bbox) == 4 and all(low <= v <= high for v in bbox)


def valid_bbox(bbox: list[float]) -> bool:
    """0 ≤ x1 < x2 ≤ 1 and 0 ≤ y1 < y2 ≤ 1."""
    if len(bbox) != 4:
        return False
    x1, y1, x2, y2 = bbox
    return 0.0 <= x1 < x2 <= 1.0 and 0.0 <= y1 < y2 <= 1.0


def last_answer(text: str) -> str | None:
    """The trimmed content of the last complete answer tag pair, or ``None``."""
    matches = list(ANSWER.finditer(text))
    return matches[-1].group(1).strip() if matches else None


def _citation_meta(match: re.Match[str]) -> dict[str, Any]:
    doc_page = match.group(2) or match.group(3) or match.group(4) or "none"
    bbox = [float(match.group(i)) for i in range(5, 9)]
    return {
        "page": int(match.group(1)),
        "doc_page": doc_page.strip() or "none",
        "bbox": bbox,
        "is_normalized": is_normalized(bbox),
    }


def _mask(text: str) -> tuple[str, list[_Span]]:
    """Citations first, then code and LaTeX, each replaced by same-length placeholders; a
    match touching an earlier placeholder is left alone."""
    chars = list(text)
    spans: list[_Span] = []
    passes: list[tuple[str, re.Pattern[str]]] = [("citation", STRICT), ("citation", LOOSE)]
    for kind, pattern in [*passes, *_PROTECTED]:
        current = "".join(chars)
        for match in pattern.finditer(current):
            start, end = match.span()
            if any(ch in _ANY_PLACEHOLDER for ch in current[start:end]):
                continue
            meta = _citation_meta(match) if kind == "citation" else {}
            spans.append(_Span(start, end, kind, meta))
            chars[start:end] = _PLACEHOLDERS[kind] * (end - start)
    spans.sort(key=lambda s: s.start)
    return "".join(chars), spans


def _protect_abbreviations(text: str) -> str:
    def safe(match: re.Match[str]) -> str:
        return match.group(0).replace(".", _SAFE_DOT)

    return _SINGLE.sub(safe, _DOTTED.sub(safe, text))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of the regular-expression splitter (abbreviations protected)."""
    protected = _protect_abbreviations(text)
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _TERMINATOR.finditer(protected):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _clean(sentence: str) -> str:
    sentence = sentence.replace(_CITE, "")
    sentence = _LIST_MARKER.sub("", sentence, count=1)
    sentence = _HEADING.sub("", sentence, count=1)
    sentence = re.sub(r"\s+", " ", sentence).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", sentence)


def _only_citations(masked: str, span: tuple[int, int]) -> bool:
    rest = re.sub(rf"[{_CITE}\s]+", "", masked[span[0] : span[1]])
    return not rest or _WORD_CHAR.search(rest) is None


def _sentence_index(spans: list[tuple[int, int]], position: int) -> int | None:
    for index, (start, end) in enumerate(spans):
        if start <= position < end:
            return index
    return None


def _citations(text: str, masked: str, spans: list[_Span]) -> list[OfficialCitation]:
    sentences = split_sentences(masked)
    # The sentence text: the original characters, citations removed.
    uncited = "".join(_CITE if m == _CITE else c for c, m in zip(text, masked, strict=True))
    texts = [_clean(uncited[s:e]) for s, e in sentences]
    out = []
    for span in spans:
        if span.kind != "citation":
            continue
        index = _sentence_index(sentences, span.start)
        if index is None:
            index = len(sentences) - 1
        while index > 0 and _only_citations(masked, sentences[index]):
            index -= 1
        out.append(
            OfficialCitation(
                sentence=texts[index] if 0 <= index < len(texts) else "",
                span_start=span.start,
                span_end=span.end,
                **span.meta,
            )
        )
    return out


def parse_official(text: str) -> OfficialParse:
    """Parse a reply as DocScope's released inference code does."""
    text = text if isinstance(text, str) else str(text)
    masked, spans = _mask(text)
    citations = _citations(text, masked, spans)
    matches = list(ANSWER.finditer(text))
    answer = last_answer(text)
    reasoning = text[: matches[-1].start()].rstrip() if matches else text
    return OfficialParse(
        answer=answer,
        reasoning=reasoning,
        citations=citations,
        invalid_citations=[c for c in citations if not valid_bbox(c.bbox)],
        predicted_pages=sorted({c.page for c in citations}),
        has_answer_tag=answer is not None,
    )
