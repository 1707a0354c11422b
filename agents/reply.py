"""How a reader's final reply ended, and what that makes of the item.

Two facts about a reply decide more than its parse: whether the model stopped by itself or ran
into its token limit (``ChatResponse.finish_reason == "length"``), and how far the reply kept
to the requested format. :func:`note_finish` records the first on the parse;
:func:`settle` turns both into the trajectory's fields:

* ``Trajectory.parse`` (:class:`~scanrag.schemas.ParseStatus`) says how the reply was read:
  ``clean``, ``repaired`` (a cut JSON object closed), ``fallback`` (free text on the JSON path,
  read through the citation grammar), ``bare_text`` (format ignored: the prose is the answer),
  ``ambiguous`` (two or more different final answers) or ``none``;
* ``Trajectory.status`` becomes ``truncated`` when the reply hit the token limit before it gave
  any answer (no answer, verdict, issue or evidence chain), and ``unparsed`` when nothing at
  all could be read or the reply is ambiguous. A cut reply that did give its answer stays
  ``ok`` and is scored, flagged ``metadata["truncated"]`` with a warning on its report page
  (a cut JSON object is closed: ``parse: repaired``; a string that runs into a raw line break,
  ``{ "answer": "2.20 EUR }`` and prose after it, ends at that line).

An ambiguous reply states different final answers: two ``<answer>`` tags that disagree
(``<answer>3</answer> ... <answer>9</answer>``), or on the JSON path an ``answer`` field and
another JSON object's ``answer`` or an answer tag that disagree. Neither is taken (keeping
the first or the last would reward a model that hedges): the answer stays empty, the
candidates are kept in the parse notes (``ambiguous_answers``) and the item is ``unparsed``,
the same on both output paths. Repeating one answer (in any case, with or without a closing
full stop) is not ambiguous.

Prose cut by the token limit is not taken as a bare-text answer: it is a reply that never got
to its point.
"""

from __future__ import annotations

from collections.abc import Iterable

from scanrag.agents.evidence import ParsedOutput
from scanrag.schemas import ParseStatus, Status, Trajectory

LENGTH = "length"
TRUNCATED_MESSAGE = "the reply hit the token limit (max_tokens) before giving an answer"
CUT_AFTER_ANSWER = (
    "the reply hit the token limit (max_tokens) after giving its answer: the answer is "
    "scored, what came after it (evidence, facts) may be cut"
)
AMBIGUOUS = "ambiguous_answers"  # the parse note listing the different answers of a reply


def distinct_answers(answers: Iterable[str | None]) -> list[str]:
    """The different answers among ``answers``, first spelling kept: case, spacing and a
    closing full stop do not make an answer different; empty ones are dropped."""
    seen: dict[str, str] = {}
    for answer in answers:
        if answer is None or not answer.strip():
            continue
        key = " ".join(answer.split()).rstrip(".").casefold()
        seen.setdefault(key, answer)
    return list(seen.values())


def mark_ambiguous(parsed: ParsedOutput, answers: Iterable[str | None]) -> ParsedOutput:
    """When ``answers`` (every final answer the reply states) differ, take none of them and
    note them (in place; returned for chaining)."""
    different = distinct_answers(answers)
    if len(different) > 1:
        parsed.answer = None
        parsed.notes[AMBIGUOUS] = different
    return parsed


def note_finish(parsed: ParsedOutput, finish_reason: str | None) -> ParsedOutput:
    """Record a reply cut by the token limit on ``parsed`` (in place; returned for chaining)."""
    if finish_reason != LENGTH:
        return parsed
    parsed.notes["finish_reason"] = LENGTH
    if parsed.notes.get("answer_source") == "bare_text" and parsed.answer is not None:
        parsed.answer = None
        parsed.notes["answer_source"] = "bare_text_cut"
    return parsed


def answered(parsed: ParsedOutput) -> bool:
    """Whether the reply gave an answer of any task's kind."""
    has_answer = parsed.answer is not None or parsed.verdict is not None
    return has_answer or bool(parsed.issues or parsed.evidence_chain)


def parse_status(parsed: ParsedOutput) -> ParseStatus:
    """How ``parsed`` was read from its reply (see the module docstring)."""
    if parsed.notes.get(AMBIGUOUS):
        return ParseStatus.AMBIGUOUS
    if not parsed.usable:
        return ParseStatus.NONE
    if parsed.notes.get("answer_source") == "bare_text":
        return ParseStatus.BARE_TEXT
    if "->" in parsed.parser:
        return ParseStatus.FALLBACK
    if parsed.notes.get("json_repaired"):
        return ParseStatus.REPAIRED
    return ParseStatus.CLEAN


def settle(trajectory: Trajectory, parsed: ParsedOutput) -> Trajectory:
    """Set ``trajectory.parse`` and, for an item still ``ok``, ``truncated`` or ``unparsed``."""
    trajectory.parse = parse_status(parsed)
    if trajectory.status != Status.OK:
        return trajectory
    different = parsed.notes.get(AMBIGUOUS)
    if different:
        shown = ", ".join(repr(a[:60]) for a in different[:4])
        trajectory.fail(
            Status.UNPARSED,
            f"the reply gives {len(different)} different answers ({shown}); none is taken",
        )
    elif parsed.notes.get("finish_reason") == LENGTH and not answered(parsed):
        trajectory.fail(Status.TRUNCATED, TRUNCATED_MESSAGE)
    elif not parsed.usable:
        trajectory.fail(Status.UNPARSED, f"nothing usable in the reply ({parsed.parser} parser)")
    elif parsed.notes.get("finish_reason") == LENGTH:
        flag_cut_after_answer(trajectory)
    return trajectory


def flag_cut_after_answer(trajectory: Trajectory) -> None:
    """Mark an answered item whose reply the token limit cut (``metadata["truncated"]``, a
    warning on its report page): it is scored, and the cut stays visible."""
    trajectory.metadata["truncated"] = True
    known = list(trajectory.metadata.get("warnings") or [])
    if CUT_AFTER_ANSWER not in known:
        trajectory.metadata["warnings"] = [*known, CUT_AFTER_ANSWER]


def apply_output(trajectory: Trajectory, parsed: ParsedOutput, raw: str) -> Trajectory:
    """Copy a parsed reply into ``trajectory`` (raw text always kept); a reply cut before
    any answer → truncated, an unusable one → unparsed."""
    trajectory.raw_output = raw
    trajectory.pages = list(parsed.pages)
    trajectory.regions = list(parsed.regions)
    trajectory.facts = list(parsed.facts)
    trajectory.answer = parsed.answer
    trajectory.citations = list(parsed.citations)
    trajectory.evidence_chain = list(parsed.evidence_chain)
    trajectory.issues = list(parsed.issues)
    trajectory.verdict = parsed.verdict
    trajectory.metadata["parser"] = parsed.parser
    if parsed.notes:
        trajectory.metadata["parse_notes"] = parsed.notes
    return settle(trajectory, parsed)
