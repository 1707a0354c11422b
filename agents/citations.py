"""Parser for free-text reader replies in the citation grammar of spec §1.

A fact-bearing sentence is closed by ``[page=N, doc_page="...", bbox=[x1, y1, x2, y2]]`` and
the answer sits in ``<answer> ... </answer>``. The parser pairs each citation with the unit
(sentence, list item or table row) just before it — consecutive citations share that unit —
and hands the pairs to :class:`scanrag.agents.evidence.EvidenceBuilder`, which validates them.

Tolerated variants: any key case and spacing, ``:`` for ``=``, keys in any order (``[doc_page=
"3", page=5, ...]``), the alias ``pg``, a citation in ``(...)``, a bbox in ``(...)`` or without
brackets, a missing closing bracket (of the bbox list or of the citation), a doc_page with
single, typographic or no quotes, extra keys ``type=`` (element type) and ``doc=`` (which
document). Prose page references such as "p. 5" or "page 12" are not citations: they are listed
in ``notes["non_citations"]``. Code and LaTeX are masked first, so nothing inside them counts.
Nothing raises on odd input and the raw text is never altered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scanrag.agents.evidence import CitedStatement, EvidenceBuilder, ParseContext, ParsedOutput
from scanrag.agents.evidence import normalize_answer as _normalize
from scanrag.agents.reply import AMBIGUOUS, distinct_answers
from scanrag.agents.tags import CitedSpan, parse_evidence, parse_issues, parse_verdict, strip_spans
from scanrag.agents.textmask import FILL, clean_unit, mask, unit_start

PARSER = "citations"

# A citation opens with "[" (or "(") and a citation key: page first as the grammar says, or
# any other key first ("[doc_page=..., page=...]", "[pg=5 ...]", "(page=5, bbox=...)").
_OPEN = re.compile(
    r"[\[(]\s*(?=(?:page|pg|doc[_ ]?page|printed_page|page_label|bbox|box|bounding_box)\s*[=:])",
    re.IGNORECASE,
)
_CLOSE = {"[": "]", "(": ")"}
_KEY = re.compile(r"([A-Za-z][A-Za-z_\- ]{0,24}?)\s*[=:]\s*")
_NEXT_KEY = re.compile(r"\s+([A-Za-z_]+)\s*[=:]")
_NUMBER = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")
_QUOTES = {'"': '"', "'": "'", "“": "”", "”": "”", "‘": "’", "’": "’", "«": "»"}
_KEY_ALIASES = {
    "page": "page",
    "pg": "page",
    "doc_page": "doc_page",
    "docpage": "doc_page",
    "printed_page": "doc_page",
    "page_label": "doc_page",
    "bbox": "bbox",
    "box": "bbox",
    "bounding_box": "bbox",
    "type": "type",
    "element_type": "type",
    "doc": "doc",
    "document": "doc",
    "doc_id": "doc",
}
_MAX_CITATION = 400
_CONSECUTIVE = re.compile(r"[\s,;.]*")
_PROSE_PAGE = re.compile(
    r"(?<![\w=])(?:pp?\.\s?\d+(?:\s?[-–]\s?\d+)?|pages?\s+\d+(?:\s*(?:[-–,&]|and)\s*\d+)*)",
    re.IGNORECASE,
)
_ANSWER_OPEN = re.compile(r"<\s*answer\s*>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"<\s*/\s*answer\s*>", re.IGNORECASE)
_ANSWER_LINE = re.compile(
    r"^[ \t]*[*_#]*[ \t]*(?:final[ \t]+)?answer[*_]*[ \t]*[:：][*_]*[ \t]*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_BARE_ANSWER_MAX = 300


@dataclass
class _Found:
    start: int
    end: int
    statement: CitedStatement
    notes: list[str] = field(default_factory=list)


class _Reader:
    """Reads one citation starting at ``[`` in the masked text."""

    def __init__(self, masked: str, start: int) -> None:
        self.s = masked
        self.start = start
        self.close = _CLOSE[masked[start]]
        self.pos = start + 1
        self.limit = min(len(masked), start + _MAX_CITATION)
        self.values: dict[str, Any] = {}
        self.problems: list[str] = []
        self.notes: list[str] = []

    def _skip(self, chars: str = " \t,;") -> None:
        while self.pos < self.limit and self.s[self.pos] in chars:
            self.pos += 1

    def read(self) -> int:
        """Parse key=value pairs up to the closing bracket; returns the end offset."""
        while True:
            self._skip()
            if self.pos >= self.limit or self.s[self.pos] == "\n":
                self.notes.append("citation not closed")
                return self.pos
            if self.s[self.pos] == self.close:
                return self.pos + 1
            key_match = _KEY.match(self.s, self.pos, self.limit)
            if key_match is None:
                self.notes.append("citation not closed")
                return self.pos
            key = re.sub(r"[\s\-]+", "_", key_match.group(1).strip().lower())
            self.pos = key_match.end()
            self._value(_KEY_ALIASES.get(key, key))

    def _value(self, key: str) -> None:
        if key == "bbox":
            self.values["bbox"] = self._numbers()
            return
        text = self._scalar()
        if key in {"page", "doc_page", "type", "doc"}:
            self.values.setdefault(key, text)
        else:
            self.notes.append(f"unknown key {key!r}")

    def _scalar(self) -> str:
        if self.pos < self.limit and self.s[self.pos] in _QUOTES:
            close = _QUOTES[self.s[self.pos]]
            end = self.pos + 1
            while end < self.limit and self.s[end] not in {close, '"', "\n"}:
                end += 1
            value = self.s[self.pos + 1 : end]
            if end < self.limit and self.s[end] != "\n":
                end += 1
            self.pos = end
            return value.strip()
        end = self.pos
        while end < self.limit and self.s[end] not in ",;\n" and self.s[end] != self.close:
            if self.s[end] in " \t" and self._key_follows(end):
                break
            end += 1
        value = self.s[self.pos : end]
        self.pos = end
        return value.strip()

    def _key_follows(self, pos: int) -> bool:
        match = _NEXT_KEY.match(self.s, pos, self.limit)
        return match is not None and match.group(1).lower() in _KEY_ALIASES

    def _numbers(self) -> list[float] | None:
        opener = self.pos < self.limit and self.s[self.pos] in "[("
        if opener:
            self.pos += 1
        numbers: list[float] = []
        while True:
            match = _NUMBER.match(self.s, self.pos, self.limit)
            if match is None:
                break
            numbers.append(float(match.group(1)))
            self.pos = match.end()
            self._skip(" \t,")
        self._skip(" \t")
        if opener:
            if self.pos < self.limit and self.s[self.pos] in "])":
                self.pos += 1
            else:
                self._bad_list()
                if not numbers:
                    return None
        elif not numbers:
            self.problems.append("malformed bbox: no numbers")
            return None
        return numbers

    def _bad_list(self) -> None:
        """The bbox list holds something that is not a number, or lost its closing bracket."""
        nxt = self.s[self.pos] if self.pos < self.limit else ""
        if nxt in {"", "\n", ",", ";"} or _KEY.match(self.s, self.pos, self.limit):
            self.notes.append("bbox list not closed")
            return
        self.problems.append("malformed bbox: non-numeric value")
        while self.pos < self.limit and self.s[self.pos] not in "])\n":
            self.pos += 1
        if self.pos < self.limit and self.s[self.pos] in "])":
            self.pos += 1

    def statement(self, raw: str) -> CitedStatement:
        page_text = self.values.get("page")
        page: int | None = None
        problems = list(self.problems)
        if page_text is not None:
            digits = page_text.strip().strip("\"'“”")
            if digits.isdigit():
                page = int(digits)
            else:
                problems.insert(0, f"malformed page value {page_text!r}")
        bbox = self.values.get("bbox")
        return CitedStatement(
            sentence="",
            raw=raw,
            page=page,
            doc_page=self.values.get("doc_page"),
            bbox=bbox,
            element_type=self.values.get("type") or "text",
            doc=self.values.get("doc"),
            problem="; ".join(problems) if problems else None,
        )


def find_citations(text: str, masked: str | None = None) -> list[_Found]:
    """Every citation in ``text`` (outside code and LaTeX), in order."""
    masked = mask(text) if masked is None else masked
    found: list[_Found] = []
    cursor = 0
    for match in _OPEN.finditer(masked):
        if match.start() < cursor:
            continue
        reader = _Reader(masked, match.start())
        end = reader.read()
        statement = reader.statement(text[match.start() : end])
        found.append(_Found(match.start(), end, statement, reader.notes))
        cursor = end
    return found


def _pair_sentences(text: str, masked: str, found: list[_Found]) -> None:
    """Attach to each citation the unit before it; consecutive citations share one unit."""
    previous_end = 0
    sentence = ""
    for index, item in enumerate(found):
        between = masked[previous_end : item.start]
        if index == 0 or not _CONSECUTIVE.fullmatch(between):
            begin = unit_start(masked, previous_end, item.start)
            sentence = clean_unit(text[begin : item.start])
        item.statement.sentence = sentence
        previous_end = item.end


def _blank_spans(masked: str, found: list[_Found]) -> str:
    chars = list(masked)
    for item in found:
        for i in range(item.start, item.end):
            chars[i] = FILL
    return "".join(chars)


def _answer(
    text: str,
    masked: str,
    spans: list[CitedSpan],
    found: list[_Found],
    notes: dict[str, Any],
    allow_bare: bool,
) -> str | None:
    tags = _answer_tags(masked)
    if tags:
        if len(tags) > 1:
            notes["answer_tags"] = len(tags)
        if not tags[-1][2]:
            notes["answer_tag_unclosed"] = True
        notes["answer_source"] = "answer_tag"
        answers = [_normalize(strip_spans(text[b:e], b, spans)) for b, e, _ in tags]
        different = distinct_answers(answers)
        if len(different) > 1:  # ambiguous: none is taken (scanrag.agents.reply)
            notes[AMBIGUOUS] = different
            return None
        if answers[-1] is None:
            notes["answer_tag_empty"] = True
        return different[0] if different else None
    notes["no_answer_tag"] = True
    lines = list(_ANSWER_LINE.finditer(masked))
    if lines:
        notes["answer_source"] = "answer_line"
        line = lines[-1]
        return _normalize(strip_spans(text[line.start(1) : line.end(1)], line.start(1), spans))
    bare = text.strip()
    if allow_bare and not found and bare and len(bare) <= _BARE_ANSWER_MAX and "\n\n" not in bare:
        notes["answer_source"] = "bare_text"
        return _normalize(bare)
    return None


def _answer_tags(masked: str) -> list[tuple[int, int, bool]]:
    """``(begin, end, closed)`` of the text inside each ``<answer>`` tag: up to its closing
    tag, else up to the next opening one or the end of the text."""
    opens = list(_ANSWER_OPEN.finditer(masked))
    found = []
    for i, tag in enumerate(opens):
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(masked)
        close = _ANSWER_CLOSE.search(masked, tag.end(), limit)
        found.append((tag.end(), close.start() if close else limit, close is not None))
    return found


def tagged_answers(text: str) -> list[str | None]:
    """The answer inside each ``<answer>`` tag of ``text`` (tags in code or LaTeX ignored)."""
    masked = mask(text)
    return [_normalize(text[begin:end]) for begin, end, _ in _answer_tags(masked)]


def parse_citations(
    text: str, context: ParseContext | None = None, *, allow_bare: bool = True
) -> ParsedOutput:
    """Turn a free-text reply into pages, regions, facts, citations, answer and task fields.

    Without an ``<answer>`` tag the answer comes from a last "Answer: ..." line, else (when
    ``allow_bare``) from a short reply that has no citations at all; else it stays ``None``.
    """
    text = text if isinstance(text, str) else str(text)
    masked = mask(text)
    found = find_citations(text, masked)
    _pair_sentences(text, masked, found)
    builder = EvidenceBuilder(context or ParseContext())
    spans: list[CitedSpan] = []
    notes: dict[str, Any] = {}
    citation_notes: list[dict[str, Any]] = []
    for index, item in enumerate(found):
        added = builder.add(item.statement)
        spans.append(CitedSpan(item.start, item.end, added.page, added.region))
        if item.notes:
            citation_notes.append({"index": index, "notes": item.notes})
    if citation_notes:
        notes["citation_notes"] = citation_notes
    outside = _blank_spans(masked, found)
    prose = [{"text": m.group(0), "offset": m.start()} for m in _PROSE_PAGE.finditer(outside)]
    if prose:
        notes["non_citations"] = prose
    answer = _answer(text, masked, spans, found, notes, allow_bare)
    return builder.output(
        PARSER,
        answer=answer,
        issues=parse_issues(text, masked, spans),
        evidence_chain=parse_evidence(text, masked, spans),
        verdict=parse_verdict(masked, text),
        notes=notes,
    )
