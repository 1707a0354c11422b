"""Task tags of the free-text reply: issues, evidence-chain links and verify verdicts.

The citation grammar of spec §1 covers question answering. The other tasks add tags around it:

* ``<issue family="CF"> statement with citations ... Reasoning: 1. ... 2. ... </issue>``
  (ScholScan error detection: description, evidence locations, reasoning steps);
* ``<evidence anchor="Fig. 2" page="4">the text span it supports</evidence>``, in chain order
  (SIN-Bench find / chain_qa / summary);
* ``<verdict>yes</verdict>`` (SIN-Bench verify).

All positions refer to the masked text, so tags inside code or LaTeX are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scanrag.parsing import verdicts
from scanrag.schemas import EvidencePair, Region, ReportedIssue

_ISSUE = re.compile(
    r"<\s*issue\b([^<>]*)>([\s\S]*?)(?:<\s*/\s*issue\s*>|(?=<\s*(?:issue|answer)\b)|$)", re.I
)
_EVIDENCE = re.compile(r"<\s*evidence\b([^<>]*)>([\s\S]*?)<\s*/\s*evidence\s*>", re.I)
_VERDICT = re.compile(r"<\s*verdict\s*>\s*([^<]*?)\s*<\s*/\s*verdict\s*>", re.I)
_ATTR = re.compile(
    r"([A-Za-z_]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|“([^”]*)”|([^>]*?))(?=\s+[A-Za-z_]+\s*=|\s*/?$)"
)
_REASONING = re.compile(r"^\s*[*_]*reasoning[*_]*\s*:", re.I | re.M)
_STEP_MARK = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|step\s*\d+\s*[:.)])\s*", re.I)


@dataclass(frozen=True)
class CitedSpan:
    """A citation found in the reply: its span and what it contributed."""

    start: int
    end: int
    page: int | None
    region: Region | None


def attributes(text: str) -> dict[str, str]:
    """Attributes of a tag (``family="CF" page=3``), keys lower-cased; tolerant of quoting."""
    found: dict[str, str] = {}
    for match in _ATTR.finditer(text.strip()):
        value = next((g for g in match.groups()[1:] if g is not None), "")
        found[match.group(1).lower()] = value.strip()
    return found


def strip_spans(text: str, offset: int, spans: Sequence[CitedSpan]) -> str:
    """``text`` (starting at ``offset``) with the citation spans removed, spaces collapsed."""
    pieces: list[str] = []
    cursor = 0
    for span in spans:
        s, e = span.start - offset, span.end - offset
        if e <= 0 or s >= len(text):
            continue
        pieces.append(text[cursor : max(cursor, s)])
        cursor = max(cursor, e)
    pieces.append(text[cursor:])
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s+", " ", "".join(pieces))).strip()


def _inside(spans: Sequence[CitedSpan], start: int, end: int) -> list[CitedSpan]:
    return [s for s in spans if start <= s.start < end]


def canonical_text(text: str) -> str:
    """Issue descriptions and anchor passages in one form whichever output path wrote them:
    whitespace collapsed, one closing full stop dropped (an ellipsis stays)."""
    cleaned = re.sub(r"\s+", " ", text).strip()
    if cleaned.endswith(".") and not cleaned.endswith(".."):
        cleaned = cleaned[:-1].rstrip()
    return cleaned


def parse_issues(text: str, masked: str, spans: Sequence[CitedSpan]) -> list[ReportedIssue]:
    issues: list[ReportedIssue] = []
    for match in _ISSUE.finditer(masked):
        body_start, body_end = match.span(2)
        inner = _inside(spans, body_start, body_end)
        split = _REASONING.search(masked, body_start, body_end)
        head_end = split.start() if split else body_end
        description = canonical_text(strip_spans(text[body_start:head_end], body_start, inner))
        steps: list[str] = []
        if split:
            tail = text[split.end() : body_end]
            steps = _steps(strip_spans_keep_lines(tail, split.end(), inner))
        family = attributes(text[match.start(1) : match.end(1)]).get("family", "").upper()
        if not description and not inner and not steps:
            continue
        issues.append(
            ReportedIssue(
                description=description,
                family=family or None,
                pages=sorted({s.page for s in inner if s.page is not None}),
                locations=[s.region for s in inner if s.region is not None],
                reasoning_steps=[s for s in steps if s],
            )
        )
    return issues


def strip_spans_keep_lines(text: str, offset: int, spans: Sequence[CitedSpan]) -> str:
    """Like ``strip_spans`` but keeps line breaks (reasoning steps are one per line)."""
    return "\n".join(
        strip_spans(line, offset + pos, spans) for line, pos in _lines_with_offsets(text)
    )


def _lines_with_offsets(text: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    pos = 0
    for line in text.split("\n"):
        out.append((line, pos))
        pos += len(line) + 1
    return out


def _steps(text: str) -> list[str]:
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) == 1 and ";" in lines[0]:
        lines = lines[0].split(";")
    return [_STEP_MARK.sub("", line).strip() for line in lines]


def parse_evidence(text: str, masked: str, spans: Sequence[CitedSpan]) -> list[EvidencePair]:
    chain: list[EvidencePair] = []
    for match in _EVIDENCE.finditer(masked):
        attrs = attributes(text[match.start(1) : match.end(1)])
        body_start, body_end = match.span(2)
        inner = _inside(spans, body_start, body_end)
        anchor = attrs.get("anchor") or attrs.get("figure") or attrs.get("id") or ""
        page = _int(attrs.get("page"))
        if page is None:
            page = next((s.page for s in inner if s.page is not None), None)
        span_text = canonical_text(strip_spans(text[body_start:body_end], body_start, inner))
        if anchor or span_text:
            chain.append(EvidencePair(anchor=anchor, text=span_text, page=page))
    return chain


def parse_verdict(masked: str, text: str) -> bool | None:
    """The decision of the last ``<verdict>`` tag (``masked`` locates it, ``text`` reads it)."""
    matches = list(_VERDICT.finditer(masked))
    if not matches:
        return None
    return verdicts.parse_verdict(text[matches[-1].start(1) : matches[-1].end(1)])


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    digits = value.strip().strip("\"'")
    if digits.isdigit() and int(digits) >= 1:
        return int(digits)
    return None
