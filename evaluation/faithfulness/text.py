"""Sentence splitting for the faithfulness scorer, and cleaning of free-text responses.

Code spans (fenced blocks and inline backticks) and LaTeX (``$...$``, ``$$...$$``,
``\\(...\\)``, ``\\[...\\]``) are masked before splitting so the full stops inside them never end
a sentence; abbreviations ("e.g.", "i.e.", "Fig.", "et al.", "vs.", "Dr." ...), initials and
decimals ("3.14") do not end one either. Paragraph breaks and list items always do.
"""

from __future__ import annotations

import re

# Citation markers of the free-text reader grammar: [page=N, doc_page="...", bbox=[...]].
CITATION_RE = re.compile(r"\[\s*page\s*=[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]", re.I)
_ANSWER_TAG_RE = re.compile(r"</?\s*answer\s*>", re.I)

_MASK_PATTERNS = [
    re.compile(r"```.*?```", re.S),
    re.compile(r"`[^`\n]+`"),
    re.compile(r"\$\$.+?\$\$", re.S),
    re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<![\s\\])\$"),
    re.compile(r"\\\(.+?\\\)", re.S),
    re.compile(r"\\\[.+?\\\]", re.S),
]

ABBREVIATIONS = frozenset(
    {
        "e.g", "i.e", "cf", "vs", "etc", "al", "approx", "fig", "figs", "tab", "eq", "eqs",
        "sec", "secs", "ch", "no", "nos", "vol", "pp", "p", "dr", "mr", "mrs", "ms", "prof",
        "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept", "est", "resp", "ref", "refs",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        "u.s", "u.k", "ph.d", "a.m", "p.m", "min", "max", "avg", "std", "var",
    }
)  # fmt: skip
# "etc." and "al." close a sentence only when a capitalised word follows a new line; in
# running text they are kept as abbreviations (a rare false merge beats a false split).

_BOUNDARY_RE = re.compile(r"([.!?]+)([\"'”’)\]]*)(\s+)")
_BREAK_RE = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
_PLACEHOLDER = "\ue000{}\ue001"
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")


def _mask(text: str) -> tuple[str, list[str]]:
    saved: list[str] = []

    def keep(match: re.Match[str]) -> str:
        saved.append(match.group(0))
        return _PLACEHOLDER.format(len(saved) - 1)

    for pattern in _MASK_PATTERNS:
        text = pattern.sub(keep, text)
    return text, saved


def _unmask(text: str, saved: list[str]) -> str:
    # Placeholders may nest (a $...$ inside a masked code block was masked first).
    while _PLACEHOLDER_RE.search(text):
        text = _PLACEHOLDER_RE.sub(lambda m: saved[int(m.group(1))], text)
    return text


def _ends_with_abbreviation(chunk: str) -> bool:
    """Does ``chunk`` (text up to and including a '.') end with an abbreviation or initial?"""
    match = re.search(r"(?:^|(?<=[\s(\[\"'“]))([A-Za-z][A-Za-z.]*)\.$", chunk)
    if match is None:
        return False
    word = match.group(1)
    if word.lower() in ABBREVIATIONS:
        return True
    return len(word) == 1 and word.isupper()  # an initial, "J. Smith"


def _split_paragraph(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for m in _BOUNDARY_RE.finditer(text):
        end = m.end(2)
        after = text[m.end() :]
        if m.group(1) == "." and _ends_with_abbreviation(text[start : m.end(1)]):
            continue
        if after and after[0].islower():  # "... approx. twice" or a lower-case continuation
            continue
        sentences.append(text[start:end])
        start = m.end()
    sentences.append(text[start:])
    return sentences


def split_sentences(text: str) -> list[str]:
    """Split a response into sentences, keeping code and formulas intact."""
    if not text or not text.strip():
        return []
    masked, saved = _mask(text)
    sentences: list[str] = []
    for block in _BREAK_RE.split(masked):
        block = " ".join(block.split())
        if block:
            sentences.extend(_split_paragraph(block))
    return [s for s in (_unmask(s, saved).strip() for s in sentences) if s]


def strip_citations(text: str) -> str:
    """Remove citation markers and answer tags, keeping the prose."""
    text = CITATION_RE.sub("", text)
    text = _ANSWER_TAG_RE.sub("", text)
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()


def normalize_for_match(text: str) -> str:
    """Lower-case words only: the key used to pair a citation's sentence with a split sentence."""
    return " ".join(re.findall(r"\w+", strip_citations(text).lower()))
