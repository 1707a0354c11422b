"""Notes: what one reading step found, rendered for a later step to build on.

Notes are rendered from the parsed reply (not the raw text), so a JSON reply and a free-text
reply give the same notes: one cited sentence per line in the canonical citation grammar,
candidate issues, anchors, and the tentative answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from scanrag.agents.evidence import ParsedOutput, format_citation
from scanrag.schemas import Citation, Region


def _cite(c: Citation, primary_id: str | None) -> str:
    if c.page is None:
        return ""
    cite = format_citation(c.page, c.doc_page, c.bbox)
    if c.doc_id and c.doc_id != primary_id:
        cite = cite[:-1] + f', doc="{c.doc_id}"]'
    return cite


def _region_cite(region: Region) -> str:
    return format_citation(region.page, None, region.bbox.as_list())


def render_notes(
    parsed: ParsedOutput,
    empty: str = "(nothing relevant on these pages)",
    primary_id: str | None = None,
) -> str:
    """One line per cited statement, issue, anchor, verdict and tentative answer."""
    lines: list[str] = []
    for c in parsed.citations:
        if (
            c.sentence
            and c.page is not None
            and (c.valid or c.reason is None or "bbox" in c.reason)
        ):
            lines.append(f"- {c.sentence} {_cite(c, primary_id)}")
    for issue in parsed.issues:
        cites = " ".join(_region_cite(r) for r in issue.locations)
        family = f"[{issue.family}] " if issue.family else ""
        lines.append(f"- Possible error {family}{issue.description} {cites}".rstrip())
        lines.extend(f"    reasoning: {step}" for step in issue.reasoning_steps)
    for pair in parsed.evidence_chain:
        page = f" (page {pair.page})" if pair.page else ""
        lines.append(f"- Anchor {pair.anchor}{page}: {pair.text}")
    if parsed.verdict is not None:
        lines.append(f"- Verdict so far: {'yes' if parsed.verdict else 'no'}")
    if parsed.answer:
        lines.append(f"- Tentative answer: {parsed.answer}")
    return "\n".join(lines) if lines else empty


def notes_section(blocks: Sequence[tuple[Sequence[int], str]]) -> str:
    """Notes of several steps under headers naming their pages."""
    out = []
    for pages, text in blocks:
        label = ", ".join(str(p) for p in pages) or "none"
        out.append(f"--- Notes from page(s) {label} ---\n{text}")
    return "\n\n".join(out) + ("\n\n" if out else "")


def trim_blocks(
    blocks: Sequence[tuple[Sequence[int], str]], limit: int | None
) -> list[tuple[Sequence[int], str]]:
    """Each block's notes cut to ``limit`` characters (marked ``[...]``); ``None`` keeps all."""
    if limit is None:
        return list(blocks)
    return [
        (pages, text[:limit] + " [...]" if len(text) > limit else text) for pages, text in blocks
    ]


def next_limit(blocks: Sequence[tuple[Sequence[int], str]], limit: int | None) -> int:
    """The per-block limit after a context overflow: half the previous one (or of the
    longest block), never below 80 characters."""
    longest = max((len(text) for _, text in blocks), default=0)
    return max(80, (limit or longest) // 2)
