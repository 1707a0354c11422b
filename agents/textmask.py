"""Masking of code and LaTeX, and the sentence units citations attach to.

``mask`` returns a string of the same length in which fenced code, inline code and LaTeX are
blanked out with a filler character, so a period inside ``x = 3.5`` or ``$a. b$`` never ends a
sentence and a bracket inside code is never read as a citation. Offsets stay valid: callers
cut the original text with positions found in the masked one.

``unit_start`` finds where the unit (sentence, list item or table row) that ends at a given
position begins: the last sentence end, list/table line start, blank line or tag before it.
"""

from __future__ import annotations

import re

FILL = "\x00"

_FENCED = re.compile(r"(```|~~~)[^\n]*\n[\s\S]*?\n\s*\1|```[\s\S]*?```")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_DISPLAY_MATH = re.compile(
    r"\$\$[\s\S]+?\$\$|\\\[[\s\S]+?\\\]|\\\([\s\S]+?\\\)"
    r"|\\begin\{(?P<env>[a-zA-Z*]+)\}[\s\S]*?\\end\{(?P=env)\}"
)
# Pandoc's rule for inline math: the opening $ is followed by a non-space, the closing $ is
# preceded by a non-space and not followed by a digit. "$5 and $6" is therefore not math.
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\$])\$(?!\d)")
_CITATION_HINT = re.compile(r"\[\s*page\s*[=:]", re.IGNORECASE)


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        chars[i] = FILL


def mask(text: str) -> str:
    """``text`` with code and LaTeX spans replaced by ``FILL`` (same length)."""
    chars = list(text)
    for pattern in (_FENCED, _INLINE_CODE, _DISPLAY_MATH):
        for match in pattern.finditer("".join(chars)):
            _blank(chars, match.start(), match.end())
    current = "".join(chars)
    for match in _INLINE_MATH.finditer(current):
        # A dollar amount pair can look like math; never swallow a citation that way.
        if not _CITATION_HINT.search(match.group(0)):
            _blank(chars, match.start(), match.end())
    return "".join(chars)


# Words after which a period does not end a sentence. A word with inner periods (U.S.,
# Ph.D., e.g., U.S.A.) never ends one either, whatever its letters.
# fmt: off
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "etc", "fig", "figs", "eq", "eqs", "no", "nos", "vs", "al", "cf", "sec",
    "secs", "tab", "p", "pp", "vol", "vols", "ch", "app", "approx", "dr", "mr", "mrs", "ms",
    "prof", "rev", "hon", "st", "inc", "ltd", "co", "corp", "bros", "llc", "jr", "sr", "resp",
    "ref", "refs", "dept", "univ", "ed", "eds", "est", "ca", "n.d", "ph.d",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
})
# fmt: on
_DOTTED_WORD = re.compile(r"(?:[a-z]\.)+[a-z]")
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")
_LINE_START = re.compile(r"\n[ \t]*(?:[-*•+][ \t]|\d+[.)][ \t]|\||#|>|<)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# A line holding only masked content (a fenced code or display-math block) is its own unit.
_MASKED_LINE = re.compile(r"\n[ \t]*\x00+[ \t]*\n")
_TAG = re.compile(r"</?[a-zA-Z_][\w-]*(?:\s[^<>\n]{0,80})?>")
_LEADING = re.compile(r"^(?:\s|[-*•+>#|]|\d+[.)](?=\s)|<[^<>\n]{0,80}>|[.;,:!?])+")


def _is_sentence_end(masked: str, match: re.Match[str]) -> bool:
    """A period ends a sentence unless it closes an abbreviation, an initial or a number."""
    dot = match.start()
    if masked[dot] != ".":
        return True
    before = re.search(r"([A-Za-z.]+)$", masked[max(0, dot - 12) : dot])
    if before is None:
        return True
    word = before.group(1).lower().strip(".")
    if word in _ABBREVIATIONS or _DOTTED_WORD.fullmatch(word):
        return False
    return len(word) != 1 or not word.isalpha() or not masked[dot - 1].isupper()


def unit_start(masked: str, start: int, end: int) -> int:
    """Start of the last unit within ``masked[start:end]`` (absolute offset)."""
    segment = masked[start:end]
    cut = 0
    for pattern in (_BLANK_LINE, _MASKED_LINE, _LINE_START, _TAG):
        for match in pattern.finditer(segment):
            # A boundary right at the end (e.g. a trailing tag) does not open a unit.
            if segment[match.end() :].strip():
                boundary = match.start() + 1
                if pattern is _TAG or pattern is _MASKED_LINE:
                    boundary = match.end()
                cut = max(cut, boundary)
    for match in _SENTENCE_END.finditer(segment):
        if segment[match.end() :].strip() and _is_sentence_end(segment, match):
            cut = max(cut, match.end())
    return start + cut


def clean_unit(text: str) -> str:
    """Trim a unit to its statement: no leading bullet, tag or stray punctuation; one space."""
    text = text.replace(FILL, " ")
    text = _LEADING.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text
